"""The demo agent's `analyse the sales data`: the six cell-tool calls in order, and words that follow the results.

A stand-in registry answers as the cell tools do (applied, proposed, refused); the scene on a real
server and kernel is in tests/agents/test_demo_analysis_server.py and tests/browser/test_agent_edits.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.agents.demo_analysis import FIRST_TRY, FIXED, PLOT, PLOT_TITLE, error_in, read_outcome
from hermes_jupyter.agents.demo_notebook import UNBOUND_REPLY
from tests.fakes.recording_sink import RecordingSink

KEY_ERROR = "[error] KeyError: 'Column not found: revenue'\nTraceback …"


class Registry:
    """Answers like the cell tools in one mode; every call recorded."""

    def __init__(self, mode: str = "agent", first_run: str = KEY_ERROR) -> None:
        self.mode, self.first_run = mode, first_run
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.cells: dict[str, str] = {}

    def schemas(self) -> list[dict[str, Any]]:
        return []

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.calls.append((name, args))
        if self.mode == "ask":
            return "applied: false\nIn Ask mode the agent only reads the notebook; nothing was changed.", True
        if self.mode == "propose":
            if name == "run_cell":
                return "Not applied: in Propose mode nothing runs.", True
            return "Not applied: proposed a new cell (proposal p-1); the user accepts or rejects it.", False
        if name == "insert_cell":
            cell_id = f"c{len(self.cells) + 1}"
            self.cells[cell_id] = args["source"]
            return f"applied: true\nInserted code cell cell_id={cell_id} at index {len(self.cells)}.", False
        if name == "edit_cell":
            self.cells[args["cell_id"]] = args["source"]
            return f"Applied: cell_id={args['cell_id']} now holds the new source.", False
        if self.mode == "deny":
            return f"applied: false\nDenied by the user: cell_id={args['cell_id']} was not run.", True
        source = self.cells[args["cell_id"]]
        if source == FIRST_TRY:
            return f"Applied: ran cell_id={args['cell_id']}, execution count 1.\n{self.first_run}", False
        if source == PLOT:
            return (f"applied: true\nRan cell cell_id={args['cell_id']} In[3]. It ran. Its outputs are in the cell:\n"
                    "[display_data] <Figure size 640x480 with 1 Axes> (an image: image/png 630×470)"), False
        return (f"applied: true\nRan cell cell_id={args['cell_id']} In[2]. It ran. Its outputs are in the cell:\n"
                "[execute_result] region\nnorth    1651.8\nwest     1608.0\nName: revenue, dtype: float64"), False


def _run(registry: Registry | None, *, cell_id: str | None = "asked", bound: bool = True) -> RecordingSink:
    agent = DemoAgent(token_delay=0)
    agent.tools_factory = (lambda request, sink: registry) if registry is not None else None
    notebook = NotebookBinding(notebook_path="a.ipynb", kernel_id="k", cell_id=cell_id) if bound else None
    sink = RecordingSink()
    asyncio.run(agent.run_turn(TurnRequest("s", "r", "Please analyse the sales data", [], notebook=notebook), sink))
    return sink


def test_in_agent_mode_the_scene_inserts_runs_reads_the_error_fixes_and_plots() -> None:
    registry = Registry()
    sink = _run(registry)
    assert [name for name, _ in registry.calls] == [
        "insert_cell", "run_cell", "edit_cell", "run_cell", "insert_cell", "run_cell"]
    assert registry.calls[0][1] == {"source": FIRST_TRY, "cell_type": "code", "after_cell_id": "asked"}
    assert registry.calls[2][1] == {"cell_id": "c1", "source": FIXED}
    assert registry.calls[4][1]["after_cell_id"] == "c1" and registry.cells["c2"] == PLOT
    tids = [p["tid"] for p in sink.payloads("tool")]
    assert tids == [p["tid"] for p in sink.payloads("tool_complete")] and len(set(tids)) == 6
    text = sink.text()
    assert "It failed: `KeyError: 'Column not found: revenue'`. The CSV has no `revenue` column" in text
    assert "The fixed cell ran: north leads with 1651.8. Now a plot of it." in text
    assert text.endswith(f"The bar chart “{PLOT_TITLE}” is in the cell below the fixed one, "
                         "with the regions by revenue.")


def test_in_propose_mode_the_scene_says_nothing_ran_and_proposes_the_plot() -> None:
    registry = Registry("propose")
    text = _run(registry).text()
    assert [name for name, _ in registry.calls] == ["insert_cell", "insert_cell"]
    assert "nothing changes in the notebook until you accept it" in text
    assert "ran" not in text.replace("run them", "") and PLOT_TITLE in text


def test_in_ask_mode_the_scene_stops_with_the_tools_refusal() -> None:
    registry = Registry("ask")
    text = _run(registry).text()
    assert registry.calls == [("insert_cell", registry.calls[0][1])]
    assert text.endswith("I could not add the cell: In Ask mode the agent only reads the notebook; "
                         "nothing was changed.")


def test_another_error_than_the_expected_one_is_reported_and_nothing_is_fixed() -> None:
    registry = Registry(first_run="[error] FileNotFoundError: [Errno 2] No such file or directory: 'sales.csv'")
    text = _run(registry, cell_id=None).text()
    assert [name for name, _ in registry.calls] == ["insert_cell", "run_cell"]
    assert "after_cell_id" not in registry.calls[0][1]  # no asking cell: at the end of the notebook
    assert "FileNotFoundError" in text and "put a copy there" in text


def test_a_denied_run_is_said_as_denied_and_the_scene_stops() -> None:
    registry = Registry("deny")
    text = _run(registry).text()
    assert [name for name, _ in registry.calls] == ["insert_cell", "run_cell"]
    assert text.endswith("That did not go as planned, so I stopped: Denied by the user: cell_id=c1 was not run.")


def test_an_unbound_turn_says_how_to_bind_and_calls_nothing() -> None:
    registry = Registry()
    assert _run(registry, bound=False).text() == UNBOUND_REPLY and registry.calls == []


def test_results_are_read_as_json_or_as_sentences() -> None:
    assert read_outcome('{"applied": true, "cell_id": "x1"}', False).cell_id == "x1"
    assert not read_outcome('{"applied": false, "why": "no such cell"}', False).applied
    assert read_outcome("applied: true, cell id `ab-12` at index 3", False).cell_id == "ab-12"
    assert not read_outcome("Not applied: the notebook could not be read.", False).applied
    assert not read_outcome("Applied: inserted cell_id=c1", True).applied  # an error result never counts
    assert error_in("[error] ValueError: bad\nTraceback") == ("ValueError", "bad")
    assert error_in("The code ran.\n[stdout] fine") is None
