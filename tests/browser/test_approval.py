"""An approval asked mid-run: answered with the card's buttons, after which the tool card is done
everywhere the run is shown (sidebar, a second tab, the live cell, the saved notebook)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

import hermes_jupyter

from ..server_process import JupyterServerProcess
from .lab_page import RUN_OUTPUT, SIDEBAR, LabPage

RUN_MIME = "application/vnd.hermes.run+json"
PROMPT = "please ask for approval first"
#: The demo agent's tool card and its approval card (docs/journal.md: one card per id and kind).
TOOL_ID = "demo-tool-2"
APPROVAL_ID = "demo-approval-1"
MAGIC = Path(hermes_jupyter.__file__).parent / "kernel" / "magic.py"


def approval(root: str) -> str:
    return f"{root} [data-testid=hermes-approval-card][data-approval-id={APPROVAL_ID}]"


def tool_card(root: str, state: str) -> str:
    return f"{root} [data-testid=hermes-tool-card][data-tid={TOOL_ID}][data-state={state}]"


def allow_once(lab: LabPage, root: str) -> None:
    """Wait for the pending card's buttons and answer Allow once; nothing runs before the click."""
    button = lab.page.locator(f"{approval(root)} [data-testid=hermes-approval][data-pending=true] "
                              "[data-testid=hermes-approval-allow_once]")
    button.wait_for(timeout=30_000)
    lab.page.locator(tool_card(root, "running")).wait_for(state="attached")
    button.click()


def assert_answered(lab: LabPage, root: str) -> None:
    lab.page.locator(tool_card(root, "done")).wait_for(state="attached", timeout=30_000)
    lab.page.locator(f"{approval(root)}[data-state=resolved] [data-testid=hermes-approval][data-choice=allow_once]"
                     ).wait_for(state="attached", timeout=30_000)
    assert lab.page.locator(f"{root} [data-testid=hermes-tool-card][data-state=running]").count() == 0
    # text_content: the answer sits in the card's fold, which may be closed (inner_text of a closed fold is "")
    said = lab.page.locator(f"{approval(root)} [data-testid=hermes-approval][data-answered-by=person]").text_content()
    assert said and said.startswith("Allowed once by "), said  # who answered (wording.answer_words)


def test_approved_tool_card_is_done_in_the_sidebar_and_a_second_tab(
    lab: LabPage, make_lab: Callable[[JupyterServerProcess], LabPage]
) -> None:
    # The demo journals `tool`, then `approval {pending}`; the card's "Allow once" POSTs
    # runs/{id}/approvals/{aid}; the resolution updates the approval card and the later
    # `tool_complete` finishes the tool card: two cards, neither replaces the other.
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send(PROMPT)
    allow_once(lab, SIDEBAR)
    assert_answered(lab, SIDEBAR)
    lab.wait_idle()
    lab.wait_transcript_rendered()
    # Settled, the cards come from the session the server merged: still done, still answered.
    assert_answered(lab, SIDEBAR)
    lab.screenshot("approval-answered")

    other = make_lab(lab.server)
    other.open()
    other.open_sidebar()
    other.open_session(session_id)
    assert_answered(other, SIDEBAR)
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert "Approved" in stored["messages"][-1]["content"]


@pytest.mark.skipif(not MAGIC.exists(), reason="the %%hermes magic is not written yet")
def test_approved_tool_card_is_done_in_the_live_cell_and_the_saved_notebook(lab: LabPage) -> None:
    # The Lab renderer follows the cell's run by id and answers its approval; when the run
    # settles it writes the server's bundle (GET runs/{id}/bundle) into the output: the saved
    # notebook holds exactly those bytes, never a bundle rendered in the browser.
    name = "approval.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"), nbformat.v4.new_code_cell(f"%%hermes\n{PROMPT}")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.server.notebooks / name)
    lab.open_notebook(name)
    lab.run_all_cells()
    allow_once(lab, RUN_OUTPUT)
    assert_answered(lab, RUN_OUTPUT)
    lab.wait_run_output_status("completed")
    lab.screenshot("approval-cell")

    lab.page.wait_for_function("window.jupyterapp.shell.currentWidget.context.model.dirty")
    lab.save_notebook()
    saved = nbformat.read(lab.server.notebooks / name, as_version=4)
    (output,) = saved.cells[1].outputs
    run_id = output["data"][RUN_MIME]["run_id"]
    assert output["data"][RUN_MIME]["status"] == "completed"
    assert dict(output["data"]) == lab.server.get(f"runs/{run_id}/bundle").json()
    assert "application/vnd.jupyter.widget-view+json" not in output["data"]

    # Reopened, the saved (finished) output is read from the journal again: the same two cards.
    lab.open_notebook(name)
    lab.wait_run_output_status("completed")
    assert_answered(lab, RUN_OUTPUT)
