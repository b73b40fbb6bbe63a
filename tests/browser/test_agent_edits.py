"""The agent at work in a notebook, in real JupyterLab with a real kernel: the demo's `analyse the sales data`.

Agent mode asks before each run and lands its cells in the open notebook; the turn's card lists them
with Keep / Undo; Undo all puts the notebook back exactly; Propose mode changes nothing until Accept;
a collaborator's edit to an agent cell survives Undo (the card says so); every agent cell carries its
provenance in the saved file; and with collaboration on, a turn whose browsers all closed still lands
its cells and outputs in the file (docs/notebook-edits.md, docs/autonomy.md, docs/demo-agent.md).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_jupyter.agents.demo_analysis import FIRST_TRY, FIXED, PLOT, PLOT_TITLE

from ..server_process import JupyterServerProcess
from .lab_page import RUN_OUTPUT, SIDEBAR, TWO_FRAMES, LabPage
from .test_notebook_assist import keep_screenshot

REPO = Path(__file__).resolve().parents[2]
PROMPT = "analyse the sales data"
FIRST = "# Sales, by region"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
CARD = f"{SIDEBAR} [data-testid=hermes-cell-changes]"
PENDING_APPROVAL = f"{SIDEBAR} [data-testid=hermes-approval][data-pending=true]"
CONFLICT_WORDS = "You or a collaborator changed this cell since; it was left as it is."
#: A turn runs pandas and matplotlib in a fresh kernel on two busy cores.
TURN_S = 180

_MODEL_SOURCES_JS = "() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells.map(c => c.source)"


@pytest.fixture(scope="module")
def team_server(make_lab_server: Callable[..., JupyterServerProcess]) -> JupyterServerProcess:
    """Real-time collaboration on: the agent's changes go through the notebook's room."""
    return make_lab_server("agent-edits-team", collaboration=True)


# -- set-up and reading ------------------------------------------------------------------------


def bound_notebook(server: JupyterServerProcess, name: str, autonomy: str | None = None,
                   sources: tuple[str, ...] = (FIRST,)) -> tuple[str, str]:
    """A notebook of these code cells beside sales.csv, its kernel (a Jupyter session JupyterLab will join) and a
    Hermes session bound to both; with `autonomy`, set through the API as a person would. `(session, kernel)`."""
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})
    nbformat.write(nb, server.notebooks / name)
    shutil.copy(REPO / "binder" / "sales.csv", server.notebooks / "sales.csv")
    jupyter = server.jupyter("POST", "api/sessions", {"path": name, "type": "notebook", "name": name,
                                                      "kernel": {"name": "python3"}})
    assert jupyter.status_code == 201, jupyter.text
    kernel_id = str(jupyter.json()["kernel"]["id"])
    session_id = server.new_session(notebook_path=name, kernel_id=kernel_id)
    if autonomy is not None:
        answer = server.request("PATCH", f"sessions/{session_id}", {"autonomy": autonomy})
        assert answer.status_code == 200, answer.text
    return session_id, kernel_id


def show_session(lab: LabPage, name: str, session_id: str) -> None:
    lab.open_notebook(name)
    lab.open_sidebar()
    lab.page.wait_for_selector(f"{SIDEBAR} .jp-HermesSessionItem[data-session-id='{session_id}']", timeout=30_000)
    lab.open_session(session_id)


def choose_autonomy(lab: LabPage, session_id: str, level: str) -> None:
    """Pick the level in the composer's selector; the server records it for the session."""
    picker = f"{SIDEBAR} [data-testid=hermes-autonomy]"
    lab.page.select_option(picker, level)
    lab.page.wait_for_selector(f"{picker}[data-hermes-autonomy={level}]:not([disabled])")
    assert lab.server.get(f"sessions/{session_id}").json()["autonomy"] == level


def answer_next_approval(lab: LabPage, choice: str) -> None:
    """Wait for the pending approval, answer it with its button, and wait until it is no longer pending."""
    button = lab.page.locator(f"{PENDING_APPROVAL} [data-testid=hermes-approval-{choice}]")
    button.wait_for(timeout=TURN_S * 1000)
    button.click()
    lab.page.wait_for_function("(sel) => !document.querySelector(sel)", arg=PENDING_APPROVAL, timeout=30_000)


def model_sources(lab: LabPage) -> list[str]:
    return [s if isinstance(s, str) else "".join(s) for s in lab.page.evaluate(_MODEL_SOURCES_JS)]


def wait_model_sources(lab: LabPage, expected: list[str], timeout_s: float = 60) -> None:
    lab.page.wait_for_function(
        f"(want) => JSON.stringify(({_MODEL_SOURCES_JS})().map(s => Array.isArray(s) ? s.join('') : s))"
        " === JSON.stringify(want)", arg=expected, timeout=timeout_s * 1000)


