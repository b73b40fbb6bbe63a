"""`JupyterServerProcess` whose lives are forked by `server_zygote.py`: the same server, started in a fraction of the time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from ..server_process import JupyterServerProcess

#: Only our extension: the others' start-up work is not what a crash loop exercises.
ONLY_HERMES = {"ServerApp": {"jpserver_extensions": {
    "hermes_jupyter": True, "jupyterlab": False, "jupyter_lsp": False, "jupyter_server_terminals": False,
    "notebook_shim": False, "jupyter_server_ydoc": False, "jupyter_collaboration": False, "nbclassic": False,
}}}


class Zygote:
    """One pre-imported parent process that forks server children on request."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("server_zygote.py"))], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, cwd=cwd, env=env, text=True,
        )

    def fork(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env, "cwd": str(cwd), "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        return int(json.loads(self.proc.stdout.readline())["pid"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class ForkedServer(JupyterServerProcess):
    """A server over one state dir whose every life is a forked child of the zygote; `pid` is the live one."""

    def __init__(self, root: Path, zygote: Zygote, **kwargs: object) -> None:
        super().__init__(root, **kwargs)  # type: ignore[arg-type]
        self.zygote = zygote
        self.pid: int | None = None
        self._client: httpx.Client | None = None
        config = root / "jupyter-config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "jupyter_server_config.json").write_text(json.dumps(ONLY_HERMES))

    def spawn(self) -> int:
        self.pid = self.zygote.fork(self.server_args(), self._env(), self.root, self.log_path)
        return self.pid

    def request(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        """One kept-alive client per life (a new client per request costs more than the request)."""
        if self._client is None:
            self._client = httpx.Client(headers={"Authorization": f"token {self.token}"}, timeout=30)
        return self._client.request(method, self.url + "hermes/api/" + path, params=params or None, json=body)

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def start(self, timeout_s: float = 60) -> ForkedServer:
        self.spawn()
        self.wait_ready(timeout_s, exited=lambda: not self.alive(), poll_s=0.05)
        return self

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        """SIGKILL the live server and wait until it is gone (the zygote reaps it)."""
        assert self.pid is not None
        self._drop_client()
        os.kill(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.pid = None

    def stop(self) -> None:
        self._drop_client()
        if self.alive():
            assert self.pid is not None
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.alive():
                self.kill()
        self.pid = None
