"""JupyterLab started from the Binder venv, and a notebook run with nbclient on a kernel it started.

On Binder the user opens the notebook in JupyterLab and the server starts its kernel, which is
how the magic finds the server. So the kernel here is started the same way (a notebook session
over REST), and nbclient drives it through its connection file instead of starting one itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import nbformat
from jupyter_client.asynchronous.client import AsyncKernelClient
from nbclient import NotebookClient

from ..server_process import free_port
from .build import BinderEnv

TOKEN = "binder-test-token"


class BinderLab:
    """`jupyter lab` from the Binder venv, rooted at the repository copy as on Binder, HOME a scratch dir."""

    def __init__(self, binder: BinderEnv, scratch: Path, *, base_url: str = "/binder/",
                 extra_args: list[str] | None = None) -> None:
        self.binder = binder
        self.extra_args = extra_args or []
        self.home = scratch / "home"
        self.runtime_dir = scratch / "runtime"
        self.log_path = scratch / "lab.log"
        self.base_url = base_url
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_url}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {TOKEN}"}

    def start(self, timeout_s: float = 90) -> BinderLab:
        self.home.mkdir(parents=True, exist_ok=True)
        args = [str(self.binder.bin / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
                "--ServerApp.port_retries=0", f"--ServerApp.token={TOKEN}", f"--ServerApp.base_url={self.base_url}",
                f"--ServerApp.root_dir={self.binder.repo_dir}", *self.extra_args]
        if os.geteuid() == 0:
            args.append("--allow-root")
        env = self.binder.env(HOME=str(self.home), JUPYTER_RUNTIME_DIR=str(self.runtime_dir))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(args, cwd=self.binder.repo_dir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {self.log_tail()}")
            try:
                if self.get("api/status").status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"jupyter lab did not answer: {self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def log_tail(self, n_chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-n_chars:] if self.log_path.exists() else ""

    def request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, self.url + path, json=body, headers=self.headers, timeout=60)

    def get(self, path: str) -> httpx.Response:
        return self.request("GET", path)


class ServerKernel:
    """The kernel manager nbclient sees: the kernel is the server's, so nbclient neither starts nor stops it."""

    has_kernel = True

    def __init__(self, lab: BinderLab, kernel_id: str, kernel_name: str) -> None:
        self.lab = lab
        self.kernel_id = kernel_id
        self.kernel_name = kernel_name

    async def interrupt_kernel(self) -> None:
        self.lab.request("POST", f"api/kernels/{self.kernel_id}/interrupt")


async def execute_notebook(lab: BinderLab, rel_path: str, timeout_s: int = 120) -> nbformat.NotebookNode:
    """Open `rel_path` as JupyterLab does (a notebook session), run every cell through nbclient, return it."""
    nb = nbformat.read(lab.binder.repo_dir / rel_path, as_version=4)  # type: ignore[no-untyped-call]
    kernel_name = nb.metadata.get("kernelspec", {}).get("name", "python3")
    response = lab.request("POST", "api/sessions", {"path": rel_path, "name": Path(rel_path).name,
                                                    "type": "notebook", "kernel": {"name": kernel_name}})
    assert response.status_code == 201, response.text
    session_id, kernel_id = response.json()["id"], response.json()["kernel"]["id"]
    kc = AsyncKernelClient(connection_file=str(lab.runtime_dir / f"kernel-{kernel_id}.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        client = NotebookClient(nb, km=ServerKernel(lab, kernel_id, kernel_name),  # type: ignore[arg-type]
                                timeout=timeout_s, kernel_name=kernel_name,
                                resources={"metadata": {"path": str((lab.binder.repo_dir / rel_path).parent)}})
        client.kc = kc
        return await client.async_execute()
    finally:
        kc.stop_channels()
        lab.request("DELETE", f"api/sessions/{session_id}")