def saved_cells(server: JupyterServerProcess, name: str) -> list[Any]:
    return list(nbformat.read(server.notebooks / name, as_version=4).cells)


def wait_saved_sources(server: JupyterServerProcess, name: str, expected: list[str], timeout_s: float = 60,
                       outputs: bool = False) -> list[Any]:
    """The saved file's cells once their sources are `expected` (a room saves by itself after a change), and
    with `outputs`, once every agent cell (all but the first) holds its run's outputs too."""
    deadline = time.monotonic() + timeout_s
    while True:
        cells = saved_cells(server, name)
        if [c.source for c in cells] == expected and (not outputs or all(c.outputs for c in cells[1:])):
            return cells
        assert time.monotonic() < deadline, f"{name} holds {[(c.source, len(c.outputs)) for c in cells]}"
        time.sleep(0.2)


def run_of(server: JupyterServerProcess, session_id: str) -> str:
    """The session's one run (the scene's turn)."""
    session = server.get(f"sessions/{session_id}").json()
    return str(session.get("active_stream_id") or session["last_run_id"])


def journal(server: JupyterServerProcess, run_id: str) -> list[dict[str, Any]]:
    return list(server.get(f"runs/{run_id}/events", after_seq=0).json()["events"])


def assert_provenance(cell: Any, session_id: str, run_id: str) -> None:
    hermes = cell.metadata["hermes"]
    assert hermes["session_id"] == session_id and hermes["run_id"] == run_id and hermes["tool_call_id"], hermes
    assert hermes["source_sha256"] == hashlib.sha256(cell.source.encode()).hexdigest()
    assert hermes["approved_by"], hermes


def save_without_conflict(lab: LabPage) -> None:
    """Save the notebook in front; fail (not hang) if JupyterLab asks about a file changed on disk instead:
    the open notebook should already hold everything the server wrote to the file."""
    lab.execute("docmanager:save", wait=False)
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty || !!document.querySelector('.jp-Dialog')",
        timeout=60_000)
    dialog = lab.page.locator(".jp-Dialog")
    if dialog.count():
        text = " ".join(dialog.inner_text().split())
        dialog.locator("button:has-text('Cancel')").click()
        raise AssertionError(f"saving asked instead of saving: {text}")


def show_card(lab: LabPage) -> None:
    """Scroll the sidebar so the turn's card of changed cells is at the top (for a screenshot)."""
    lab.page.locator(CARD).first.evaluate("(card) => card.scrollIntoView({block: 'start'})")
    lab.page.evaluate(TWO_FRAMES)


def keep_card_screenshots(lab: LabPage, name: str) -> None:
    """`name` and `name-dark` in docs/screenshots/, the card in view in each theme (a theme switch re-renders)."""
    show_card(lab)
    keep_screenshot(lab, name)
    lab.set_theme("dark")
    try:
        show_card(lab)
        keep_screenshot(lab, f"{name}-dark")
    finally:
        lab.set_theme("light")


def badge(cell_id: str, kind: str) -> str:
    """The mark above a cell the agent created or changed: `agent`, or `edited` since."""
    return f".jp-NotebookPanel .jp-HermesCellBadge[data-hermes-cell-id='{cell_id}'][data-hermes-badge={kind}]"


def cell_item(cell_id: str, review: str = "pending") -> str:
    return f"{CARD} li[data-hermes-cell-change='{cell_id}'][data-hermes-review={review}]"


# -- the scenes ----------------------------------------------------------------------------------


