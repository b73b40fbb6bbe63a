"""Reopening a notebook saved mid-run (issue 6, parts 3 and 4): no kernel involved."""

from __future__ import annotations

import time

import nbformat

from ..server_process import JupyterServerProcess
from .lab_page import RUN_OUTPUT, LabPage, counting, is_count_prefix

RUN_MIME = "application/vnd.hermes.run+json"
NOTEBOOK = "reopened.ipynb"
N = 1000  # 10 s at 0.01 s a token: still live when the page has loaded


def saved_live_output(run_id: str, session_id: str, text: str) -> nbformat.NotebookNode:
    """The display a `%%hermes` cell leaves in a notebook saved while its run streams (docs/notebook.md)."""
    return nbformat.v4.new_output("display_data", data={
        RUN_MIME: {"run_id": run_id, "session_id": session_id, "seq": 2, "status": "running"},
        "text/markdown": text, "text/plain": text,
        "application/vnd.jupyter.widget-view+json": {"model_id": "gone", "version_major": 2, "version_minor": 0},
    })


def wait_run(server: JupyterServerProcess, run_id: str, status: str, min_seq: int = 0, timeout_s: float = 30) -> None:
    """Poll GET runs/{id} until the run has `status` and at least `min_seq` journal rows."""
    deadline = time.monotonic() + timeout_s
    while True:
        info = server.get(f"runs/{run_id}").json()
        if info["status"] == status and info["last_seq"] >= min_seq:
            return
        assert time.monotonic() < deadline, f"run {run_id} never became {status} with seq ≥ {min_seq}: {info}"
        time.sleep(0.05)


def test_reopened_notebook_follows_live_runs_and_rebuilds_ended_ones(lab: LabPage) -> None:
    # Both outputs were saved with status "running"; the notebook is opened with no kernel. On open, the run renderer (rank -20, ahead
    # of the dead widget view) follows run A by run_id over the WebSocket until it completes;
    # the notebook recovery scan rebuilds run B, which the server interrupted when its kernel
    # shut down while no tab was open. Both final bundles land in the model, so a save keeps them.
    server = lab.server
    kernel = server.jupyter("POST", "api/kernels", {"name": "python3"}).json()
    session_b = server.new_session()
    run_b = server.start_run(session_b, "count to 100000", kernel_id=kernel["id"], notebook_path=NOTEBOOK)
    wait_run(server, run_b, "running", min_seq=20)
    assert server.jupyter("DELETE", f"api/kernels/{kernel['id']}").status_code == 204
    wait_run(server, run_b, "interrupted")
    session_a = server.new_session()
    run_a = server.start_run(session_a, f"count to {N}")

    nb = nbformat.v4.new_notebook()
    for prompt, output in ((f"count to {N}", saved_live_output(run_a, session_a, "1 2")),
                           ("count to 100000", saved_live_output(run_b, session_b, "1"))):
        cell = nbformat.v4.new_code_cell(f"%%hermes\n{prompt}")
        cell.outputs = [output]
        nb.cells.append(cell)
    nbformat.write(nb, server.notebooks / NOTEBOOK)

    lab.open_notebook(NOTEBOOK, kernel=False)
    live, ended = lab.page.locator(RUN_OUTPUT).all()
    lab.page.wait_for_selector(f"{RUN_OUTPUT}[data-run-id='{run_a}'][data-follow-state=live]")
    lab.page.wait_for_selector(f"{RUN_OUTPUT}[data-run-id='{run_a}'][data-status=completed]", timeout=30_000)
    lab.page.wait_for_selector(f"{RUN_OUTPUT}[data-run-id='{run_b}'][data-status=interrupted]")
    ended.locator(".jp-HermesMarker").scroll_into_view_if_needed()
    lab.screenshot("notebook-reopen")
    assert live.locator(".jp-HermesMessage-content").inner_text().strip() == counting(N)
    partial = ended.locator(".jp-HermesMessage[data-role=assistant] .jp-HermesMessage-content").inner_text().strip()
    assert is_count_prefix(partial), partial
    marker = ended.locator(".jp-HermesMarker")
    assert marker.get_attribute("data-cause") == "kernel_restart"

    assert lab.notebook_dirty()
    lab.save_notebook()
    saved = nbformat.read(server.notebooks / NOTEBOOK, as_version=4)
    bundles = [cell.outputs[0]["data"] for cell in saved.cells]
    assert [b[RUN_MIME]["status"] for b in bundles] == ["completed", "interrupted"]
    assert all("application/vnd.jupyter.widget-view+json" not in b for b in bundles)
    # The labextension writes the server's bundles, never one of its own.
    assert [dict(b) for b in bundles] == [server.get(f"runs/{run}/bundle").json() for run in (run_a, run_b)]
    assert bundles[0]["text/markdown"].startswith(counting(N))
    assert bundles[1]["text/markdown"].startswith(partial) and "**Response interrupted.**" in bundles[1]["text/markdown"]
