"""A real `jupyter server` subprocess with the extension, for crash, kernel and benchmark tests.

Why a subprocess: only a real process can be SIGKILLed or SIGTERMed and started
again over the same state dir, which is what a restart really is.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

import httpx
from tornado.websocket import websocket_connect

TOKEN = "hermes-test-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class JupyterServerProcess:
    """Start, stop, kill and restart a jupyter server over one state dir."""

    def __init__(
        self,
        root: Path,
        *,
        base_url: str = "/a%40b/",
        token_delay: float = 0.01,
        extra_args: list[str] | None = None,
        env: dict[str, str] | None = None,
        person_token: bool = True,
    ) -> None:
        self.root = root
        self.state_dir = root / "hermes-state"
        self.notebooks = root / "notebooks"
        self.notebooks.mkdir(parents=True, exist_ok=True)
        self.base_url = base_url
        self.token_delay = token_delay
        self.extra_args = extra_args or []
        self.env = env or {}
        #: Whether the server token also acts as a person on the hermes routes (listed in person_token_sha256),
        #: as an API client holding a person's token would: tests answer approvals with it.
        self.person_token = person_token
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = root / "server.log"

    token = TOKEN

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_url}"

    @property
    def root_dir(self) -> Path:
        """The server's contents root (where notebooks go)."""
        return self.notebooks

    @property
    def runtime_dir(self) -> Path:
        return self.root / "runtime"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kernel_env(self) -> dict[str, str]:
        """The environment for a kernel this server did not start (docs/notebook.md, first choice)."""
        return {**self._env(), "HERMES_JUPYTER_URL": self.url, "HERMES_JUPYTER_TOKEN": TOKEN}

    def _env(self) -> dict[str, str]:
        """Every directory the server touches lives under `root`; no hermes variable leaks in from outside."""
        env = {
            **os.environ, "HERMES_HOME": str(self.root / "hermes-home"), "JUPYTER_RUNTIME_DIR": str(self.runtime_dir),
            "JUPYTER_CONFIG_DIR": str(self.root / "jupyter-config"), "HERMES_JUPYTER_STATE_DIR": str(self.state_dir),
        }
        for leak in ("HERMES_JUPYTER_URL", "HERMES_JUPYTER_TOKEN", "HERMES_JUPYTER_SERVER_URL", "HERMES_JUPYTER_SERVER_TOKEN"):
            env.pop(leak, None)
        return {**env, **self.env}

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"token {TOKEN}"}, timeout=30)

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """Call `hermes/api/<path>` and return the JSON (raises on HTTP errors)."""
        with self.http() as client:
            response = client.request(method, "hermes/api/" + path, **kwargs)
            response.raise_for_status()
            return response.json()

    def server_args(self) -> list[str]:
        """The `jupyter server` command-line options of this server (without the program)."""
        args = [
            "--no-browser", f"--port={self.port}", "--ip=127.0.0.1",
            f"--ServerApp.token={TOKEN}", f"--ServerApp.base_url={self.base_url}",
            f"--ServerApp.root_dir={self.notebooks}", "--ServerApp.port_retries=0",
            f"--HermesJupyter.state_dir={self.state_dir}", f"--DemoAgent.token_delay={self.token_delay}",
            "--HermesJupyter.drain_timeout=2", *self.extra_args,
        ]
        if self.person_token:
            args.append(f"--HermesJupyter.person_token_sha256={hashlib.sha256(TOKEN.encode()).hexdigest()}")
        if os.geteuid() == 0:
            args.append("--allow-root")
        return args

    def start(self, timeout_s: float = 60) -> JupyterServerProcess:
        args = [sys.executable, "-m", "jupyter_server", *self.server_args()]
        env = self._env()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root
        )
        log.close()
        proc = self.proc
        self.wait_ready(timeout_s, exited=lambda: proc.poll() is not None)
        return self

    def wait_ready(self, timeout_s: float, *, exited: Callable[[], bool], poll_s: float = 0.1) -> None:
        """Until the API answers; raises with the log's tail if the server exits or stays silent."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if exited():
                raise RuntimeError(f"jupyter server exited: {self.log_path.read_text()[-3000:]}")
            try:
                if self.get("sessions").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(poll_s)
        raise TimeoutError(f"jupyter server did not answer: {self.log_path.read_text()[-3000:]}")

    def signal(self, sig: int, timeout_s: float = 30) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        self.proc = None
        return code

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.signal(signal.SIGTERM)
        self.proc = None

    def restart(self) -> JupyterServerProcess:
        self.stop()
        return self.start()

    # -- HTTP ---------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return httpx.request(
            method, self.url + "hermes/api/" + path, params=params or None,
            headers={"Authorization": f"token {TOKEN}"}, json=body, timeout=30,
        )

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.request("GET", path, **params)

    def post(self, path: str, body: Any = None) -> httpx.Response:
        return self.request("POST", path, body if body is not None else {})

    def jupyter(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """The server's own API (kernels, contents) under the same base_url."""
        return httpx.request(method, self.url + path, headers={"Authorization": f"token {TOKEN}"}, json=body, timeout=30)

    def new_session(self, **body: Any) -> str:
        response = self.post("sessions", body)
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    def start_run(self, session_id: str, message: str, **extra: Any) -> str:
        response = self.post(f"sessions/{session_id}/runs", {"message": message, **extra})
        assert response.status_code == 202, response.text
        return str(response.json()["run_id"])

    async def open_stream(self, run_id: str, after_seq: int = 0) -> Any:
        ws_url = self.url.replace("http://", "ws://") + f"hermes/api/runs/{quote(run_id)}/stream?after_seq={after_seq}"
        from tornado.httpclient import HTTPRequest

        return await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {TOKEN}"}))

    async def read_rows(self, ws: Any, limit: int | None = None, timeout_s: float = 30) -> list[dict[str, Any]]:
        """Journal rows (heartbeats and the final settled message skipped) until `limit` rows or the socket closes."""
        import asyncio

        rows: list[dict[str, Any]] = []
        while limit is None or len(rows) < limit:
            message = await asyncio.wait_for(ws.read_message(), timeout_s)
            if message is None:
                break
            data = json.loads(message)
            if "event_id" in data:  # journal lines have it; heartbeats and the settled message do not
                rows.append(data)
        return rows
