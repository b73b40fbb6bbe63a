"""Hermes helping inside the notebook: attachments from the composer, Ask Hermes on an error,
a proposed cell accepted next to its cell, and a code block inserted below the active cell.

Nothing Hermes puts into the notebook runs: every inserted cell keeps `execution_count: null`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat

from ..server_process import JupyterServerProcess
from .lab_page import SIDEBAR, LabPage

USER = f"{SIDEBAR} .jp-HermesMessage[data-role=user]"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DEMO_PROPOSAL = 'print("Hello from the Hermes demo agent")'


def write_notebook(server: JupyterServerProcess, name: str, *sources: str, kernel: bool = True) -> str:
    """A notebook of code cells; without `kernel` it names no kernelspec (Lab asks, the test answers No Kernel)."""
    spec = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}} if kernel else {}
    nb = nbformat.v4.new_notebook(metadata=spec)
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, server.notebooks / name)
    return name


def cells(lab: LabPage) -> list[dict[str, Any]]:
    """The open notebook's cells as its model holds them now (unsaved edits included)."""
    return list(lab.page.evaluate("window.jupyterapp.shell.currentWidget.content.model.toJSON().cells"))


def keep_screenshot(lab: LabPage, name: str, *, dark: bool = False) -> None:
    """A screenshot kept in docs/screenshots/ (in the dark theme with `dark`, then back to light)."""
    shutil.copyfile(lab.screenshot_dark(name) if dark else lab.screenshot(name), SCREENSHOTS / f"{name}.png")


def select_cell(lab: LabPage, index: int) -> None:
    lab.page.evaluate(f"window.jupyterapp.shell.currentWidget.content.activeCellIndex = {index}")


def test_the_active_cell_is_attached_shown_as_a_chip_and_on_the_user_row_and_reaches_the_agent(lab: LabPage) -> None:
    path = write_notebook(lab.server, "assist-attach.ipynb", "total = 1 + 1\nprint(total)", kernel=False)
    lab.open_notebook(path, kernel=False)
    select_cell(lab, 0)
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.page.click(f"{SIDEBAR} [data-testid=hermes-attach-cell]")
    chip = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-attachment-chip][data-kind=cell]")
    chip.wait_for()
    assert chip.locator(".jp-HermesAttach-label").inner_text() == "#1"
    chip.locator("[data-testid=hermes-attachment-remove]").click()
    assert chip.count() == 0  # removed: nothing would be sent
    lab.page.click(f"{SIDEBAR} [data-testid=hermes-attach-cell]")
    chip.wait_for()
    lab.page.fill(f"{SIDEBAR} [data-testid=hermes-composer]", "What does this cell print?")
    keep_screenshot(lab, "attachment-chips")

    lab.send("What does this cell print?")
    lab.wait_idle()
    lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=cell]").wait_for()
    assert chip.count() == 0  # sent: the composer is empty again
    assert "You attached cell #1 (2 lines)." in lab.last_message_text()
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"][0]["attachments"]
    assert stored == [{"kind": "cell", "label": "#1", "text": "total = 1 + 1\nprint(total)", "path": path,
                       "cell_id": stored[0]["cell_id"]}]  # no kernel yet: no language to name


def test_ask_hermes_on_an_error_output_sends_the_cell_and_its_traceback(lab: LabPage) -> None:
    path = write_notebook(lab.server, "assist-error.ipynb", "ratio = 1 / 0")
    lab.open_notebook(path)
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.run_all_cells()
    button = lab.page.locator(".jp-NotebookPanel [data-testid=hermes-ask-error]")
    button.wait_for(timeout=60_000)
    button.click()
    lab.page.locator(f"{USER} [data-testid=hermes-attachments] li[data-kind=cell]").wait_for(timeout=30_000)
    lab.wait_idle()
    assert "You attached cell In [1] (1 line)." in lab.last_message_text()
    [turn] = [m for m in lab.server.get(f"sessions/{session_id}").json()["messages"] if m["role"] == "user"]
    assert turn["content"].startswith("This cell failed.")
    assert turn["attachments"][0]["text"] == "ratio = 1 / 0"
    assert "ZeroDivisionError" in turn["attachments"][0]["output"]
    assert "\x1b[" not in turn["attachments"][0]["output"]


def test_an_accepted_proposal_is_inserted_next_to_its_cell_and_not_run(lab: LabPage) -> None:
    path = write_notebook(lab.server, "assist-propose.ipynb", "import math")
    server = lab.server
    session_id = server.new_session(notebook_path=path)
    run_id = server.post(f"sessions/{session_id}/runs", {"message": "propose a cell", "notebook_path": path}).json()["run_id"]
    lab.open_notebook(path)
    lab.open_sidebar()
    lab.page.wait_for_selector(f"{SIDEBAR} .jp-HermesSessionItem[data-session-id='{session_id}']", timeout=30_000)
    lab.open_session(session_id)

    inline = lab.page.locator(".jp-NotebookPanel [data-testid=hermes-proposal-inline][data-state=pending]")
    inline.wait_for(timeout=30_000)
    card = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-proposal-card]")
    assert card.get_attribute("data-state") == "pending"
    assert DEMO_PROPOSAL in inline.locator("[data-testid=hermes-proposal-diff]").inner_text()
    keep_screenshot(lab, "proposal-diff")

    inline.locator("[data-testid=hermes-proposal-accept]").click()
    lab.page.locator(f"{SIDEBAR} [data-testid=hermes-proposal-card][data-state=accepted]").wait_for()
    assert inline.count() == 0  # decided: no longer offered next to the cell
    lab.page.wait_for_timeout(1000)  # anything that would run it would have started by now
    inserted = cells(lab)
    assert [c["source"] for c in inserted] == ["import math", DEMO_PROPOSAL]
    assert inserted[1]["execution_count"] is None and inserted[1]["outputs"] == []
    row_id = f"{run_id}:proposal:" + card.get_attribute("data-proposal-id")  # type: ignore[operator]
    assert server.get(f"sessions/{session_id}").json()["proposal_decisions"] == {row_id: "accepted"}


def test_a_code_block_in_an_answer_is_inserted_below_the_active_cell_not_run(lab: LabPage) -> None:
    path = write_notebook(lab.server, "assist-code.ipynb", "x = 1", "y = 2", kernel=False)
    lab.open_notebook(path, kernel=False)
    select_cell(lab, 0)
    lab.open_sidebar()
    lab.new_session()
    lab.send("write some code")
    lab.wait_idle()
    lab.wait_transcript_rendered()
    insert = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-code-insert]").first
    insert.click()
    after = cells(lab)
    assert [c["source"].split("\n")[0] for c in after] == ["x = 1", "def mean(xs: list[float]) -> float:", "y = 2"]
    assert after[1]["execution_count"] is None and after[1]["outputs"] == []