def test_agent_mode_asks_each_run_lands_the_cells_and_undo_all_restores_the_notebook_exactly(lab: LabPage) -> None:
    name = "agent-edits.ipynb"
    session_id, _ = bound_notebook(lab.server, name)
    original = nbformat.read(lab.server.notebooks / name, as_version=4)
    show_session(lab, name, session_id)
    choose_autonomy(lab, session_id, "agent")
    lab.send(PROMPT)
    answer_next_approval(lab, "allow_once")  # the failing first try
    answer_next_approval(lab, "allow_turn")  # the fix; the plot then runs without asking
    lab.wait_idle(timeout_s=TURN_S)
    shown_after_turn = lab.page.get_attribute(f"{SIDEBAR} [data-testid=hermes-autonomy]", "data-hermes-autonomy")
    assert lab.last_message_text().endswith(
        f"The bar chart “{PLOT_TITLE}” is in the cell below the fixed one, with the regions by revenue.")

    run_id = run_of(lab.server, session_id)
    rows = journal(lab.server, run_id)
    assert len([r for r in rows if r["event"] == "approval" and r["payload"]["status"] == "pending"]) == 2
    wait_model_sources(lab, [FIRST, FIXED, PLOT])  # the open notebook shows what the file holds
    fixed, plot = saved_cells(lab.server, name)[1:]
    assert [c.source for c in saved_cells(lab.server, name)] == [FIRST, FIXED, PLOT]
    for cell in (fixed, plot):
        assert_provenance(cell, session_id, run_id)
        lab.page.locator(badge(cell.id, "agent")).wait_for(timeout=30_000)  # marked in the open notebook
    assert fixed.metadata["hermes"]["approved_by"]["choice"] == "allow_turn"
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
    assert not [o for o in fixed.outputs if o["output_type"] == "error"]  # the KeyError was replaced by the fix

    lab.page.locator(cell_item(fixed.id)).wait_for(timeout=30_000)
    lab.page.locator(cell_item(plot.id)).wait_for()
    assert "KeyError" not in lab.page.locator(cell_item(fixed.id)).inner_text()  # its last run, not the first
    keep_card_screenshots(lab, "agent-edits-review")

    lab.page.click(f"{CARD} [data-hermes-action=undo-all]")
    lab.page.locator(cell_item(fixed.id, "undone")).wait_for(timeout=30_000)
    lab.page.locator(cell_item(plot.id, "undone")).wait_for()
    assert lab.page.locator(f"{CARD} [data-hermes-outcome]").inner_text() == "Restored 2 cells."
    wait_model_sources(lab, [FIRST])
    after = nbformat.read(lab.server.notebooks / name, as_version=4)
    assert json.dumps(after.cells, sort_keys=True) == json.dumps(original.cells, sort_keys=True)
    keep_card_screenshots(lab, "agent-edits-undone")

    # Undone is the server's record: a reload shows it, and nothing is offered to undo again.
    lab.reload()
    lab.open_sidebar()
    lab.open_session(session_id)
    lab.page.locator(cell_item(fixed.id, "undone")).wait_for(timeout=30_000)
    assert lab.page.locator(f"{CARD} [data-hermes-action=undo-all]").count() == 0
    assert lab.server.post(f"runs/{run_id}/notebook/undo", {}).json() == {"restored": [], "conflicts": []}
    # The composer showed the session's level after the turn, as it does after a reload.
    assert lab.page.get_attribute(f"{SIDEBAR} [data-testid=hermes-autonomy]", "data-hermes-autonomy") == "agent"
    assert shown_after_turn == "agent"


def test_propose_mode_changes_nothing_until_accept(lab: LabPage) -> None:
    name = "agent-propose.ipynb"
    session_id, _ = bound_notebook(lab.server, name)  # a new session is in Propose mode
    before = (lab.server.notebooks / name).read_bytes()
    show_session(lab, name, session_id)
    assert lab.page.get_attribute(f"{SIDEBAR} [data-testid=hermes-autonomy]", "data-hermes-autonomy") == "propose"
    lab.send(PROMPT)
    lab.wait_idle(timeout_s=TURN_S)
    assert "nothing runs in this mode" in " ".join(lab.assistant_texts())
    inline = lab.page.locator(".jp-NotebookPanel [data-testid=hermes-proposal-inline][data-state=pending]")
    inline.first.wait_for(timeout=30_000)
    assert inline.count() == 2
    assert model_sources(lab) == [FIRST] and (lab.server.notebooks / name).read_bytes() == before
    run_id = run_of(lab.server, session_id)
    assert not [r for r in journal(lab.server, run_id) if r["event"] in ("approval", "cell_change")]

    inline.first.locator("[data-testid=hermes-proposal-accept]").click()
    wait_model_sources(lab, [FIRST, FIRST_TRY])
    cells = lab.page.evaluate("window.jupyterapp.shell.currentWidget.content.model.toJSON().cells")
    assert cells[1]["execution_count"] is None and cells[1]["outputs"] == []  # accepted is inserted, never run


def test_a_collaborators_edit_to_an_agent_cell_survives_undo(
    team_server: JupyterServerProcess, make_lab: Callable[[JupyterServerProcess], LabPage]
) -> None:
    server, name = team_server, "agent-team.ipynb"
    session_id, _ = bound_notebook(server, name, "agent")
    a, b = make_lab(server), make_lab(server)
    show_session(a, name, session_id)
    b.open_notebook(name)
    a.send(PROMPT)
    answer_next_approval(a, "allow_turn")
    a.wait_idle(timeout_s=TURN_S)
    wait_model_sources(b, [FIRST, FIXED, PLOT])  # through the room, in both browsers

    # B adds a line to the plot cell the agent wrote.
    b.page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-InputArea-editor").click()
    b.page.keyboard.press("Control+End")
    b.page.keyboard.type("\n# B: check the colours", delay=20)
    edited = PLOT + "\n# B: check the colours"
    wait_model_sources(a, [FIRST, FIXED, edited])
    plot_id = a.page.evaluate("window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[2].id")
    a.page.locator(badge(plot_id, "edited")).wait_for(timeout=30_000)  # A sees the agent's cell was edited since

    fixed, plot = wait_saved_sources(server, name, [FIRST, FIXED, edited])[1:]
    a.page.click(f"{CARD} [data-hermes-action=undo-all]")
    a.page.locator(cell_item(plot.id, "conflict")).wait_for(timeout=30_000)
    a.page.locator(cell_item(fixed.id, "undone")).wait_for()
    assert CONFLICT_WORDS in a.page.locator(cell_item(plot.id, "conflict")).inner_text()
    assert a.page.locator(f"{CARD} [data-hermes-outcome]").inner_text() == (
        "Restored 1 cell. 1 cell changed since the agent wrote it: left as it is.")
    keep_card_screenshots(a, "agent-edits-conflict")
    for lab in (a, b):
        wait_model_sources(lab, [FIRST, edited])
    saved = wait_saved_sources(server, name, [FIRST, edited])
    assert saved[1].id == plot.id


