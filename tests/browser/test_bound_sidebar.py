"""Scene: a sidebar session started with a notebook in front sees that notebook at once; a sidebar run
then names its DataFrame, and still does after Shut Down Kernel and a new kernel (the binding follows
the notebook, not a kernel id). A session made with no notebook in front is bound with "Bind to"."""

from __future__ import annotations

import pytest

from .lab_page import SIDEBAR, LabPage
from .test_notebook_assist import keep_screenshot

pytest.importorskip("pandas")

NOTEBOOK = "bound_sales.ipynb"
SETUP = "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south', 'east'], 'units': [3, 5, 8]})"
_KERNEL_JS = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id"


_SHUT_DOWN_JS = "() => { void window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }"
_NO_KERNEL_JS = "() => !window.jupyterapp.shell.currentWidget.sessionContext.session"
_NEW_KERNEL_JS = "() => { void window.jupyterapp.shell.currentWidget.sessionContext.changeKernel({name: 'python3'}); }"
_CLEARED_JS = "() => window.jupyterapp.shell.currentWidget.content.widgets[0].model.executionCount === null"


def _ask_names_sales(lab: LabPage, session_id: str) -> None:
    lab.send("use the notebook")  # the sidebar posts only the message: the session brings the binding
    lab.wait_idle(timeout_s=60)
    answer = lab.last_message_text()
    assert "sales is a DataFrame of 3 rows × 2 columns" in answer, answer
    run_id = lab.server.get(f"sessions/{session_id}").json()["last_run_id"]
    rows = lab.server.get(f"runs/{run_id}/events", after_seq=0).json()["events"]
    assert [r["payload"]["name"] for r in rows if r["event"] == "tool"] == ["list_variables", "inspect_variable"]


def test_a_session_started_with_the_notebook_in_front_sees_it_across_a_new_kernel(lab: LabPage) -> None:
    lab.write_notebook(NOTEBOOK, SETUP)
    lab.open()
    lab.open_sidebar()
    before = lab.new_session()  # no notebook in front: sees none until bound
    binding = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-binding-text]")
    assert binding.inner_text() == "Sees no notebook."

    lab.open_notebook(NOTEBOOK)
    lab.run_all_cells()
    lab.wait_cells_ran(1)
    kernel_id = lab.page.evaluate(_KERNEL_JS)
    lab.open_sidebar()
    lab.open_session(before)
    bind = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-bind]")
    assert bind.inner_text() == f"Bind to {NOTEBOOK}"
    bind.click()
    lab.page.wait_for_selector(f"{SIDEBAR} [data-testid=hermes-binding][data-bound=true]")
    assert bind.count() == 0

    session_id = lab.new_session()  # the notebook is in front: the new session is bound to it at once
    lab.page.wait_for_selector(f"{SIDEBAR} [data-testid=hermes-binding][data-bound=true]")
    assert binding.inner_text() == f"Sees the notebook {NOTEBOOK}"
    assert bind.count() == 0
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert (stored["notebook_path"], stored["kernel_id"]) == (NOTEBOOK, kernel_id)
    _ask_names_sales(lab, session_id)
    keep_screenshot(lab, "bound-sidebar")
    keep_screenshot(lab, "bound-sidebar-dark", dark=True)

    # Kernel > Shut Down Kernel, then a new kernel, whose cells run again: the same session, no Bind
    lab.page.evaluate(_SHUT_DOWN_JS)
    lab.page.wait_for_function(_NO_KERNEL_JS, timeout=60_000)
    lab.page.evaluate(_NEW_KERNEL_JS)
    lab.wait_kernel_idle()
    new_kernel = lab.page.evaluate(_KERNEL_JS)
    assert new_kernel != kernel_id
    lab.execute("notebook:clear-all-cell-outputs")
    lab.page.wait_for_function(_CLEARED_JS, timeout=30_000)
    lab.run_all_cells()
    lab.wait_cells_ran(1)
    assert binding.inner_text() == f"Sees the notebook {NOTEBOOK}" and bind.count() == 0
    _ask_names_sales(lab, session_id)
    assert lab.server.get(f"sessions/{session_id}").json()["kernel_id"] == new_kernel
