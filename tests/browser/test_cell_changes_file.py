"""With collaboration off the server writes the agent's cells into the file while the notebook is open
with an unsaved edit of the person's: the open notebook takes the agent's cells from the file and keeps
the person's edit, and saving then writes both, without JupyterLab asking whether to overwrite a newer
file (docs/sidebar.md, labextension/src/plugins/cell-changes.ts).
"""

from __future__ import annotations

from hermes_jupyter.agents.demo_analysis import PLOT

from .lab_page import LabPage
from .test_agent_edits import (
    FIRST, FIXED, PROMPT, TURN_S, answer_next_approval, bound_notebook, choose_autonomy, show_session,
    wait_model_sources, wait_saved_sources,
)

MINE = FIRST + "\n# mine, not saved yet"


def test_an_unsaved_edit_and_the_agents_cells_are_both_in_the_next_save(lab: LabPage) -> None:
    name = "agent-unsaved.ipynb"
    session_id, _ = bound_notebook(lab.server, name)
    show_session(lab, name, session_id)
    choose_autonomy(lab, session_id, "agent")
    lab.page.evaluate("(s) => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[0].setSource(s)",
                      MINE)
    assert lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
    lab.send(PROMPT)
    answer_next_approval(lab, "allow_turn")
    lab.wait_idle(timeout_s=TURN_S)
    wait_model_sources(lab, [MINE, FIXED, PLOT])  # the agent's cells from the file, the person's edit kept
    outputs = lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells[2].outputs")
    assert any("image/png" in o.get("data", {}) for o in outputs)  # its run too

    lab.execute("docmanager:save", wait=False)
    cells = wait_saved_sources(lab.server, name, [MINE, FIXED, PLOT], outputs=True)
    assert lab.page.locator(".jp-Dialog").count() == 0  # no "File Changed" question
    assert all("hermes" in c.metadata for c in cells[1:])
