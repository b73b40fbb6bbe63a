"""Interrupt the kernel (■) while a `%%hermes` cell streams in JupyterLab: the run is cancelled on the
server, the cell keeps the partial output and the cancel note, no traceback; Run All stops there."""

from __future__ import annotations

import nbformat

from .lab_page import LabPage, is_count_prefix

RUN_MIME = "application/vnd.hermes.run+json"
NOTEBOOK = "kernel_interrupt.ipynb"


def test_interrupt_cancels_the_run_without_a_traceback_and_run_all_stops_there(lab: LabPage) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"),
                nbformat.v4.new_code_cell("%%hermes\ncount to 2000"),
                nbformat.v4.new_code_cell("print('the cell after')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.server.notebooks / NOTEBOOK)
    lab.open_notebook(NOTEBOOK)
    lab.run_all_cells()
    lab.wait_run_output_streaming(tokens=30)

    lab.execute("kernelmenu:interrupt", wait=False)
    lab.wait_run_output_status("cancelled")
    lab.wait_run_output_marker("cancelled")
    lab.wait_kernel_idle()
    lab.screenshot("kernel-interrupt")

    partial = lab.run_output_text()
    assert is_count_prefix(partial) and 30 <= len(partial.split()) < 2000, partial
    notebook = lab.page.locator(".jp-NotebookPanel").first
    assert notebook.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    shown = notebook.inner_text()
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown
    assert notebook.locator(".jp-CodeCell").nth(2).locator(".jp-OutputArea-output").count() == 0  # not run

    lab.save_notebook()
    saved = nbformat.read(lab.server.notebooks / NOTEBOOK, as_version=4)
    outputs = saved.cells[1].outputs
    assert [o["output_type"] for o in outputs] == ["display_data"], outputs
    assert outputs[0]["data"][RUN_MIME]["status"] == "cancelled"
    assert saved.cells[2].outputs == []
