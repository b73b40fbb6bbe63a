"""The demo agent's `analyse the sales data` (docs/demo-agent.md): an agent that works in the notebook, offline.

It calls the cell tools through the turn's `ToolRegistry`, exactly as a model would: it inserts
a cell that fails (it groups by a `revenue` column the CSV does not have), runs it, reads the
error, fixes the cell, runs it again, adds a plot and runs that. What it says comes from the tool
results, never from the script: in Propose mode the changes are proposals and nothing runs, in
Ask mode it may not change the notebook, and a cell that fails for another reason (no
`sales.csv` beside the notebook) is reported as it is. Deterministic; no model, no network.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from .base import TurnRequest
from .demo_notebook import Say, Step, UNBOUND_REPLY, tool_steps
from .tools_registry import ToolRegistry

PROMPTS = ("analyse the sales data", "analyze the sales data")
INSERT_CELL, EDIT_CELL, RUN_CELL = "insert_cell", "edit_cell", "run_cell"
#: The CSV the scene reads, beside the notebook (binder/sales.csv ships one).
CSV = "sales.csv"
#: The plot's title: the last sentence names it.
PLOT_TITLE = "Revenue by region"

_LOAD = f'import pandas as pd\n\nsales = pd.read_csv("{CSV}")\n'
#: The first try: it sums a `revenue` column the CSV does not have (a KeyError naming it).
FIRST_TRY = _LOAD + 'revenue = sales.groupby("region")["revenue"].sum().sort_values(ascending=False)\nrevenue'
#: The fix: revenue is units × price.
FIXED = (_LOAD + 'sales["revenue"] = sales["units"] * sales["price"]\n'
         'revenue = sales.groupby("region")["revenue"].sum().sort_values(ascending=False)\nrevenue')
PLOT = ("import matplotlib.pyplot as plt\n\n"
        f'ax = revenue.plot.bar(title="{PLOT_TITLE}", color="#4c72b0")\n'
        'ax.set_xlabel("region")\nax.set_ylabel("revenue")\nplt.tight_layout()\nplt.show()')

_ERROR_RE = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b:?[ \t]*([^\n]*)")
_CELL_ID_RE = re.compile(r"""\bcell[_ ]id\b["'`]?\s*[:=]?\s*["'`]?([A-Za-z0-9][\w-]*)""", re.IGNORECASE)
_TOP_RE = re.compile(r"^\[execute_result\] region\n(\w+)\s+([\d.]+)$", re.MULTILINE)
_APPLIED_RE = re.compile(r"\bapplied\b[\"'`]?\s*[:=]\s*(true|false)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one tool result says happened: applied to the notebook, its cell id, the text itself."""

    applied: bool
    cell_id: str | None
    text: str
    is_error: bool


def asks_for_analysis(message: str) -> bool:
    lowered = message.lower()
    return any(prompt in lowered for prompt in PROMPTS)


def read_outcome(text: str, is_error: bool) -> Outcome:
    """Read a cell tool's result (a JSON object or a sentence) for `applied` and `cell_id`."""
    data: Any = None
    try:
        data = json.loads(text)
    except ValueError:
        pass
    if isinstance(data, dict):
        applied = bool(data.get("applied")) and not is_error
        cell_id = data.get("cell_id") if isinstance(data.get("cell_id"), str) else None
        return Outcome(applied, cell_id, text, is_error)
    flag = _APPLIED_RE.search(text)
    if flag:
        applied = flag.group(1).lower() == "true"
    else:
        lowered = text.lower()
        applied = "applied" in lowered and "not applied" not in lowered
    found = _CELL_ID_RE.search(text)
    return Outcome(applied and not is_error, found.group(1) if found else None, text, is_error)


def top_region(text: str) -> tuple[str, str] | None:
    """`(region, revenue)` of the first row of the fixed cell's result (sorted, so the leader), if it shows one."""
    found = _TOP_RE.search(text)
    return (found.group(1), found.group(2)) if found else None


def error_in(text: str) -> tuple[str, str] | None:
    """`(name, message)` of the first exception a run result names, or None when it names none."""
    found = _ERROR_RE.search(text)
    return (found.group(1), found.group(2).strip()) if found else None


class _Scene:
    """One turn of the scene: numbered tool cards, and what the results said so far."""

    def __init__(self, registry: ToolRegistry, say: Say) -> None:
        self.registry, self.say, self.calls = registry, say, 0

    async def call(self, name: str, args: dict[str, Any], out: list[Outcome]) -> AsyncIterator[Step]:
        self.calls += 1
        result: list[str] = []
        async for step in tool_steps(self.registry, f"demo-analysis-{self.calls}", name, args, result):
            yield step
        out[:] = [read_outcome(result[0], is_error=bool(result[1:]))]


async def analysis_steps(request: TurnRequest, registry: ToolRegistry | None, say: Say) -> AsyncIterator[Step]:
    """The turn's events: the six tool calls and the sentences between them, or why the scene stopped."""
    if registry is None or request.notebook is None or not request.notebook.notebook_path:
        for step in say(UNBOUND_REPLY):
            yield step
        return
    scene = _Scene(registry, say)
    for step in say(f"I will sum the revenue per region from `{CSV}`."):
        yield step
    where = {"after_cell_id": request.notebook.cell_id} if request.notebook.cell_id else {}
    first: list[Outcome] = []
    async for step in scene.call(INSERT_CELL, {"source": FIRST_TRY, "cell_type": "code", **where}, first):
        yield step
    if not first[0].applied or first[0].cell_id is None:
        async for step in _proposed(scene, first[0]):
            yield step
        return
    cell_id = first[0].cell_id
    ran: list[Outcome] = []
    async for step in scene.call(RUN_CELL, {"cell_id": cell_id}, ran):
        yield step
    error = error_in(ran[0].text) if ran[0].applied else None
    if error is None or error[0] != "KeyError" or "revenue" not in error[1]:
        for step in say(" " + _unexpected(ran[0], error)):
            yield step
        return
    for step in say(f" It failed: `{error[0]}: {error[1]}`. The CSV has no `revenue` column, so I will compute it "
                    "as `units` × `price`."):
        yield step
    async for step in _fix_and_plot(scene, cell_id):
        yield step


async def _fix_and_plot(scene: _Scene, cell_id: str) -> AsyncIterator[Step]:
    """Edit the failed cell, run it, add the plot below it and run that; the last sentence names the plot."""
    fixed: list[Outcome] = []
    async for step in scene.call(EDIT_CELL, {"cell_id": cell_id, "source": FIXED}, fixed):
        yield step
    ran: list[Outcome] = []
    if fixed[0].applied:
        async for step in scene.call(RUN_CELL, {"cell_id": cell_id}, ran):
            yield step
    if not fixed[0].applied or not ran[0].applied or error_in(ran[0].text):
        for step in scene.say(" " + _unexpected((ran or fixed)[0], error_in((ran or fixed)[0].text))):
            yield step
        return
    leader = top_region(ran[0].text)
    for step in scene.say(f" The fixed cell ran{f': {leader[0]} leads with {leader[1]}' if leader else ''}. "
                          "Now a plot of it."):
        yield step
    plot: list[Outcome] = []
    async for step in scene.call(INSERT_CELL, {"source": PLOT, "cell_type": "code", "after_cell_id": cell_id}, plot):
        yield step
    if not plot[0].applied or plot[0].cell_id is None:
        for step in scene.say(" " + _unexpected(plot[0], None)):
            yield step
        return
    shown: list[Outcome] = []
    async for step in scene.call(RUN_CELL, {"cell_id": plot[0].cell_id}, shown):
        yield step
    for step in scene.say(" " + _plotted(shown[0])):
        yield step


async def _proposed(scene: _Scene, first: Outcome) -> AsyncIterator[Step]:
    """The first cell was not applied: in Propose mode it is a proposal, so propose the plot too (nothing
    runs); otherwise say why, in the tool's own words."""
    if first.is_error or "propos" not in first.text.lower():
        for step in scene.say(f" I could not add the cell: {_first_line(first.text)}"):
            yield step
        return
    for step in scene.say(" That is a proposal: nothing changes in the notebook until you accept it, and "
                          "nothing runs in this mode. I will propose the plot as well."):
        yield step
    plot: list[Outcome] = []
    async for step in scene.call(INSERT_CELL, {"source": PLOT, "cell_type": "code"}, plot):
        yield step
    sentence = (f" I proposed two cells, the revenue per region and a bar chart titled “{PLOT_TITLE}”; accept them "
                "and run them to see the plot." if not plot[0].is_error
                else f" The plot was not proposed: {_first_line(plot[0].text)}")
    for step in scene.say(sentence):
        yield step


def _unexpected(outcome: Outcome, error: tuple[str, str] | None) -> str:
    """The scene stops here and says what the result said (never that something happened that did not)."""
    if error is not None and error[0] == "FileNotFoundError":
        return (f"It failed: `{error[0]}: {error[1]}`. This scene reads `{CSV}` beside the notebook "
                "(binder/sales.csv is one); put a copy there and ask again.")
    if error is not None:
        return f"It failed: `{error[0]}: {error[1]}`. I stopped there; the cell is left as it is."
    return f"That did not go as planned, so I stopped: {_first_line(outcome.text)}"


def _plotted(outcome: Outcome) -> str:
    """The last sentence: the plot by its title when the run's outputs hold an image, else what happened."""
    if outcome.applied and not error_in(outcome.text) and "image" in outcome.text.lower():
        return f"The bar chart “{PLOT_TITLE}” is in the cell below the fixed one, with the regions by revenue."
    return f"The plot cell did not draw “{PLOT_TITLE}”: {_first_line(outcome.text)}"


def _first_line(text: str) -> str:
    """The result's first line that says something (the `applied: …` flag line is for the model)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _APPLIED_RE.fullmatch(line.strip())]
    return lines[0] if lines else "(no result)"
