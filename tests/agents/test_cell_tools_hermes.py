"""Hermes Agent (the real install) drives the cell tools through the one registry: insert_cell → run_cell
(a matplotlib plot; Hermes reads its description) → edit_cell → run_cell, on a real notebook file and
a real IPython kernel, in Agent autonomy with one `allow_turn` (docs/autonomy.md).

The scripted OpenAI stub plays Hermes' model: `use these tools in turn` makes it call each tool in
order, `$cell_id` standing for the cell id the last result named.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import nbformat.v4
import pytest
import pytest_asyncio
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from hermes_jupyter.agents.answered import person
from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from hermes_jupyter.agents.tools import NotebookTools
from hermes_jupyter.notebook.cell_edits import source_sha256
from hermes_jupyter.server.notebook_access import ContentsNotebooks, KernelAccess, ServerNotebookAccess
from hermes_jupyter.server.notebook_editor import NotebookEditor
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink
from tests.notebook.kernels import started_kernel

NOTEBOOK = "sales.ipynb"
KERNEL_ID = "kernel-under-test"
PLOT = ("%matplotlib inline\nimport matplotlib.pyplot as plt\nprint('drawing')\n"
        "plt.figure(figsize=(2, 1)); plt.plot([1, 2, 3]); plt.show()")
FIXED = "print('fixed', 6 * 7)"
write_notebook: Callable[..., Any] = nbformat.write
new_notebook: Callable[..., Any] = nbformat.v4.new_notebook
new_code_cell: Callable[..., Any] = nbformat.v4.new_code_cell


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest_asyncio.fixture
async def kernel() -> AsyncIterator[AsyncKernelManager]:
    async with started_kernel(AsyncKernelManager(kernel_name="python3")) as km:
        yield km


async def _answer_allow_turn(broker: ApprovalBroker, run_id: str) -> None:
    while not broker.pending(run_id):
        await asyncio.sleep(0.02)
    (request,) = broker.pending(run_id)
    broker.answer(run_id, request.approval_id, "allow_turn", person("alice"))


def _cells(root: Path) -> list[dict[str, Any]]:
    cells = json.loads((root / NOTEBOOK).read_text())["cells"]
    return [{**c, "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]} for c in cells]


@pytest.mark.asyncio
async def test_hermes_inserts_runs_reads_a_plot_edits_and_reruns_a_cell(
    hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path, kernel: AsyncKernelManager,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(new_notebook(cells=[new_code_cell("units = [3, 5, 8]", id="c1")],
                                metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}),
                   root / NOTEBOOK)
    contents = AsyncLargeFileManager(root_dir=str(root))
    known: dict[str, Any] = {KERNEL_ID: kernel}
    kernels = KernelAccess(known.__getitem__)
    broker = ApprovalBroker()
    tools = NotebookTools(access=ServerNotebookAccess(ContentsNotebooks(contents, str(root)), kernels),
                          broker=broker, editor=NotebookEditor(contents, str(root)))
    home = write_hermes_home(tmp_path / "home", stub.base_url, STUB_MODEL)
    agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                        toolsets=["todo"], tools_factory=tools)
    calls = [["insert_cell", {"source": PLOT, "after_cell_id": "c1"}], ["run_cell", {"cell_id": "$cell_id"}],
             ["edit_cell", {"cell_id": "$cell_id", "source": FIXED}], ["run_cell", {"cell_id": "$cell_id"}]]
    request = TurnRequest(session_id="s-h", run_id="r-cells", message="use these tools in turn: " + json.dumps(calls),
                          history=[], notebook=NotebookBinding(notebook_path=NOTEBOOK, kernel_id=KERNEL_ID),
                          model=STUB_MODEL, autonomy="agent")
    sink = RecordingSink()
    before = len(stub.chat_requests())
    answer = asyncio.create_task(_answer_allow_turn(broker, "r-cells"))
    try:
        result = await asyncio.wait_for(agent.run_turn(request, sink), 180)
    finally:
        answer.cancel()
        await agent.aclose()

    assert result.outcome == "completed", result
    offered = {t["function"]["name"] for t in stub.chat_requests()[before].get("tools") or []}
    assert {"insert_cell", "edit_cell", "delete_cell", "run_cell", "read_notebook"} <= offered
    changes = sink.payloads("cell_change")
    assert [(c["action"], c["applied"]) for c in changes] == [
        ("insert", True), ("run", True), ("edit", True), ("run", True)]
    assert len([a for a in sink.payloads("approval") if a["status"] == "pending"]) == 1  # allow_turn: asked once
    tool_results = [str(m.get("content")) for m in stub.chat_requests()[-1]["messages"] if m.get("role") == "tool"]
    assert "[stdout] drawing" in tool_results[1] and "(an image: image/png " in tool_results[1]  # read the plot
    assert tool_results[3].startswith("applied: true") and "fixed 42" in tool_results[3]
    cell = _cells(root)[1]
    assert cell["id"] == changes[0]["cell_id"] and cell["source"] == FIXED
    assert "".join(cell["outputs"][0]["text"]) == "fixed 42\n" and isinstance(cell["execution_count"], int)
    hermes = cell["metadata"]["hermes"]
    assert (hermes["run_id"], hermes["source_sha256"]) == ("r-cells", source_sha256(FIXED))
    assert hermes["approved_by"] == {"kind": "person", "user": "alice", "choice": "allow_turn"}
    assert hermes["tool_call_id"] and hermes["tool_call_id"] != "r-cells-cell-4"  # Hermes' own id of the call
