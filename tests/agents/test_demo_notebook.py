"""The demo agent's `use the notebook`: what it reads in the tools' text, and the sentence it writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.agents.demo_notebook import UNBOUND_REPLY, describe
from tests.fakes.recording_sink import RecordingSink

LISTING = ("n: int = 4\n"
           "notes: str len=5 = 'hello'\n"
           "sales: pandas.core.frame.DataFrame shape=3x2 =   region  units\n0  north      3\n1  south      5")


class Registry:
    """A stand-in for the notebook tools: fixed texts, every call recorded."""

    def __init__(self, listing: str, inspected: dict[str, Any]) -> None:
        self.listing, self.inspected = listing, inspected
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def schemas(self) -> list[dict[str, Any]]:
        return []

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.calls.append((name, args))
        return (self.listing if name == "list_variables" else json.dumps(self.inspected)), False


def _run(registry: Registry | None, bound: bool = True) -> RecordingSink:
    agent = DemoAgent(token_delay=0)
    agent.tools_factory = (lambda request, sink: registry) if registry is not None else None
    notebook = NotebookBinding(notebook_path="a.ipynb", kernel_id="k") if bound else None
    sink = RecordingSink()
    asyncio.run(agent.run_turn(TurnRequest("s", "r", "use the notebook", [], notebook=notebook), sink))
    return sink


def test_the_first_dataframe_is_inspected_not_the_first_variable() -> None:
    registry = Registry(LISTING, {"name": "sales", "type": "pandas.core.frame.DataFrame", "shape": [3, 2],
                                  "columns": ["region", "units"]})
    sink = _run(registry)
    assert registry.calls == [("list_variables", {}), ("inspect_variable", {"name": "sales"})]
    assert [p["tid"] for p in sink.payloads("tool")] == [p["tid"] for p in sink.payloads("tool_complete")]
    assert sink.text().endswith("`sales` is a DataFrame of 3 rows × 2 columns: `region`, `units`.")


def test_without_a_dataframe_the_first_variable_is_described() -> None:
    registry = Registry("n: int = 4\nxs: list len=3 = [1, 2, 3]", {"name": "n", "type": "int", "preview": "4"})
    sink = _run(registry)
    assert registry.calls[1] == ("inspect_variable", {"name": "n"})
    assert sink.text().endswith("`n` is an int.")


def test_an_unbound_turn_says_how_to_bind_and_calls_nothing() -> None:
    registry = Registry(LISTING, {})
    assert _run(registry, bound=False).text() == UNBOUND_REPLY and registry.calls == []
    assert _run(None).text() == UNBOUND_REPLY


def test_describe_names_sizes_of_other_values() -> None:
    assert describe("xs", json.dumps({"type": "list", "len": 3})) == "`xs` is a list of length 3."
    assert describe("a", json.dumps({"type": "numpy.ndarray", "shape": [2, 5]})) == "`a` is a ndarray of shape (2, 5)."
    assert describe("x", "not json") == "`x` is a value."
