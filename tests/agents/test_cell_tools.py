"""The cell tools (insert_cell, edit_cell, delete_cell, run_cell) by autonomy, on a real notebook file
(the server's NotebookEditor over a contents manager) and a real IPython kernel (docs/autonomy.md).

What is asserted is what the file holds afterwards and what was journaled, never only the result text.
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
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from hermes_jupyter.agents.answered import person
from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.tools import NotebookToolRegistry, NotebookTools
from hermes_jupyter.notebook.cell_edits import source_sha256
from hermes_jupyter.server.notebook_access import ContentsNotebooks, KernelAccess, ServerNotebookAccess
from hermes_jupyter.server.notebook_editor import NotebookEditor

from ..fakes.recording_sink import RecordingSink
from ..notebook.kernels import started_kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")

new_notebook: Callable[..., Any] = nbformat.v4.new_notebook
new_code_cell: Callable[..., Any] = nbformat.v4.new_code_cell
write_notebook: Callable[..., Any] = nbformat.write
read_notebook: Callable[..., Any] = nbformat.reads
NOTEBOOK = "work/sales.ipynb"
PLOT = ("%matplotlib inline\nimport matplotlib.pyplot as plt\n"
        "plt.figure(figsize=(2, 1)); plt.plot([1, 2, 3]); plt.show()")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    cells = [new_code_cell("units = [3, 5, 8]", id="load"), new_code_cell("sum(units)", id="total")]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    write_notebook(nb, tmp_path / NOTEBOOK)
    return tmp_path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def kernel() -> AsyncIterator[AsyncKernelManager]:
    async with started_kernel(AsyncKernelManager(kernel_name="python3")) as km:
        yield km


def _tools(root: Path, kernel: AsyncKernelManager | None = None) -> NotebookTools:
    contents = AsyncLargeFileManager(root_dir=str(root))
    known: dict[str, Any] = {"k1": kernel} if kernel else {}
    kernels = KernelAccess(known.__getitem__)
    access = ServerNotebookAccess(ContentsNotebooks(contents, str(root)), kernels)
    return NotebookTools(access=access, broker=ApprovalBroker(), editor=NotebookEditor(contents, str(root)),
                         approval_timeout=20, run_timeout=30)


def _registry(tools: NotebookTools, sink: RecordingSink, autonomy: str, *, kernel: bool = True,
              run_id: str = "run-1") -> NotebookToolRegistry:
    binding = NotebookBinding(notebook_path=NOTEBOOK, cell_id="total", kernel_id="k1" if kernel else None)
    request = TurnRequest(session_id="s1", run_id=run_id, message="hi", history=[], notebook=binding,
                          model="m-1", autonomy=autonomy)  # type: ignore[arg-type]
    return tools(request, sink)


def _cells(root: Path) -> list[dict[str, Any]]:
    """The saved cells, each source as one string."""
    cells = list(json.loads((root / NOTEBOOK).read_text())["cells"])
    return [{**c, "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]} for c in cells]


def _names(registry: NotebookToolRegistry) -> set[str]:
    return {s["function"]["name"] for s in registry.schemas()}


async def _answer(tools: NotebookTools, run_id: str, choice: str) -> dict[str, Any]:
    while not tools.broker.pending(run_id):
        await asyncio.sleep(0.01)
    (request,) = tools.broker.pending(run_id)
    tools.broker.answer(run_id, request.approval_id, choice, person("alice"))
    return {"options": request.options}


async def test_the_tools_offered_follow_the_autonomy(root: Path) -> None:
    tools = _tools(root)
    sink = RecordingSink()
    reading = {"read_notebook", "list_variables", "inspect_variable"}
    assert _names(_registry(tools, sink, "ask")) == reading
    changing = {"insert_cell", "edit_cell", "delete_cell", "propose_cell", "run_code"}
    assert _names(_registry(tools, sink, "propose")) == reading | changing
    assert _names(_registry(tools, sink, "agent")) == reading | changing | {"run_cell"}
    assert _names(_registry(tools, sink, "agent_auto")) == reading | changing | {"run_cell"}
    assert "run_cell" not in _names(_registry(tools, sink, "agent", kernel=False))
    tools.max_autonomy = "ask"  # the administrator lowered the cap after the session chose Agent
    assert _names(_registry(tools, sink, "agent")) == reading
    tools.max_autonomy = "agent"
    registry = _registry(tools, sink, "agent_auto")
    assert registry.autonomy == "agent"


async def test_ask_refuses_every_change_and_changes_nothing(root: Path) -> None:
    before = (root / NOTEBOOK).read_text()
    sink = RecordingSink()
    registry = _registry(_tools(root), sink, "ask")
    for name, args in [("insert_cell", {"source": "x = 1"}), ("run_code", {"code": "x = 1"}),
                       ("run_cell", {"cell_id": "load"}), ("propose_cell", {"action": "insert_end", "source": "1"})]:
        text, is_error = await registry.call(name, args)
        assert is_error and "Ask mode" in text, (name, text)
    assert (root / NOTEBOOK).read_text() == before and sink.events == []


async def test_propose_journals_proposals_and_changes_nothing(root: Path, kernel: AsyncKernelManager) -> None:
    before = (root / NOTEBOOK).read_text()
    sink = RecordingSink()
    registry = _registry(_tools(root, kernel), sink, "propose")
    results = [await registry.call("insert_cell", {"source": "x = 1", "after_cell_id": "load"}),
               await registry.call("edit_cell", {"cell_id": "total", "source": "sum(units) * 2"}),
               await registry.call("delete_cell", {"cell_id": "load"})]
    assert all(text.startswith("applied: false\nProposed") and not err for text, err in results)
    proposals = sink.payloads("proposal")
    assert [(p["action"], p["cell_id"]) for p in proposals] == [
        ("insert_below", "load"), ("replace", "total"), ("delete", "load")]
    assert [p["old_source"] for p in proposals] == [None, "sum(units)", "units = [3, 5, 8]"]
    text, is_error = await registry.call("edit_cell", {"cell_id": "nope", "source": "1"})
    assert is_error and "no cell with cell_id=nope" in text
    text, is_error = await registry.call("run_cell", {"cell_id": "total"})
    assert is_error and "In Propose mode nothing runs" in text
    assert (root / NOTEBOOK).read_text() == before
    assert sink.names() == ["proposal"] * 3  # no cell_change, no approval asked


async def test_agent_applies_changes_with_provenance_and_journals_each_before_answering(root: Path) -> None:
    sink = RecordingSink()
    registry = _registry(_tools(root), sink, "agent")
    text, is_error = await registry.call("insert_cell", {"source": "avg = sum(units) / 3", "after_cell_id": "load"},
                                         "call_7")
    assert not is_error and text.startswith("applied: true\nInserted code cell cell_id=")
    (change,) = sink.payloads("cell_change")
    cell_id = change["cell_id"]
    cells = _cells(root)
    assert [c["id"] for c in cells] == ["load", cell_id, "total"] and change["index"] == 1
    hermes = cells[1]["metadata"]["hermes"]
    assert (hermes["session_id"], hermes["run_id"], hermes["tool_call_id"], hermes["model"]) == (
        "s1", "run-1", "call_7", "m-1")
    assert hermes["source_sha256"] == source_sha256("avg = sum(units) / 3") == change["source_sha256"]

    text, is_error = await registry.call("edit_cell", {"cell_id": cell_id, "source": "avg = sum(units) / len(units)"})
    assert not is_error and f"cell_id={cell_id}" in text
    assert _cells(root)[1]["source"] == "avg = sum(units) / len(units)"
    text, is_error = await registry.call("delete_cell", {"cell_id": "total"})
    assert not is_error and [c["id"] for c in _cells(root)] == ["load", cell_id]
    text, is_error = await registry.call("edit_cell", {"cell_id": "nope", "source": "1"})
    assert is_error and text.startswith("applied: false") and [c["action"] for c in sink.payloads(
        "cell_change")] == ["insert", "edit", "delete", "edit"] and not sink.payloads("cell_change")[-1]["applied"]


async def test_run_cell_asks_allow_turn_covers_the_rest_of_the_turn(root: Path, kernel: AsyncKernelManager) -> None:
    tools = _tools(root, kernel)
    sink = RecordingSink()
    registry = _registry(tools, sink, "agent", run_id="run-turn")
    call = asyncio.ensure_future(registry.call("run_cell", {"cell_id": "load"}))
    asked = await _answer(tools, "run-turn", "allow_turn")
    text, is_error = await call
    assert asked["options"] == ("allow_once", "allow_turn", "deny")
    assert not is_error and text.startswith("applied: true\nRan cell cell_id=load In[")
    # later runs of this turn, run_cell and run_code, go without asking
    text, is_error = await registry.call("run_cell", {"cell_id": "total"})
    assert not is_error and "[execute_result] 16" in text
    text, is_error = await registry.call("run_code", {"code": "print(len(units))"})
    assert not is_error and "[stdout] 3" in text
    assert len([p for p in sink.payloads("approval") if p["status"] == "pending"]) == 1
    total = _cells(root)[1]
    assert "".join(total["outputs"][0]["data"]["text/plain"]) == "16" and isinstance(total["execution_count"], int)
    assert total["metadata"]["hermes"]["approved_by"] == {"kind": "person", "user": "alice", "choice": "allow_turn"}
    nbformat.validate(read_notebook((root / NOTEBOOK).read_text(), as_version=4))
    # a new turn asks again
    registry = _registry(tools, RecordingSink(), "agent", run_id="run-next")
    call = asyncio.ensure_future(registry.call("run_cell", {"cell_id": "total"}))
    await _answer(tools, "run-next", "deny")
    text, is_error = await call
    assert is_error and text.startswith("applied: false\nDenied")


async def test_a_denied_run_cell_runs_nothing(root: Path, kernel: AsyncKernelManager) -> None:
    tools = _tools(root, kernel)
    sink = RecordingSink()
    registry = _registry(tools, sink, "agent", run_id="run-deny")
    await registry.call("edit_cell", {"cell_id": "load", "source": "denied_marker = 1"})
    call = asyncio.ensure_future(registry.call("run_cell", {"cell_id": "load"}))
    await _answer(tools, "run-deny", "deny")
    assert (await call)[1]
    text, _ = await registry.call("list_variables", {})
    assert "denied_marker" not in text and _cells(root)[0]["outputs"] == []
    assert [c["action"] for c in sink.payloads("cell_change")] == ["edit"]


async def test_agent_auto_runs_without_asking_and_a_plot_comes_back_as_an_image(
    root: Path, kernel: AsyncKernelManager,
) -> None:
    sink = RecordingSink()
    registry = _registry(_tools(root, kernel), sink, "agent_auto", run_id="run-auto")
    text, _ = await registry.call("insert_cell", {"source": PLOT})
    cell_id = sink.payloads("cell_change")[0]["cell_id"]
    text, is_error = await registry.call("run_cell", {"cell_id": cell_id})
    assert not is_error and "(an image: image/png " in text, text
    assert registry.images.urls and registry.images.urls[0].startswith("data:image/png;base64,iVBOR")
    assert sink.payloads("approval") == []
    run = sink.payloads("cell_change")[-1]
    assert run["action"] == "run" and run["applied"] and "image" in (run["outputs_summary"] or "")
    saved = _cells(root)[-1]
    assert "image/png" in saved["outputs"][0]["data"]
    assert saved["metadata"]["hermes"]["approved_by"] == {"kind": "policy", "autonomy": "agent_auto"}
    # read_notebook shows the plot again, described, and as an image for a model that reads images
    text, _ = await registry.call("read_notebook", {})
    assert "(an image: image/png " in text and len(registry.images.urls) == 1


async def test_run_cell_never_runs_a_hermes_cell(root: Path, kernel: AsyncKernelManager) -> None:
    """Running the %%hermes cell a turn came from would start another turn of the agent, from itself."""
    sink = RecordingSink()
    registry = _registry(_tools(root, kernel), sink, "agent_auto", run_id="run-magic")
    await registry.call("edit_cell", {"cell_id": "total", "source": "%%hermes\nsummarise the data"})
    text, is_error = await registry.call("run_cell", {"cell_id": "total"})
    assert is_error and "is a %hermes cell" in text and "Nothing was run" in text
    assert [c["action"] for c in sink.payloads("cell_change")] == ["edit"] and _cells(root)[1]["outputs"] == []
    text, is_error = await registry.call("run_code", {"code": "%%hermes --new\nhello"})
    assert is_error and "%hermes magic" in text and sink.payloads("approval") == []


async def test_a_run_error_is_applied_and_read_without_ansi(root: Path, kernel: AsyncKernelManager) -> None:
    sink = RecordingSink()
    registry = _registry(_tools(root, kernel), sink, "agent_auto", run_id="run-error")
    await registry.call("edit_cell", {"cell_id": "load", "source": "units['revenue']"})
    text, is_error = await registry.call("run_cell", {"cell_id": "load"})
    assert not is_error and text.startswith("applied: true") and "[error] TypeError:" in text
    assert "\x1b[" not in text
    assert _cells(root)[0]["outputs"][0]["output_type"] == "error"


# ---- images reach a model that reads them, and only that one (agents/tool_images.py) --------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwHwQZGBgAPw8F+5S3xqsAAAAASUVORK5CYII="


class _PlotTools:
    """A registry whose one tool shows a plot, as read_notebook and run_cell do."""

    def __init__(self) -> None:
        from hermes_jupyter.agents.tool_images import ImageParts
        self.images = ImageParts()

    def schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "show", "description": "Show the plot.",
                                                  "parameters": {"type": "object", "properties": {}}}}]

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.images.clear()
        self.images.take([{"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}}])
        return "[display_data] <Figure> (an image: image/png 2×1)", False


@pytest.mark.parametrize(("model", "reads"), [
    ("gpt-4o-mini", True), ("o4-mini", True), ("openai/gpt-5", True), ("claude-3-5-sonnet", True),
    ("Qwen2.5-VL-7B-Instruct", True), ("gemma-3-4b-it", True), ("llama3.1-8b", False), ("mistral-7b", False),
    ("phi3-mini", False), ("stub-model", False),
])
async def test_auto_decides_by_the_models_name(model: str, reads: bool) -> None:
    from hermes_jupyter.agents.tool_images import takes_images
    assert takes_images(model, "auto") is reads


@pytest.mark.parametrize(("model", "setting", "sent"), [
    ("stub-model", "auto", False), ("gpt-4o-mini", "auto", True), ("stub-model", "always", True),
    ("gpt-4o", "never", False),
])
async def test_the_openai_backend_sends_images_only_to_a_model_that_reads_them(
    model: str, setting: str, sent: bool,
) -> None:
    from hermes_jupyter.agents.openai import OpenAIAgent
    from tests.fakes.openai_stub_server import OpenAIStubServer

    with OpenAIStubServer() as stub:
        agent = OpenAIAgent(tools=_PlotTools(), base_url=stub.base_url, model=model, api_key="k", send_images=setting)
        request = TurnRequest(session_id="s1", run_id="r-img", message="use the show tool", history=[])
        try:
            result = await agent.run_turn(request, RecordingSink())
        finally:
            await agent.aclose()
        second = stub.chat_requests()[1]["messages"]
    image_rows = [m for m in second if m["role"] == "user" and isinstance(m["content"], list)]
    assert bool(image_rows) is sent
    if sent:
        assert second[-1] is image_rows[0] and second[-2]["role"] == "tool"
        assert image_rows[0]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PNG}"
    assert "image_url" not in json.dumps(result.context)  # never kept in the conversation
    assert result.final_text.endswith("Tool result: [display_data] <Figure> (an image: image/png 2×1)")
