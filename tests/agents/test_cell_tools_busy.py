"""run_cell when the kernel cannot run the cell now, with real kernels (docs/autonomy.md, agent-reach.md
"A busy kernel"): refused before anyone is asked, or reported not run and never run later; either way
the cell's outputs are left as they were and no run is journaled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import nbformat
import nbformat.v4
import pytest
import pytest_asyncio
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.tools import CodeRun, NotebookTools
from hermes_jupyter.server.notebook_access import ContentsNotebooks, KernelAccess, ServerNotebookAccess
from hermes_jupyter.server.notebook_editor import NotebookEditor

from ..fakes.no_subshell_kernel import kernel_spec
from ..fakes.recording_sink import RecordingSink
from ..notebook.kernels import started_kernel
from .test_run_code_busy import BusyCell

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTEBOOK = "late.ipynb"
write_notebook: Callable[..., Any] = nbformat.write
new_notebook: Callable[..., Any] = nbformat.v4.new_notebook
new_code_cell: Callable[..., Any] = nbformat.v4.new_code_cell


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def no_subshells(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AsyncKernelManager]:
    kernels = tmp_path_factory.mktemp("kernels")
    spec = KernelSpecManager(kernel_dirs=[str(kernels)])
    async with started_kernel(AsyncKernelManager(kernel_name=kernel_spec(kernels), kernel_spec_manager=spec)) as km:
        yield km


def _registry(root: Path, km: AsyncKernelManager | None, sink: RecordingSink, run_id: str, autonomy: str,
              wrap: Callable[[Any], Any] = lambda access: access) -> Any:
    write_notebook(new_notebook(cells=[new_code_cell(
        f"with open({str(root / 'ran.txt')!r}, 'a') as f:\n    f.write('ran\\n')", id="c1")]), root / NOTEBOOK)
    contents = AsyncLargeFileManager(root_dir=str(root))
    known: dict[str, Any] = {"k1": km}
    access = ServerNotebookAccess(ContentsNotebooks(contents, str(root)), KernelAccess(known.__getitem__))
    tools = NotebookTools(access=wrap(access), broker=ApprovalBroker(), editor=NotebookEditor(contents, str(root)),
                          approval_timeout=0.5, run_timeout=20)
    request = TurnRequest(session_id="s1", run_id=run_id, message="hi", history=[],
                          autonomy=autonomy,  # type: ignore[arg-type]
                          notebook=NotebookBinding(notebook_path=NOTEBOOK, kernel_id="k1"))
    return tools(request, sink)


def _outputs(root: Path) -> list[Any]:
    return list(json.loads((root / NOTEBOOK).read_text())["cells"][0]["outputs"])


async def test_a_busy_kernel_without_subshells_refuses_run_cell_before_asking(
    tmp_path: Path, no_subshells: AsyncKernelManager,
) -> None:
    sink = RecordingSink()
    registry = _registry(tmp_path, no_subshells, sink, "run-busy", "agent")  # Agent asks: the refusal comes first
    cell = BusyCell(no_subshells, 3)
    no_subshells.execution_state = "busy"  # type: ignore[attr-defined]
    try:
        text, is_error = await registry.call("run_cell", {"cell_id": "c1"})
    finally:
        no_subshells.execution_state = "idle"  # type: ignore[attr-defined]
    assert is_error and text.startswith("applied: false\nThe kernel is busy running a cell")
    assert "Nothing was run" in text
    assert sink.events == [] and _outputs(tmp_path) == []
    await cell.finished()
    assert not (tmp_path / "ran.txt").exists()


class _NeverStarts:
    """The kernel side of a run the kernel did not start in time (kernel_run.py withdrew it: it never runs later)."""

    def __init__(self, access: Any) -> None:
        self.access = access

    async def read_notebook(self, path: str) -> Any:
        return await self.access.read_notebook(path)

    async def ready_to_run(self, kernel_id: str) -> None:
        return None

    async def run_code(self, kernel_id: str, code: str, timeout_s: float, *, store_history: bool = False) -> CodeRun:
        return CodeRun(status="not_started")


async def test_a_cell_the_kernel_never_started_is_reported_not_run_and_left_as_it_was(tmp_path: Path) -> None:
    """What the withdrawn run (test_run_code_busy: never runs later) means for run_cell: nothing is written."""
    sink = RecordingSink()
    registry = _registry(tmp_path, None, sink, "run-late", "agent_auto", _NeverStarts)
    before = (tmp_path / NOTEBOOK).read_text()
    text, is_error = await registry.call("run_cell", {"cell_id": "c1"})
    assert is_error and text.startswith("applied: false\nNot run:") and "will not run later" in text, text
    assert sink.payloads("cell_change") == [] and (tmp_path / NOTEBOOK).read_text() == before
