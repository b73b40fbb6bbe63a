"""Undo of a real agent turn: the demo's `analyse the sales data` in a real kernel (Agent, no asking) changes
the notebook file; Undo all puts the file back exactly, and the session's stored turn says "undone"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from ..agents.test_demo_analysis_server import demo_server, run_scene
from ..server_process import JupyterServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    with demo_server(tmp_path_factory.mktemp("undo-demo")) as process:
        yield process


def settled_turn(server: JupyterServerProcess, session_id: str, run_id: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        turns = server.get(f"sessions/{session_id}").json().get("turns") or []
        found = [t for t in turns if t["run_id"] == run_id]
        if found:
            return found[0]  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never settled into a stored turn")


def test_undo_all_after_a_real_agent_turn_restores_the_file_exactly(server: JupyterServerProcess) -> None:
    name = "undo.ipynb"
    run_id, rows = run_scene(server, name, "agent_auto")
    changed = [r["payload"] for r in rows if r["event"] == "cell_change"]
    assert [c["action"] for c in changed] == ["insert", "run", "edit", "run", "insert", "run"] and all(
        c["applied"] for c in changed)
    session_id = rows[0]["session_id"]
    nb = nbformat.read(server.notebooks / name, as_version=4)
    assert len(nb.cells) == 3
    original = nbformat.v4.new_notebook(cells=[nb.cells[0]], metadata=nb.metadata)
    settled_turn(server, session_id, run_id)  # the person undoes a finished turn

    answer = server.post(f"runs/{run_id}/notebook/undo")
    assert answer.status_code == 200, answer.text
    inserted = sorted({c["cell_id"] for c in changed})
    assert sorted(answer.json()["restored"]) == inserted and answer.json()["conflicts"] == []
    assert nbformat.read(server.notebooks / name, as_version=4) == original

    turn = settled_turn(server, session_id, run_id)
    reviews = {r["review"] for r in turn["rows"] if r["kind"] == "cell_change"}
    assert reviews == {"undone"}, turn["rows"]
