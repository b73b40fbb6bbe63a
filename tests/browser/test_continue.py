"""Stop a count in the sidebar, then Continue: the answer goes on from the next number to N, once."""

from __future__ import annotations

import re

from .lab_page import RUN_OUTPUT, LabPage
from .test_kernel_restart import write_notebook

CONTINUE = "[data-testid=hermes-continue]"
RUN_MIME = "application/vnd.hermes.run+json"
N = 300


def test_continue_after_stop_finishes_the_count_below_the_kept_marker(lab: LabPage) -> None:
    lab.open()
    lab.open_sidebar()
    session_id = lab.new_session()
    lab.send(f"count to {N}")
    lab.wait_streaming(tokens=20)
    lab.click_stop()
    lab.wait_marker("cancelled")
    lab.wait_idle()
    lab.page.wait_for_selector(CONTINUE)  # offered on the answer that ends the session
    lab.screenshot("continue-offered")
    lab.page.click(CONTINUE)
    lab.page.wait_for_selector(CONTINUE, state="detached")
    lab.wait_idle(timeout_s=60)
    lab.screenshot("continue")

    shown = " ".join(lab.assistant_texts())
    assert [int(n) for n in re.findall(r"\d+", shown)] == list(range(1, N + 1)), shown
    assert [m.kind for m in lab.markers()] == ["cancelled"]  # the marker stays where the answer stopped
    assert lab.user_texts() == [f"count to {N}"]  # nothing was sent as a new user message
    assert lab.page.locator(CONTINUE).count() == 0  # the answer finished: nothing left to continue
    stored = lab.server.get(f"sessions/{session_id}").json()["messages"]
    assert [m.get("type", m["role"]) for m in stored] == ["user", "assistant", "cancelled", "assistant"]


_CELL_BUNDLE_JS = """() => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[1];
  const outputs = cell.model.outputs;
  return Array.from({length: outputs.length}, (_, i) => outputs.get(i).data);
}"""


def test_continue_in_the_cell_streams_the_rest_into_the_same_cell(lab: LabPage) -> None:
    write_notebook(lab.server, "cell_continue.ipynb", f"count to {N}")
    lab.open_notebook("cell_continue.ipynb")
    lab.run_all_cells()
    lab.wait_run_output_streaming(tokens=20)
    lab.click_run_output_stop()
    lab.wait_run_output_status("cancelled")
    first = lab.run_output().get_attribute("data-run-id")
    lab.page.click(f"{RUN_OUTPUT} [data-testid=hermes-run-continue]")
    lab.wait_run_output_status("completed", timeout_s=60)
    lab.page.wait_for_function(f"() => ({_CELL_BUNDLE_JS})().some(d => d['{RUN_MIME}']?.status === 'completed')")
    lab.screenshot("cell-continue")

    assert lab.page.locator(RUN_OUTPUT).count() == 1  # one cell, one output: the same cell goes on
    (data,) = lab.page.evaluate(_CELL_BUNDLE_JS)
    ref = data[RUN_MIME]
    assert ref["continues"] == first and ref["run_id"] != first
    assert data == lab.server.get(f"runs/{ref['run_id']}/bundle").json()  # the server's bundle, as rendered there
    body = data["text/markdown"].split("<sub>")[0]
    assert "Task cancelled." in body  # the marker stays between the parts
    assert [int(n) for n in re.findall(r"\b\d+\b", body)] == list(range(1, N + 1))
    assert [m.kind for m in lab.run_output_markers()] == ["cancelled"]
