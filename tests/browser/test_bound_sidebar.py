"""Scene: bind a sidebar session to the open notebook; a sidebar run then sees the notebook's DataFrame."""

from __future__ import annotations

import nbformat
import pytest

from .lab_page import SIDEBAR, LabPage

pytest.importorskip("pandas")

NOTEBOOK = "bound_sales.ipynb"
SETUP = "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south', 'east'], 'units': [3, 5, 8]})"
_RAN_JS = "() => { const w = window.jupyterapp.shell.currentWidget; return !!w && !!w.content &&" \
          " w.content.widgets[0].model.executionCount === 1; }"
_KERNEL_JS = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id"


def test_a_sidebar_run_on_a_session_bound_to_the_open_notebook_names_its_dataframe(lab: LabPage) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SETUP)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.server.notebooks / NOTEBOOK)
    lab.open_notebook(NOTEBOOK)
    lab.run_all_cells()
    lab.page.wait_for_function(_RAN_JS, timeout=60_000)
    kernel_id = lab.page.evaluate(_KERNEL_JS)

    lab.open_sidebar()
    session_id = lab.new_session()
    binding = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-binding-text]")
    assert binding.inner_text() == "Sees no notebook."
    bind = lab.page.locator(f"{SIDEBAR} [data-testid=hermes-bind]")
    assert bind.inner_text() == f"Bind to {NOTEBOOK}"
    bind.click()
    lab.page.wait_for_selector(f"{SIDEBAR} [data-testid=hermes-binding][data-bound=true]")
    assert binding.inner_text() == f"Sees the notebook {NOTEBOOK}"
    assert bind.count() == 0  # already bound to this notebook and kernel
    stored = lab.server.get(f"sessions/{session_id}").json()
    assert (stored["notebook_path"], stored["kernel_id"]) == (NOTEBOOK, kernel_id)

    lab.send("use the notebook")  # the sidebar posts only the message: the session brings the binding
    lab.wait_idle(timeout_s=60)
    lab.screenshot("bound-sidebar")
    answer = lab.last_message_text()
    assert "sales is a DataFrame of 3 rows × 2 columns" in answer, answer
    run_id = lab.server.get(f"sessions/{session_id}").json()["last_run_id"]
    rows = lab.server.get(f"runs/{run_id}/events", after_seq=0).json()["events"]
    assert [r["payload"]["name"] for r in rows if r["event"] == "tool"] == ["list_variables", "inspect_variable"]
