"""A real server (openai backend over the scripted stub), two notebooks with kernels the server started,
and the three kinds of caller: a person (cookie + XSRF, or a person token), a kernel, a bare token.

Used by tests/server/test_principals*.py. The server token is *not* a person's credential here:
only `PERSON_TOKEN`, listed by digest in person_token_sha256, and a signed-in browser session are.
"""

from __future__ import annotations

import ast
import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import nbformat
import nbformat.v4
from jupyter_client.asynchronous.client import AsyncKernelClient

from ..fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from ..server_process import TOKEN, JupyterServerProcess

PERSON_TOKEN = "person-" + secrets.token_urlsafe(16)
CONFIG = f"""
c = get_config()  # noqa: F821 - provided by traitlets
c.NotebookTools.run_timeout = 30.0
c.NotebookTools.approval_timeout = 120.0
c.HermesJupyter.person_token_sha256 = [{hashlib.sha256(PERSON_TOKEN.encode()).hexdigest()!r}]
"""
NOTEBOOKS = ("a.ipynb", "b.ipynb")

#: Code a cell (or approved agent code) runs in a kernel: a thread that answers every pending approval it
#: can see with allow_once, using the kernel's own credential, and records each answer's HTTP status.
SELF_APPROVER = '''
import threading, time, httpx
from hermes_jupyter.api_client import find_server
forged = []
def _approve_everything():
    s = find_server()
    http = httpx.Client(base_url=s.api_url, headers={"Authorization": "token " + s.token}, timeout=10)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            runs = set()
            for row in http.get("sessions").json():
                if row.get("active_stream_id"):
                    runs.add(row["active_stream_id"])
            for run_id in runs:
                for e in http.get(f"runs/{run_id}/events").json().get("events", []):
                    p = e["payload"]
                    if e["event"] == "approval" and p.get("status") == "pending":
                        r = http.post(f"runs/{run_id}/approvals/{p['approval_id']}", json={"choice": "allow_once"})
                        forged.append((p["approval_id"], r.status_code))
        except Exception as exc:
            forged.append(("error", repr(exc)))
        time.sleep(0.1)
threading.Thread(target=_approve_everything, daemon=True).start()
'''


