"""run_code while the kernel's main shell is busy (as a `%%hermes` cell keeps it), with real kernels.

A kernel with subshells (ipykernel 7) runs the approved code beside the busy cell, now; a kernel
without them refuses before anyone is asked. Code the kernel does not start in time is withdrawn
and never runs later. docs/agent-reach.md, "A busy kernel".
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from hermes_jupyter.agents.answered import person
from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.tools import NotebookTools
from hermes_jupyter.server import kernel_run
from hermes_jupyter.server.notebook_access import ContentsNotebooks, KernelAccess, ServerNotebookAccess

from ..fakes.no_subshell_kernel import kernel_spec
from ..fakes.recording_sink import RecordingSink
from ..notebook.kernels import started_kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def subshells() -> AsyncIterator[AsyncKernelManager]:
    async with started_kernel(AsyncKernelManager(kernel_name="python3")) as km:
        yield km


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def no_subshells(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AsyncKernelManager]:
    kernels = tmp_path_factory.mktemp("kernels")
    name = kernel_spec(kernels)
    async with started_kernel(AsyncKernelManager(kernel_name=name, kernel_spec_manager=KernelSpecManager(
            kernel_dirs=[str(kernels)]))) as km:
        yield km


class BusyCell:
    """A cell running on the kernel's main shell from a client of its own (what a `%%hermes` cell is)."""

    def __init__(self, km: AsyncKernelManager, seconds: float) -> None:
        self.km = km
        self.kc: AsyncKernelClient = km.client()
        self.kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
        self.msg_id = self.kc.execute(f"import time as _t\n_t.sleep({seconds})\nbusy_cell_done = True")
        self.reply: dict[str, Any] | None = None

    async def running(self) -> bool:
        """Whether the cell has not answered yet (asked without waiting)."""
        try:
            await self.finished(timeout_s=0.01, stop=False)
        except queue.Empty:
            return True
        return False

    async def finished(self, timeout_s: float = 60, stop: bool = True) -> dict[str, Any]:
        while self.reply is None:
            msg = await self.kc.get_shell_msg(timeout=timeout_s)
            if msg["parent_header"].get("msg_id") == self.msg_id:
                self.reply = msg
        if stop:
            self.kc.stop_channels()
        return self.reply


def _tools(root: Path, km: AsyncKernelManager, **traits: Any) -> NotebookTools:
    contents = ContentsNotebooks(AsyncLargeFileManager(root_dir=str(root)), str(root))
    access = ServerNotebookAccess(contents, KernelAccess({"k1": km}.__getitem__))
    traits = {"approval_timeout": 10, "run_timeout": 20, **traits}
    return NotebookTools(access=access, broker=ApprovalBroker(), **traits)


async def _call(tools: NotebookTools, name: str, args: dict[str, Any], run_id: str,
                sink: RecordingSink | None = None, answer: bool = True) -> tuple[str, bool]:
    """Call a tool in run `run_id`, answering its approval (if it asks one) with allow_once as a person."""
    request = TurnRequest(session_id="s1", run_id=run_id, message="hi", history=[],
                          notebook=NotebookBinding(notebook_path=None, cell_id=None, kernel_id="k1"))
    call = asyncio.ensure_future(tools(request, sink or RecordingSink()).call(name, args))
    while answer and not call.done():
        for pending in tools.broker.pending(run_id):
            tools.broker.answer(run_id, pending.approval_id, "allow_once", person("tester"))
        await asyncio.sleep(0.02)
    return await call


def _append(marker: Path) -> str:
    return f"with open({str(marker)!r}, 'a') as f:\n    f.write('ran\\n')\nprint('appended')"


