"""Undo works from durable records only: a run's changes journaled before a server restart are undone by
the next server process, and its record survives another restart. Only a person may undo."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import msgspec
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from hermes_jupyter import events
from hermes_jupyter.ids import new_run_id
from hermes_jupyter.journal import Journals
from hermes_jupyter.notebook.cell_docs import FileCells
from hermes_jupyter.notebook.cell_edits import Provenance
from hermes_jupyter.notebook.cell_ops import apply_edit, apply_insert, verify

from ..server_process import JupyterServerProcess


@pytest.fixture
def server(tmp_path: Path) -> Iterator[JupyterServerProcess]:
    process = JupyterServerProcess(tmp_path).start()
    try:
        yield process
    finally:
        process.stop()


def change_offline(server: JupyterServerProcess, sid: str, run_id: str) -> None:
    """What a run did before the restart: the notebook changed on disk, its changes in the run's journal."""
    path = server.root_dir / "nb.ipynb"
    nb = nbformat.read(path, as_version=4)
    cells = FileCells(nb)
    prov = Provenance(session_id=sid, run_id=run_id, tool_call_id="call-1")
    edited = apply_edit(cells, "nb.ipynb", "c1", "a = 2", prov)
    inserted = apply_insert(cells, "nb.ipynb", "print(a)", "code", "c1", prov)
    nbformat.write(nb, path)
    fresh = FileCells(nbformat.read(path, as_version=4))
    journals = Journals(server.state_dir / "runs")
    try:
        for change in (verify(edited, fresh), verify(inserted, fresh)):
            journals.append(sid, run_id, events.CELL_CHANGE, msgspec.to_builtins(change))
        journals.append(sid, run_id, events.DONE, {"session_id": sid})
    finally:
        journals.close()


def test_undo_after_a_restart_restores_and_its_record_survives_the_next(server: JupyterServerProcess) -> None:
    path = server.root_dir / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("a = 1", id="c1")]), path)
    original = nbformat.read(path, as_version=4)
    sid = server.new_session(notebook_path="nb.ipynb")
    run_id = new_run_id()
    server.stop()
    change_offline(server, sid, run_id)
    server.start()

    response = server.post(f"runs/{run_id}/notebook/undo")
    assert response.status_code == 200, response.text
    assert response.json()["conflicts"] == [] and len(response.json()["restored"]) == 2
    assert nbformat.read(path, as_version=4) == original

    server.person_token = False  # the same token, no longer a person's: undo is refused in words
    server.restart()
    assert set(server.get(f"sessions/{sid}").json()["cell_undo"]) == {f"{run_id}:c1", *(
        f"{run_id}:{c}" for c in response.json()["restored"])}
    refused = server.post(f"runs/{run_id}/notebook/undo")
    assert refused.status_code == 403 and "Only a person can undo or keep" in refused.json()["message"]
    assert nbformat.read(path, as_version=4) == original
