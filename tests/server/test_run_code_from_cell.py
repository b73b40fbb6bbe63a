"""run_code from a `%%hermes` cell, through a real server, the kernel it started and the scripted model.

The cell keeps its kernel busy for the whole turn; the approved code runs beside it (a kernel
subshell) and its output reaches the model, and nothing is left to run after the cell ends.
A person answers the approval from the browser (cookie + XSRF). docs/agent-reach.md, "A busy kernel".
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.asynchronous.client import AsyncKernelClient

from .principals_stack import XSRF, Stack, principals_stack, resolved

pytestmark = pytest.mark.asyncio

#: Well under the stack's run_timeout (30 s), which is how long a run_code queued behind the cell used to wait.
CELL_DONE_S = 25.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with principals_stack(tmp_path_factory.mktemp("run_code_from_cell")) as stack:
        for name in stack.kernels:
            asyncio.run(stack.run_in(name, "%load_ext hermes_jupyter"))
        yield stack


class HermesCell:
    """A `%%hermes --new` cell (or `head`, e.g. `--session NAME`) executing in the notebook's kernel, as
    JupyterLab would send it."""

    def __init__(self, stack: Stack, notebook: str, prompt: str, head: str = "--new") -> None:
        self.stack, self.notebook = stack, notebook
        self.before = self._active()
        self.kc: AsyncKernelClient = stack._client(notebook, shell_only=True)
        self.msg_id = self.kc.execute(f"%%hermes {head}\n{prompt}", silent=False, store_history=False)

    def _active(self) -> set[str]:
        with self.stack.person() as http:
            rows = http.get("sessions").json()
        return {r["active_stream_id"] for r in rows
                if r.get("active_stream_id") and r.get("notebook_path") == self.notebook}

    def run_id(self, timeout_s: float = 30) -> str:
        deadline = time.monotonic() + timeout_s
        while not (started := self._active() - self.before):
            assert time.monotonic() < deadline, "the cell started no run"
            time.sleep(0.05)
        (run_id,) = started
        return run_id

    async def finished(self, timeout_s: float) -> dict[str, Any]:
        try:
            while True:
                msg: dict[str, Any] = await self.kc.get_shell_msg(timeout=timeout_s)
                if msg["parent_header"].get("msg_id") == self.msg_id:
                    return msg
        finally:
            self.kc.stop_channels()


def _allow_as_a_browser(stack: Stack, run_id: str) -> dict[str, Any]:
    """Answer the run's approval as a signed-in person: the login cookie and the XSRF header, no token."""
    pending = stack.pending(run_id)
    with stack.as_token("", stack.browser_cookies(), **{"X-XSRFToken": XSRF}) as browser:
        response = browser.post(f"runs/{run_id}/approvals/{pending['approval_id']}", json={"choice": "allow_once"})
    assert response.status_code == 200, response.text
    return pending


def _tool_results(rows: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    return [(r["payload"]["preview"], r["payload"]["is_error"]) for r in rows if r["event"] == "tool_complete"]


async def test_run_code_from_a_hermes_cell_runs_after_approval_and_the_model_gets_its_output(stack: Stack) -> None:
    cell = HermesCell(stack, "a.ipynb", "use the run_code tool with " + json.dumps(
        {"code": "from_cell = 6 * 7\nprint(from_cell)"}))
    run_id = cell.run_id()
    pending = _allow_as_a_browser(stack, run_id)
    assert (await cell.finished(CELL_DONE_S))["content"]["status"] == "ok"
    rows = stack.finish(run_id)
    assert [p["choice"] for p in resolved(rows, pending["approval_id"])] == ["allow_once"]
    assert _tool_results(rows) == [("The code ran.\n[stdout] 42", False)]
    tool_messages = [m for m in stack.stub.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == "The code ran.\n[stdout] 42"  # the model read the output
    assert await stack.value_in("a.ipynb", "from_cell") == 42


async def test_list_variables_then_run_code_in_one_turn_runs_once_and_never_after_the_cell(stack: Stack) -> None:
    """The subshell probe left the kernel reading idle; the code then queued behind the cell, the cell
    hung until run_timeout, and the code ran after the cell ended, its output shown nowhere."""
    marker = Path(stack.server.notebooks) / "ran.txt"
    code = f"with open({str(marker)!r}, 'a') as f:\n    f.write('ran\\n')\nprint('appended')"
    calls = [["list_variables", {}], ["run_code", {"code": code}]]
    await stack.run_in("b.ipynb", "planted = 7")
    cell = HermesCell(stack, "b.ipynb", "use these tools in turn: " + json.dumps(calls))
    run_id = cell.run_id()
    _allow_as_a_browser(stack, run_id)
    assert (await cell.finished(CELL_DONE_S))["content"]["status"] == "ok"
    rows = stack.finish(run_id)
    (listing, run) = _tool_results(rows)
    assert not listing[1] and "planted: int = 7" in listing[0]
    assert run == ("The code ran.\n[stdout] appended", False)
    assert marker.read_text() == "ran\n"
    await asyncio.sleep(1.5)  # nothing is left queued to run later
    assert marker.read_text() == "ran\n"
