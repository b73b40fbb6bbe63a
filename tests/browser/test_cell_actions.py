"""Scene: Explain and Fix from the cell toolbar go to the notebook's own session, not to the session
selected for another notebook; after the notebook is reopened, "Ask Hermes" sits under the failed
cell's output (docs/sidebar.md, "Cells ask their notebook's session")."""

from __future__ import annotations

from typing import Any

from .lab_page import SIDEBAR, USER, LabPage
from .test_notebook_assist import keep_screenshot, select_cell, write_notebook

NOTEBOOK = "cell-actions.ipynb"
OTHER = "cell-actions-other.ipynb"
SOURCES = ("total = 1 + 1\nprint(total)", "ratio = 1 / 0")
CELL = ".jp-NotebookPanel .jp-Notebook .jp-Cell"
TOOLBAR = f"{CELL}.jp-mod-active .jp-cell-toolbar"
EXPLAIN = f"{TOOLBAR} [data-command='hermes-jupyter:explain-cell']"
FIX = f"{TOOLBAR} [data-command='hermes-jupyter:fix-cell']"
ASK = ".jp-NotebookPanel [data-testid=hermes-ask-error]"
_RAN_JS = "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.outputs.length > 0"


def _user_turns(lab: LabPage, session_id: str) -> list[dict[str, Any]]:
    return [m for m in lab.server.get(f"sessions/{session_id}").json()["messages"] if m["role"] == "user"]


def _wait_selected_other_than(lab: LabPage, session_id: str) -> str:
    lab.page.wait_for_function(
        "([sel, sid]) => { const e = document.querySelector(sel); return !!e && e.dataset.sessionId !== sid; }",
        arg=[f"{SIDEBAR} .jp-HermesSessionItem.jp-mod-selected", session_id], timeout=30_000,
    )
    return lab.selected_session_id() or ""


def _box(lab: LabPage, selector: str) -> dict[str, float]:
    box = lab.page.locator(selector).bounding_box()
    assert box is not None, selector
    return {"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"]}


def test_explain_and_fix_go_to_the_notebooks_session_and_ask_sits_under_the_output_after_reopening(lab: LabPage) -> None:
    write_notebook(lab.server, OTHER, "x = 1")
    write_notebook(lab.server, NOTEBOOK, *SOURCES)
    lab.open_notebook(OTHER)
    lab.open_sidebar()
    other = lab.new_session()  # bound to the other notebook, and still selected when ours opens
    assert lab.server.get(f"sessions/{other}").json()["notebook_path"] == OTHER

    lab.open_notebook(NOTEBOOK)
    lab.open_sidebar()
    assert lab.selected_session_id() == other
    lab.run_all_cells()
    lab.page.wait_for_function(_RAN_JS, timeout=60_000)
    lab.page.locator(ASK).wait_for(timeout=60_000)

    # Explain on the first cell: the toolbar offers Explain, not Fix (no error there)
    select_cell(lab, 0)
    lab.page.locator(EXPLAIN).wait_for()
    assert not lab.page.locator(FIX).is_visible()
    lab.page.click(EXPLAIN)
    mine = _wait_selected_other_than(lab, other)
    lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=cell]").wait_for(timeout=30_000)
    lab.wait_idle()
    stored = lab.server.get(f"sessions/{mine}").json()
    assert stored["notebook_path"] == NOTEBOOK
    [explain] = _user_turns(lab, mine)
    assert explain["content"] == "Explain this cell."
    assert [(a["kind"], a["text"], "output" in a) for a in explain["attachments"]] == [("cell", SOURCES[0], False)]
    assert _user_turns(lab, other) == []

    # Fix on the failed cell: the same session, with the traceback
    select_cell(lab, 1)
    lab.page.locator(FIX).wait_for()
    assert lab.page.locator(EXPLAIN).is_visible()
    keep_screenshot(lab, "cell-toolbar-explain-fix")
    lab.page.click(FIX)
    lab.page.locator(f"{USER} >> nth=1").wait_for(timeout=30_000)
    lab.wait_idle()
    assert lab.selected_session_id() == mine
    [_, fix] = _user_turns(lab, mine)
    assert fix["content"] == "Fix this cell."
    [attached] = fix["attachments"]
    assert attached["text"] == SOURCES[1]
    assert "ZeroDivisionError" in attached["output"] and "\x1b[" not in attached["output"]

    # The cell's context menu offers the same two, Fix only where there is an error
    lab.page.click(f"{CELL} >> nth=1", button="right")
    menu = lab.page.locator(".lm-Menu")
    menu.get_by_text("Fix with Hermes").wait_for()
    assert menu.get_by_text("Explain with Hermes").is_visible()
    lab.page.keyboard.press("Escape")

    # Reopened: Ask Hermes is drawn under the failed cell's output, not above its input
    lab.save_notebook()
    lab.open_notebook(NOTEBOOK)
    button = lab.page.locator(ASK)
    button.wait_for(timeout=30_000)
    failed = f"{CELL} >> nth=1"
    ask = _box(lab, ASK)
    inputs = _box(lab, f"{failed} >> .jp-Cell-inputWrapper")
    output = _box(lab, f"{failed} >> .jp-Cell-outputWrapper")
    assert ask["y"] >= output["y"] + output["height"] - 1 > inputs["y"] + inputs["height"] - 1, (ask, output, inputs)
    assert lab.page.locator(f"{failed} >> [data-testid=hermes-ask-error]").count() == 1
