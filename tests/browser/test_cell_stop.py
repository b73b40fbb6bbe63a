"""Stop in a notebook cell: the Lab renderer of a live `%%hermes` run has its own Stop."""

from __future__ import annotations

import nbformat
import pytest

from .lab_page import STOP, LabPage, is_count_prefix
from .test_kernel_restart import MAGIC, write_notebook

pytestmark = pytest.mark.skipif(not MAGIC.exists(), reason="the %%hermes magic is not written yet")

NOTEBOOK = "cell_stop.ipynb"


def test_stop_in_the_cell_cancels_the_run_and_keeps_the_partial_output(lab: LabPage) -> None:
    # The renderer (not the kernel widget) shows Stop while the run is live; clicking it POSTs
    # runs/{id}/cancel. The cell then shows the server's settled rows: the partial reply and
    # the cancel note, and the Stop button is gone.
    write_notebook(lab.server, NOTEBOOK, "count to 100000")
    lab.open_notebook(NOTEBOOK)
    lab.run_all_cells()
    lab.wait_run_output_streaming(tokens=20)
    lab.screenshot("cell-streaming-light")

    lab.click_run_output_stop()
    lab.wait_run_output_status("cancelled")
    lab.wait_run_output_marker("cancelled")

    partial = lab.run_output_text()
    assert is_count_prefix(partial) and 20 <= len(partial.split()) < 100000, partial
    markers = lab.run_output_markers()
    assert [m.kind for m in markers] == ["cancelled"], markers
    assert "cancel" in markers[0].text.lower()
    assert lab.run_output().locator("[data-testid=hermes-run-stop]").count() == 0
    run_id = lab.run_output().get_attribute("data-run-id")
    assert lab.server.get(f"runs/{run_id}").json()["status"] == "cancelled"


def test_the_sidebar_follows_a_cell_run_of_its_selected_session_live(lab: LabPage) -> None:
    # The sidebar shows the notebook's session, idle, before the cell runs. A `%%hermes` cell
    # then starts a run in that session from the kernel: the sidebar notices the session's
    # active run (by the list poll while it is shown), attaches to its stream and shows it
    # streaming with Stop; Stop there cancels the run the cell shows.
    name = "follow-me"
    # bound to the notebook: its kernel reaches the notebook's sessions, never an unbound one
    session_id = lab.server.new_session(title=name, notebook_path="follow.ipynb")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"),
                nbformat.v4.new_code_cell(f"%%hermes --session {name}\ncount to 100000")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.server.notebooks / "follow.ipynb")
    lab.open_notebook("follow.ipynb")
    lab.open_sidebar()
    lab.open_session(session_id)
    assert lab.chat_status() == "idle"

    lab.run_all_cells()
    lab.wait_streaming(tokens=20)
    assert lab.page.is_visible(STOP)
    lab.screenshot("sidebar-follows-cell-light")
    lab.click_stop()

    lab.wait_run_output_status("cancelled")
    lab.wait_marker("cancelled")
    lab.wait_idle()
    assert lab.run_output_markers()[-1].kind == "cancelled"