def test_with_collaboration_on_and_every_browser_closed_mid_turn_the_cells_and_outputs_land_in_the_file(
    team_server: JupyterServerProcess, make_lab: Callable[[JupyterServerProcess], LabPage]
) -> None:
    server, name = team_server, "agent-closed.ipynb"
    session_id, kernel_id = bound_notebook(server, name, "agent")
    lab = make_lab(server)
    lab.open_notebook(name)  # the notebook's room exists, with one browser in it
    run_id = server.start_run(session_id, PROMPT, kernel_id=kernel_id, notebook_path=name)
    deadline = time.monotonic() + TURN_S
    while not (pending := [r for r in journal(server, run_id)
                           if r["event"] == "approval" and r["payload"]["status"] == "pending"]):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    (inserted,) = [r["payload"] for r in journal(server, run_id) if r["event"] == "cell_change"]
    assert inserted["action"] == "insert" and inserted["landed"] == "room"  # through the room the browser was in
    lab.page.context.close()  # every browser gone, mid-turn

    approval_id = pending[0]["payload"]["approval_id"]
    assert server.post(f"runs/{run_id}/approvals/{approval_id}", {"choice": "allow_turn"}).status_code == 200
    while not journal(server, run_id)[-1]["terminal"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    rows = journal(server, run_id)
    assert rows[-1]["event"] == "done"
    landed = [r["payload"]["landed"] for r in rows if r["event"] == "cell_change"]
    print("\n[closed mid-turn] the changes landed:", landed)
    fixed, plot = wait_saved_sources(server, name, [FIRST, FIXED, PLOT], outputs=True)[1:]
    assert fixed.execution_count is not None and "north" in str(fixed.outputs[0]["data"]["text/plain"])
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
    for cell in (fixed, plot):
        assert_provenance(cell, session_id, run_id)


def test_from_a_hermes_cell_in_agent_mode_the_cells_land_below_it_and_the_save_keeps_them(lab: LabPage) -> None:
    """The Binder way: the cell's own output asks the approval and lists the changed cells, which land right
    below the asking cell (JupyterLab names it); a save then carries the cell's answer and the agent's cells."""
    name = "agent-cell.ipynb"
    magic = "%%hermes\n" + PROMPT
    session_id, _ = bound_notebook(lab.server, name, "agent", ("%load_ext hermes_jupyter", magic, FIRST))
    lab.open_notebook(name)
    lab.run_all_cells()
    button = lab.page.locator(f"{RUN_OUTPUT} [data-testid=hermes-approval][data-pending=true] "
                              "[data-testid=hermes-approval-allow_turn]")
    button.wait_for(timeout=TURN_S * 1000)
    button.click()
    lab.wait_run_output_status("completed", timeout_s=TURN_S)
    wait_model_sources(lab, ["%load_ext hermes_jupyter", magic, FIXED, PLOT, FIRST])
    in_cell = lab.page.locator(f"{RUN_OUTPUT} [data-testid=hermes-cell-changes]")
    in_cell.locator("li[data-hermes-cell-change]").nth(1).wait_for(timeout=30_000)
    in_cell.evaluate("(card) => card.scrollIntoView({block: 'start'})")
    lab.page.evaluate(TWO_FRAMES)
    keep_screenshot(lab, "agent-edits-cell")

    save_without_conflict(lab)
    saved = saved_cells(lab.server, name)
    assert [c.source for c in saved] == ["%load_ext hermes_jupyter", magic, FIXED, PLOT, FIRST]
    run_id = run_of(lab.server, session_id)
    for cell in saved[2:4]:
        assert_provenance(cell, session_id, run_id)
    assert saved[2].execution_count is not None and any("image/png" in o.get("data", {}) for o in saved[3].outputs)
    assert saved[1].outputs[-1]["data"]["application/vnd.hermes.run+json"]["status"] == "completed"