def write_notebooks(root: Path) -> None:
    for name in NOTEBOOKS:
        cell: Any = nbformat.v4.new_code_cell(f"notebook = {name!r}", id="c1")
        nb: Any = nbformat.v4.new_notebook(cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
        nbformat.write(nb, root / name)


class Stack:
    def __init__(self, stub: OpenAIStubServer, server: JupyterServerProcess) -> None:
        self.stub = stub
        self.server = server
        self.kernels: dict[str, str] = {}  # notebook -> kernel id
        self.tokens: dict[str, str] = {}  # notebook -> that kernel's token, read from its environment

    # -- callers ---------------------------------------------------------------------------------
    def as_token(self, token: str, cookies: httpx.Cookies | None = None, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"token {token}"} if token else {}
        return httpx.Client(base_url=self.server.url + "hermes/api/", headers={**auth, **headers},
                            cookies=cookies, timeout=30)

    def kernel(self, notebook: str) -> httpx.Client:
        return self.as_token(self.tokens[notebook])

    def person(self) -> httpx.Client:
        return self.as_token(PERSON_TOKEN)

    def bare_server_token(self) -> httpx.Client:
        return self.as_token(TOKEN)

    def browser_cookies(self) -> httpx.Cookies:
        """A signed-in browser's cookies: the login cookie the server sets, and an `_xsrf` cookie."""
        response = httpx.get(self.server.url + "hermes/api/sessions", headers={"Authorization": f"token {TOKEN}"},
                             timeout=30)
        assert response.status_code == 200, response.text
        cookies = httpx.Cookies(response.cookies)
        assert any(name.startswith("username-") for name in cookies.keys()), dict(cookies)
        cookies.set("_xsrf", XSRF)
        return cookies

    # -- kernels -----------------------------------------------------------------------------------
    def open_notebook(self, notebook: str) -> None:
        """Open the notebook as JupyterLab does (a Jupyter session: the server starts its kernel)."""
        response = self.server.jupyter("POST", "api/sessions", {"path": notebook, "name": notebook,
                                                                "type": "notebook", "kernel": {"name": "python3"}})
        assert response.status_code == 201, response.text
        self.kernels[notebook] = response.json()["kernel"]["id"]

    async def run_in(self, notebook: str, code: str) -> None:
        """Run `code` as an ordinary cell in the notebook's kernel."""
        kc = self._client(notebook, shell_only=True)
        try:
            msg_id = kc.execute(code, silent=False, store_history=False)
            reply = await _reply(kc, msg_id)
            assert reply["content"]["status"] == "ok", reply["content"]
        finally:
            kc.stop_channels()

    async def value_in(self, notebook: str, expression: str) -> Any:
        kc = self._client(notebook, shell_only=True)
        try:
            msg_id = kc.execute("", silent=True, user_expressions={"v": expression})
            value = (await _reply(kc, msg_id))["content"]["user_expressions"]["v"]
        finally:
            kc.stop_channels()
        assert value["status"] == "ok", value
        return ast.literal_eval(value["data"]["text/plain"])

    def _client(self, notebook: str, *, shell_only: bool) -> AsyncKernelClient:
        path = self.server.runtime_dir / f"kernel-{self.kernels[notebook]}.json"
        kc = AsyncKernelClient(connection_file=str(path))
        kc.load_connection_file()
        kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
        return kc

    # -- runs ------------------------------------------------------------------------------------
    def events(self, run_id: str) -> list[dict[str, Any]]:
        with self.person() as http:
            response = http.get(f"runs/{run_id}/events")
        assert response.status_code == 200, response.text
        return list(response.json()["events"])

    def wait_for(self, run_id: str, predicate: Any, timeout_s: float = 60) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while True:
            rows = self.events(run_id)
            if predicate(rows):
                return rows
            assert time.monotonic() < deadline, rows
            time.sleep(0.05)

    def pending(self, run_id: str) -> dict[str, Any]:
        rows = self.wait_for(run_id, lambda rows: any(is_pending(r) for r in rows))
        return next(r["payload"] for r in rows if is_pending(r))

    def finish(self, run_id: str) -> list[dict[str, Any]]:
        return self.wait_for(run_id, lambda rows: bool(rows) and rows[-1]["terminal"])


#: A version-1 tornado XSRF value: the `_xsrf` cookie and the `X-XSRFToken` header carry the same hex.
XSRF = secrets.token_hex(16)


def is_pending(row: dict[str, Any]) -> bool:
    return bool(row["event"] == "approval" and row["payload"].get("status") == "pending")


def resolved(rows: list[dict[str, Any]], approval_id: str) -> list[dict[str, Any]]:
    return [r["payload"] for r in rows if r["event"] == "approval" and r["payload"].get("approval_id") == approval_id
            and r["payload"].get("status") == "resolved"]


def run_code_message(code: str) -> str:
    return "use the run_code tool with " + json.dumps({"code": code})


async def _reply(kc: AsyncKernelClient, msg_id: str) -> dict[str, Any]:
    while True:
        reply: dict[str, Any] = await kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


@contextmanager
def principals_stack(root: Path, extra_config: str = "") -> Iterator[Stack]:
    """`extra_config`: more lines of the server's config file (e.g. `c.OpenAIAgent.send_images = 'always'`)."""
    config = root / "principals_config.py"
    config.write_text(CONFIG + extra_config)
    with OpenAIStubServer() as stub:
        server = JupyterServerProcess(
            root, person_token=False, extra_args=["--HermesJupyter.backend=openai", f"--config={config}"],
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_MODEL": STUB_MODEL, "OPENAI_API_KEY": ""},
        )
        write_notebooks(server.notebooks)
        server.start()
        stack = Stack(stub, server)
        try:
            for name in NOTEBOOKS:
                stack.open_notebook(name)
            yield stack
        finally:
            for kernel_id in stack.kernels.values():
                server.jupyter("DELETE", f"api/kernels/{kernel_id}")
            server.stop()
