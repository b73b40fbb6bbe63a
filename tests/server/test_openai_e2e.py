"""The `openai` backend end to end: a real `jupyter server` process, the scripted model stub, a real kernel.

The stub (a thread in this process) plays the model: the last user message picks its script,
`use the NAME tool with {json}` makes it call one of our notebook tools. The server runs with
`--HermesJupyter.backend=openai` and `OPENAI_BASE_URL` pointing at the stub, and a session is
bound to a kernel the server itself started (`POST /api/kernels`). What the kernel holds is
checked with a client of the test's own on the kernel's connection file, never through our tools.
"""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import nbformat.v4
import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient

from ..fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from ..server_process import JupyterServerProcess

pytestmark = pytest.mark.asyncio

# Short tool timeouts for the test (the server wires the notebook tools into the openai backend itself).
TOOLS_CONFIG = """
c = get_config()  # noqa: F821 - provided by traitlets when it runs this file
c.NotebookTools.run_timeout = 30.0
c.NotebookTools.approval_timeout = 60.0
"""

NOTEBOOK = "analysis.ipynb"
PLANTED_KEY = "sk-live-" + "9e8d7c6b5a4f3e2d1c0b"
PLANTED_ENV = "planted-env-value-6093"


class Stack:
    """The stub model, the server and one kernel the server started."""

    def __init__(self, stub: OpenAIStubServer, server: JupyterServerProcess, kernel_id: str) -> None:
        self.stub = stub
        self.server = server
        self.kernel_id = kernel_id

    def start_run(self, session_id: str, message: str) -> str:
        return self.server.start_run(session_id, message, notebook_path=NOTEBOOK, cell_id="c-load",
                                     kernel_id=self.kernel_id)

    def events(self, run_id: str) -> tuple[list[dict[str, Any]], bool]:
        response = self.server.get(f"runs/{run_id}/events", after_seq=0)
        assert response.status_code == 200, response.text
        body = response.json()
        return body["events"], bool(body["terminal"])

    def wait_for(self, run_id: str, predicate: Any, timeout_s: float = 60) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            rows, _ = self.events(run_id)
            if predicate(rows):
                return rows
            time.sleep(0.05)
        raise TimeoutError(f"run {run_id} never matched; rows: {self.events(run_id)[0]}")

    def finish(self, run_id: str) -> list[dict[str, Any]]:
        return self.wait_for(run_id, lambda rows: bool(rows) and rows[-1]["terminal"])

    def pending_approval(self, run_id: str) -> dict[str, Any]:
        rows = self.wait_for(run_id, lambda rows: any(_is_pending(r) for r in rows))
        return next(r["payload"] for r in rows if _is_pending(r))

    def answer(self, run_id: str, approval_id: str, choice: str) -> None:
        response = self.server.post(f"runs/{run_id}/approvals/{approval_id}", {"choice": choice})
        assert response.status_code == 200, response.text

    async def kernel_value(self, expression: str) -> Any:
        """Evaluate `expression` in the kernel with a client of the test's own (silently)."""
        kc = AsyncKernelClient(connection_file=str(self.server.root / "runtime" / f"kernel-{self.kernel_id}.json"))
        kc.load_connection_file()
        kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
        try:
            msg_id = kc.execute("", silent=True, user_expressions={"v": expression})
            while True:
                reply = await kc.get_shell_msg(timeout=30)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
        finally:
            kc.stop_channels()
        value = reply["content"]["user_expressions"]["v"]
        assert value["status"] == "ok", value
        return ast.literal_eval(value["data"]["text/plain"])


def _is_pending(row: dict[str, Any]) -> bool:
    return bool(row["event"] == "approval" and row["payload"].get("status") == "pending")


def _payloads(rows: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [r["payload"] for r in rows if r["event"] == event]


def _text(rows: list[dict[str, Any]]) -> str:
    return "".join(p["text"] for p in _payloads(rows, "token"))


def _write_notebook(root: Path) -> None:
    new_notebook: Any = nbformat.v4.new_notebook
    new_code_cell: Any = nbformat.v4.new_code_cell
    new_output: Any = nbformat.v4.new_output
    write: Any = nbformat.write
    cells = [
        new_code_cell("prices = [3, 5, 8]\nprint(sum(prices))", id="c-load", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="16\n")]),
    ]
    write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}),
          root / NOTEBOOK)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("openai-e2e")
    config = root / "tools_config.py"
    config.write_text(TOOLS_CONFIG)
    with OpenAIStubServer(slow_chunk_delay_s=0.1) as stub:
        server = JupyterServerProcess(
            root, extra_args=["--HermesJupyter.backend=openai", f"--config={config}"],
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_MODEL": STUB_MODEL, "OPENAI_API_KEY": "",
                 "PLANTED_SERVICE_TOKEN": PLANTED_ENV},  # a server secret its kernels inherit
        )
        _write_notebook(server.notebooks)
        server.start()
        try:
            response = server.jupyter("POST", "api/kernels", {"name": "python3"})
            assert response.status_code == 201, response.text
            kernel_id = response.json()["id"]
            yield Stack(stub, server, kernel_id)
            server.jupyter("DELETE", f"api/kernels/{kernel_id}")
        finally:
            server.stop()


