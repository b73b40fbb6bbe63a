"""The review of agent edits is readable in light and dark (axe-core and WCAG AA text contrast).

After the demo's `analyse the sales data` in Agent mode, the sidebar holds the autonomy picker, the
approval cards with "Allow for this turn", the card of changed cells (diffs, Keep / Undo, Rewind
hidden for the newest turn) and, in the notebook, a badge on each agent cell; one cell edited by
hand reads "edited since" (docs/sidebar.md, docs/notebook-edits.md).
"""

from __future__ import annotations

import json

import pytest

from hermes_jupyter.agents.demo_analysis import PLOT

from .lab_page import SIDEBAR, TWO_FRAMES, LabPage
from .test_agent_edits import (
    CARD, FIRST, FIXED, PROMPT, TURN_S, answer_next_approval, bound_notebook, choose_autonomy, show_session,
    wait_model_sources,
)
from .test_readable import _AXE_JS, _CONTRAST_JS, AXE

BADGES = ".jp-NotebookPanel .jp-HermesCellBadge"
#: axe over our own elements in the notebook too (the badges); the rest of JupyterLab is not ours.
_AXE_BADGES_JS = _AXE_JS.replace("[['.jp-HermesSidebar'], ['.jp-HermesRunOutput']]",
                                 "[['.jp-HermesSidebar'], ['.jp-HermesCellBadge']]")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_change_card_picker_and_badges_are_readable(lab: LabPage, theme: str) -> None:
    name = f"agent-readable-{theme}.ipynb"
    session_id, _ = bound_notebook(lab.server, name)
    show_session(lab, name, session_id)
    choose_autonomy(lab, session_id, "agent")
    lab.send(PROMPT)
    answer_next_approval(lab, "allow_turn")
    lab.wait_idle(timeout_s=TURN_S)
    wait_model_sources(lab, [FIRST, FIXED, PLOT])
    lab.page.locator(f"{CARD} [data-hermes-action=undo-all]").wait_for(timeout=30_000)
    assert lab.page.locator(f"{CARD} [data-hermes-action=rewind]").count() == 0  # the newest turn: Undo all
    # A hand edit of the plot cell: its badge says so.
    lab.page.evaluate("() => { const m = window.jupyterapp.shell.currentWidget.content.model;"
                      " m.sharedModel.cells[2].setSource(m.sharedModel.cells[2].getSource() + '\\n# mine'); }")
    lab.page.locator(f"{BADGES}[data-hermes-badge=edited]").wait_for(timeout=30_000)
    assert lab.page.locator(f"{BADGES}[data-hermes-badge=agent]").count() == 1
    lab.page.locator(CARD).scroll_into_view_if_needed()
    if theme == "dark":
        lab.set_theme("dark")
    try:
        lab.page.evaluate(TWO_FRAMES)
        lab.page.add_script_tag(path=str(AXE))
        violations = lab.page.evaluate(_AXE_BADGES_JS)
        contrast = lab.page.evaluate(_CONTRAST_JS, [".jp-HermesSidebar", ".jp-HermesCellBadge"])
        lab.screenshot(f"cell-changes-readable-{theme}")
    finally:
        if theme == "dark":
            lab.set_theme("light")
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=1)
    assert contrast["failures"] == [], json.dumps(contrast["failures"], indent=1)
    assert contrast["checked"] > 30, contrast