def _lines(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


@pytest.fixture
def busy_state(subshells: AsyncKernelManager) -> Any:
    """The server's view of the kernel (ServerKernelManager.execution_state), set by hand here."""
    yield lambda state: setattr(subshells, "execution_state", state)
    subshells.execution_state = "idle"  # type: ignore[attr-defined]


async def test_approved_code_runs_beside_a_busy_cell_in_a_subshell(
    tmp_path: Path, subshells: AsyncKernelManager, busy_state: Any,
) -> None:
    cell = BusyCell(subshells, 8)
    busy_state("busy")
    tools = _tools(tmp_path, subshells)
    text, is_error = await _call(tools, "run_code", {"code": "beside = 6 * 7\nprint(beside)"}, "run-beside")
    assert (text, is_error) == ("The code ran.\n[stdout] 42", False)
    assert await cell.running()  # the busy cell still runs, untouched
    assert (await cell.finished())["content"]["status"] == "ok"


async def test_list_variables_then_run_code_runs_now_and_never_again_later(
    tmp_path: Path, subshells: AsyncKernelManager, busy_state: Any,
) -> None:
    """The subshell probe makes the kernel read idle while the cell still runs; the code must not
    queue behind the cell (it used to, and ran after the cell ended, its output shown nowhere)."""
    marker = tmp_path / "ran.txt"
    cell = BusyCell(subshells, 6)
    busy_state("busy")
    tools = _tools(tmp_path, subshells, run_timeout=3)
    listing, is_error = await _call(tools, "list_variables", {}, "run-twice")
    assert not is_error, listing
    busy_state("idle")  # what ipykernel's subshell idle makes the server read
    text, is_error = await _call(tools, "run_code", {"code": _append(marker)}, "run-twice")
    assert (text, is_error) == ("The code ran.\n[stdout] appended", False)
    assert await cell.running() and _lines(marker) == 1
    await cell.finished()
    await asyncio.sleep(1.0)
    assert _lines(marker) == 1


async def test_code_past_its_time_in_a_subshell_is_stopped_and_the_busy_cell_is_not(
    tmp_path: Path, subshells: AsyncKernelManager, busy_state: Any,
) -> None:
    cell = BusyCell(subshells, 6)
    busy_state("busy")
    tools = _tools(tmp_path, subshells, run_timeout=1.5)
    code = "import time\nfor _ in range(600):\n    time.sleep(0.05)\nslow_beside = 1"
    text, is_error = await _call(tools, "run_code", {"code": code}, "run-slow-beside")
    assert is_error and text.startswith("The code was still running after 1.5 s and was interrupted.")
    assert "KeyboardInterrupt" in text
    assert (await cell.finished())["content"]["status"] == "ok"  # an interrupt would have stopped the cell


async def test_without_subshells_a_busy_kernel_refuses_before_asking(
    tmp_path: Path, no_subshells: AsyncKernelManager,
) -> None:
    cell = BusyCell(no_subshells, 4)
    no_subshells.execution_state = "busy"  # type: ignore[attr-defined]
    sink = RecordingSink()
    try:
        tools = _tools(tmp_path, no_subshells, approval_timeout=0.5)
        text, is_error = await _call(tools, "run_code", {"code": "refused = 1"}, "run-refused", sink, answer=False)
    finally:
        no_subshells.execution_state = "idle"  # type: ignore[attr-defined]
    assert is_error and text.startswith("The kernel is busy running a cell") and "Nothing was run" in text
    assert sink.payloads("approval") == []  # nobody was asked
    await cell.finished()


async def test_without_subshells_an_idle_kernel_runs_the_code_on_its_main_shell(
    tmp_path: Path, no_subshells: AsyncKernelManager,
) -> None:
    text, is_error = await _call(_tools(tmp_path, no_subshells), "run_code", {"code": "print(2 + 3)"}, "run-main")
    assert (text, is_error) == ("The code ran.\n[stdout] 5", False)


async def test_code_queued_behind_a_cell_is_withdrawn_and_never_runs_later(
    tmp_path: Path, no_subshells: AsyncKernelManager, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel read idle, but a cell was ahead of the code on the main shell (a race): the code is
    reported not run, and when the cell ends, the gate ahead of it stops it from running."""
    monkeypatch.setattr(kernel_run, "START_TIMEOUT_S", 1.0)
    monkeypatch.setattr(kernel_run, "START_MARGIN_S", 0.5)
    marker = tmp_path / "late.txt"
    cell = BusyCell(no_subshells, 4)
    text, is_error = await _call(_tools(tmp_path, no_subshells), "run_code", {"code": _append(marker)}, "run-late")
    assert is_error and text.startswith("The code was not run") and "will not run later" in text
    assert await cell.running()  # reported while the cell still ran
    assert (await cell.finished())["content"]["status"] == "ok"
    await asyncio.sleep(1.5)
    assert _lines(marker) == 0
    text, is_error = await _call(_tools(tmp_path, no_subshells), "run_code", {"code": "print('after')"}, "run-next")
    assert (text, is_error) == ("The code ran.\n[stdout] after", False)  # the kernel takes code again