@pytest.fixture
def session(stack: Stack) -> str:
    return stack.server.new_session(title="e2e", backend="openai", notebook_path=NOTEBOOK, kernel_id=stack.kernel_id)


async def test_a_turn_streams_over_the_websocket(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, "count to 5")
    ws = await stack.server.open_stream(run_id)
    try:
        rows = await stack.server.read_rows(ws)
    finally:
        ws.close()
    assert [r["event"] for r in rows] == ["token"] * 5 + ["usage", "done"]
    assert _text(rows) == "1 2 3 4 5"
    assert [r["seq"] for r in rows] == list(range(1, 8))
    usage = rows[-2]["payload"]
    assert usage["model"] == STUB_MODEL and usage["output_tokens"] > 0 and usage["duration_s"] >= 0
    sent = stack.stub.chat_requests()[-1]
    assert sent["model"] == STUB_MODEL and sent["stream"] is True
    assert {t["function"]["name"] for t in sent["tools"]} == {  # Propose, the default autonomy: no run_cell
        "read_notebook", "list_variables", "inspect_variable", "run_code", "propose_cell", "insert_cell", "edit_cell",
        "delete_cell"}


async def test_the_model_reads_the_bound_notebook_without_asking(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, "use the read_notebook tool with {}")
    rows = stack.finish(run_id)
    assert rows[-1]["event"] == "done"
    assert _payloads(rows, "approval") == []
    (tool,), (complete,) = _payloads(rows, "tool"), _payloads(rows, "tool_complete")
    assert tool["name"] == "read_notebook" and complete["tid"] == tool["tid"]
    assert not complete["is_error"]
    assert complete["preview"].startswith(f"Notebook {NOTEBOOK}: 1 cells, kernel python3.")
    assert "prices = [3, 5, 8]" in complete["preview"] and "[stdout] 16" in complete["preview"]
    # the tool result went back to the model, which answered with it
    tool_message = [m for m in stack.stub.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "(the cell this conversation was started from)" in tool_message["content"]
    assert "Tool result: Notebook analysis.ipynb" in _text(rows)


async def test_reading_outside_the_root_is_refused(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, 'use the read_notebook tool with {"path": "../hermes-state/x.ipynb"}')
    rows = stack.finish(run_id)
    (complete,) = _payloads(rows, "tool_complete")
    assert complete["is_error"] and "Refused" in complete["preview"]  # a bound session reads only its notebook


async def test_approved_code_runs_in_the_bound_kernel(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, 'use the run_code tool with {"code": "agent_var = 6 * 7\\nprint(agent_var)"}')
    pending = stack.pending_approval(run_id)
    assert pending["kind"] == "code" and pending["command"] == "agent_var = 6 * 7\nprint(agent_var)"
    assert pending["options"] == ["allow_once", "deny"]
    await asyncio.sleep(0.3)
    assert await stack.kernel_value("'agent_var' in globals()") is False  # nothing runs before the click

    stack.answer(run_id, pending["approval_id"], "allow_once")
    rows = stack.finish(run_id)
    assert rows[-1]["event"] == "done"
    statuses = [(p["status"], p.get("choice")) for p in _payloads(rows, "approval")]
    assert statuses == [("pending", None), ("resolved", "allow_once")]
    (complete,) = _payloads(rows, "tool_complete")
    assert not complete["is_error"] and complete["preview"] == "The code ran.\n[stdout] 42"
    assert await stack.kernel_value("agent_var") == 42


async def test_denied_code_never_runs(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, 'use the run_code tool with {"code": "denied_var = 1"}')
    pending = stack.pending_approval(run_id)
    stack.answer(run_id, pending["approval_id"], "deny")
    rows = stack.finish(run_id)
    assert rows[-1]["event"] == "done"
    (complete,) = _payloads(rows, "tool_complete")
    assert complete["is_error"] and complete["preview"] == "Denied by the user: the code was not run."
    assert _payloads(rows, "approval")[-1]["choice"] == "deny"
    assert await stack.kernel_value("'denied_var' in globals()") is False
    # an answered approval cannot be answered again
    again = stack.server.post(f"runs/{run_id}/approvals/{pending['approval_id']}", {"choice": "allow_once"})
    assert again.status_code == 409
    assert await stack.kernel_value("'denied_var' in globals()") is False


async def test_list_variables_shows_what_approved_code_defined(stack: Stack, session: str) -> None:
    run_id = stack.start_run(session, 'use the run_code tool with {"code": "seen_by_model = {\\"a\\": 1}"}')
    stack.answer(run_id, stack.pending_approval(run_id)["approval_id"], "allow_once")
    stack.finish(run_id)
    run_id = stack.start_run(session, "use the list_variables tool with {}")
    rows = stack.finish(run_id)
    (complete,) = _payloads(rows, "tool_complete")
    assert not complete["is_error"] and "seen_by_model: dict len=1 = {'a': 1}" in complete["preview"]


async def test_a_slow_stream_is_cancelled(stack: Stack, session: str) -> None:
    aborted = stack.stub.aborted_streams
    run_id = stack.start_run(session, "count to 200 slowly")
    stack.wait_for(run_id, lambda rows: len(_payloads(rows, "token")) >= 3)
    response = stack.server.post(f"runs/{run_id}/cancel")
    assert response.status_code == 200 and response.json()["cancelled"] is True
    rows = stack.finish(run_id)
    assert rows[-1]["event"] == "cancel" and rows[-1]["terminal_state"] == "interrupted-by-user"
    streamed = _text(rows)
    assert streamed.startswith("1 2 3") and not streamed.endswith("200")
    assert stack.server.get(f"runs/{run_id}").json()["status"] == "cancelled"
    deadline = time.monotonic() + 10
    while stack.stub.aborted_streams == aborted and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert stack.stub.aborted_streams > aborted  # the HTTP stream to the model was closed, not drained
    messages = stack.server.get(f"sessions/{session}").json()["messages"]
    partial, marker = messages[-2:]  # the partial output is kept, then the cancel marker
    assert partial["role"] == "assistant" and partial["content"].startswith("1 2 3")
    assert marker["content"].startswith("**Task cancelled.**")
    # the session stays usable
    rows = stack.finish(stack.start_run(session, "hello"))
    assert _text(rows) == "Hello from the stub model."



async def test_no_planted_secret_reaches_the_model_the_journal_or_the_log(stack: Stack, session: str) -> None:
    """A key in a kernel variable, a server secret in the kernel's environment, the server token and
    the kernel token, all planted in the kernel behind the model's back, then read with every tool."""
    setup = ("import os\napi_token = %r\nenv_seen = 'PLANTED=' + os.environ['PLANTED_SERVICE_TOKEN']\n"
             "copied_server_token = %r\nkernel_token = os.environ['HERMES_JUPYTER_SERVER_TOKEN']\n"
             "env_ref = os.environ" % (PLANTED_KEY, stack.server.token))
    await stack.kernel_value(f"exec({setup!r}, get_ipython().user_ns)")
    kernel_token = await stack.kernel_value("kernel_token")
    assert kernel_token.startswith("hjk_") and await stack.kernel_value("env_seen") == "PLANTED=" + PLANTED_ENV
    planted = (PLANTED_KEY, PLANTED_ENV, stack.server.token, kernel_token)
    before = len(stack.stub.chat_requests())
    rows = []
    for prompt in ("use the list_variables tool with {}",
                   *(f'use the inspect_variable tool with {{"name": "{name}"}}'
                     for name in ("api_token", "env_seen", "copied_server_token", "kernel_token", "env_ref",
                                  "os.environ"))):
        rows += stack.finish(stack.start_run(session, prompt))
    previews = [p["preview"] for p in _payloads(rows, "tool_complete")]
    assert len(previews) == 7 and "api_token: str len=28 = [redacted]" in previews[0]
    assert "process environment" in previews[5] and "is a module" in previews[6]
    sent = json.dumps(stack.stub.chat_requests()[before:])
    journal = json.dumps(rows)
    for secret in planted:
        assert secret not in sent, f"{secret} reached the model"
        assert secret not in journal, f"{secret} was journaled"
    log = stack.server.log()  # jupyter prints its own token at start-up; ours must not add any secret
    assert PLANTED_KEY not in log and PLANTED_ENV not in log and kernel_token not in log
