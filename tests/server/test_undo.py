"""Undo and keep of an agent run's cell changes through the real API: exact restore, conflicts left alone,
decisions in the sidecar. The run's `cell_change` rows are journaled as the cell tools journal them: the
editor's read-back of real changes to a real notebook file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hermes_jupyter import events
from hermes_jupyter.ids import new_run_id
from hermes_jupyter.notebook.cell_edits import CellChange
from hermes_jupyter.server.notebook_editor import Provenance

from .client import HermesClient


def write_notebook(root: Path) -> Path:
    path = root / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("a = 1", id="c1"), new_markdown_cell("# Notes", id="c2")]), path)
    return path


def journal(hermes: Any, sid: str, run_id: str, changes: list[CellChange]) -> None:
    for change in changes:
        hermes.journals.append(sid, run_id, events.CELL_CHANGE, msgspec.to_builtins(change))
    hermes.journals.append(sid, run_id, events.DONE, {"session_id": sid})
    hermes.journals.close_writer(sid, run_id)


async def agent_run(api: HermesClient, hermes: Any) -> tuple[str, str, list[CellChange]]:
    """A session bound to nb.ipynb and one run of it that inserted, edited and deleted a cell."""
    sid = (await api.create_session(notebook_path="nb.ipynb"))["session_id"]
    run_id = new_run_id()
    prov = Provenance(session_id=sid, run_id=run_id, tool_call_id="call-1", model="demo", approved_by=None)
    editor = hermes.notebook_editor
    changes = [
        await editor.insert("nb.ipynb", "b = 2", "code", "c1", prov),
        await editor.edit("nb.ipynb", "c1", "a = 10", prov),
        await editor.delete("nb.ipynb", "c2", prov),
        await editor.edit("nb.ipynb", "missing", "x", prov),  # not applied: nothing to undo
    ]
    journal(hermes, sid, run_id, changes)
    return sid, run_id, changes


async def test_undo_restores_the_notebook_exactly_records_who_and_a_second_undo_is_a_no_op(
    api: HermesClient, hermes: Any, jp_root_dir: Path,
) -> None:
    path = write_notebook(jp_root_dir)
    original = nbformat.read(path, as_version=4)
    sid, run_id, changes = await agent_run(api, hermes)
    assert nbformat.read(path, as_version=4) != original

    code, answer = await api.call("POST", "runs", run_id, "notebook", "undo", body={})
    assert code == 200, answer
    assert sorted(answer["restored"]) == sorted([changes[0].cell_id, "c1", "c2"]) and answer["conflicts"] == []
    assert nbformat.read(path, as_version=4) == original
    _, session = await api.call("GET", "sessions", sid)
    record = session["cell_undo"][f"{run_id}:c1"]
    assert record["by"]["kind"] == "person" and record["at"] > 0

    before = path.read_bytes()
    code, again = await api.call("POST", "runs", run_id, "notebook", "undo", body={})
    assert code == 200 and again == {"restored": [], "conflicts": []}, "a second undo is a no-op"
    assert path.read_bytes() == before


async def test_a_cell_someone_changed_is_a_conflict_and_keeps_their_edit(
    api: HermesClient, hermes: Any, jp_root_dir: Path,
) -> None:
    path = write_notebook(jp_root_dir)
    sid, run_id, changes = await agent_run(api, hermes)
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "a = 10  # kept by the person"
    nbformat.write(nb, path)

    code, answer = await api.call("POST", "runs", run_id, "notebook", "undo", body={"cell_ids": ["c1"]})
    assert code == 200 and answer == {"restored": [], "conflicts": ["c1"]}
    assert nbformat.read(path, as_version=4).cells[0].source == "a = 10  # kept by the person"
    _, session = await api.call("GET", "sessions", sid)
    assert f"{run_id}:c1" not in session["cell_undo"], "a conflict is not recorded as undone"

    code, kept = await api.call("POST", "runs", run_id, "notebook", "keep", body={})
    assert code == 200 and kept == {"kept": [changes[0].cell_id, "c1", "c2"]}
    _, session = await api.call("GET", "sessions", sid)
    assert {k: v for k, v in session["cell_undo"].items()} == {f"{run_id}:{c}": "kept" for c in kept["kept"]}


async def test_bad_requests_are_plain_errors(api: HermesClient, hermes: Any, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir)
    _, run_id, _ = await agent_run(api, hermes)
    code, error = await api.call("POST", "runs", run_id, "notebook", "undo", body={"cell_ids": "c1"})
    assert code == 400 and "Choose the cells" in error["message"]
    code, error = await api.call("POST", "runs", new_run_id(), "notebook", "undo", body={})
    assert code == 404
    (jp_root_dir / "nb.ipynb").write_text("{broken", encoding="utf-8")
    code, error = await api.call("POST", "runs", run_id, "notebook", "undo", body={})
    assert code == 409 and "could not be read" in error["message"]


def test_a_turn_settled_after_its_undo_keeps_the_review_on_its_rows() -> None:
    from hermes_jupyter.runs.settle import store_turn
    from hermes_jupyter.sessions.store import Session
    from hermes_jupyter.transcript import TranscriptFold
    from hermes_jupyter.transcript.rows import CellChangeRow

    fold = TranscriptFold("r1", "s1")
    payload = {"action": "insert", "cell_id": "a1", "applied": True, "path": "nb.ipynb", "source_sha256": "x"}
    rows = [events.JournalRow(event_id=f"r1:{seq}", seq=seq, run_id="r1", session_id="s1", event=event, payload=p)
            for seq, (event, p) in enumerate([(events.CELL_CHANGE, payload), (events.DONE, {})], 1)]
    fold.feed(rows)
    session = Session("s1", cell_undo={"r1:a1": {"by": {"kind": "person"}, "at": 1.0}})
    store_turn(session, fold.snapshot(), None)
    (change,) = [r for r in session.turns[0].rows if isinstance(r, CellChangeRow)]
    assert change.review == "undone"
