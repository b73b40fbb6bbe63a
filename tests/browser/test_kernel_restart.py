"""Scene 4: restart the kernel while a `%%hermes` cell streams."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import hermes_jupyter

from ..server_process import JupyterServerProcess
from .lab_page import LabPage, is_count_prefix

RUN_MIME = "application/vnd.hermes.run+json"
NOTEBOOK = "kernel_restart.ipynb"
MAGIC = Path(hermes_jupyter.__file__).parent / "kernel" / "magic.py"

pytestmark = pytest.mark.skipif(
    not MAGIC.exists(), reason=f"the %%hermes magic ({MAGIC.relative_to(MAGIC.parents[2])}) is not written yet"
)


def write_notebook(server: JupyterServerProcess, name: str, prompt: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext hermes_jupyter"), nbformat.v4.new_code_cell(f"%%hermes\n{prompt}")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, server.notebooks / name)


def test_kernel_restart_mid_stream_leaves_the_partial_output_and_a_marker(lab: LabPage) -> None:
    # The magic starts a run bound to its kernel id and shows one display carrying
    # application/vnd.hermes.run+json; our renderer follows that run by id over the WebSocket
    # (no kernel needed). Restarting the kernel makes the server interrupt the run
    # (cause kernel_restart); the renderer sees the run end and writes the final bundle —
    # partial text plus marker — into the cell, marking the notebook dirty so a save keeps it.
    write_notebook(lab.server, NOTEBOOK, "count to 2000")
    lab.open_notebook(NOTEBOOK)
    lab.run_all_cells()
    lab.wait_run_output_streaming(tokens=30)

    lab.restart_kernel()
    lab.wait_run_output_status("interrupted")
    lab.wait_run_output_marker("interrupted")
    lab.screenshot("kernel-restart")

    partial = lab.run_output_text()
    assert is_count_prefix(partial) and 30 <= len(partial.split()) < 2000, partial
    markers = lab.run_output_markers()
    assert [(m.kind, m.cause) for m in markers] == [("interrupted", "kernel_restart")], markers
    assert "partial output above was recovered from the run journal" in markers[0].text

    # The rebuilt output is in the model, not only on screen: saving writes it to disk.
    assert lab.notebook_dirty()
    lab.save_notebook()
    saved = nbformat.read(lab.server.notebooks / NOTEBOOK, as_version=4)
    (output,) = saved.cells[1].outputs
    assert output["data"][RUN_MIME]["status"] == "interrupted"
    assert "application/vnd.jupyter.widget-view+json" not in output["data"]
    markdown = output["data"]["text/markdown"]
    assert markdown.startswith(partial) and "**Response interrupted.**" in markdown

    run = output["data"][RUN_MIME]
    assert lab.server.get(f"runs/{run['run_id']}").json()["status"] == "interrupted"
    last = lab.server.get(f"sessions/{run['session_id']}").json()["messages"][-1]
    assert (last["type"], last["interruption_cause"]) == ("interrupted", "kernel_restart")
