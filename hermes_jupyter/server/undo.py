"""Undo or keep what an agent run changed in its notebook (docs/notebook-edits.md).

Everything comes from durable records, so it works after a reload or a server restart: the
run's `cell_change` rows (the journal, sealed or not) say what the agent did and left; the
session sidecar's `cell_undo` says what the person already decided. A cell comes back only
if it still holds what the agent left (NotebookEditor.undo); otherwise it is a conflict and
stays as it is. A cell already undone is left out of the answer: a second undo is a no-op.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Iterable

import msgspec

from .. import events
from ..agents.answered import AnsweredBy
from ..journal import Journals
from ..notebook.cell_edits import CellChange
from ..sessions.store import SessionStore
from ..transcript.cell_reviews import reviewed_turns
from .notebook_editor import NotebookEditor, NotebookUnavailable
from .services import HermesServices

__all__ = ["NotebookUnavailable", "keep_run", "undo_run"]

KEPT = "kept"


def review_key(run_id: str, cell_id: str) -> str:
    """The sidecar key of one cell's decision: `<run>:<cell_id>`."""
    return f"{run_id}:{cell_id}"


def run_changes(journals: Journals, session_id: str, run_id: str) -> list[CellChange]:
    """The run's applied cell changes, in journal order (malformed rows are skipped)."""
    changes: list[CellChange] = []
    for row in journals.iter_rows(session_id, run_id):
        if row.event != events.CELL_CHANGE:
            continue
        try:
            change = msgspec.convert(row.payload, CellChange)
        except msgspec.ValidationError:
            continue
        if change.applied and change.cell_id:
            changes.append(change)
    return changes


async def undo_run(
    hermes: HermesServices, run_id: str, cell_ids: list[str] | None, by: AnsweredBy,
) -> dict[str, list[str]]:
    """`{restored, conflicts}` for the run's changed cells (all, or `cell_ids`); restored ones are recorded."""
    editor = _editor(hermes)
    session_id, changes, decided = await _load(hermes, run_id)
    wanted = _cells(changes, cell_ids)
    already = [c for c in wanted if _undone(decided.get(review_key(run_id, c)))]
    todo = [c for c in changes if c.cell_id in wanted and c.cell_id not in already]
    restored: list[str] = []
    conflicts: list[str] = []
    for path in dict.fromkeys(c.path for c in todo):
        back, kept = await editor.undo(path, [c for c in todo if c.path == path])
        restored += back
        conflicts += kept
    record = {"by": msgspec.to_builtins(by), "at": time.time()}
    await hermes.manager.offload(_record, hermes.store, session_id, run_id, restored, record)
    return {"restored": restored, "conflicts": conflicts}


async def keep_run(
    hermes: HermesServices, run_id: str, cell_ids: list[str] | None, by: AnsweredBy,
) -> dict[str, list[str]]:
    """`{kept}`: the run's changed cells (all, or `cell_ids`) marked kept, except those already undone."""
    session_id, changes, decided = await _load(hermes, run_id)
    kept = [c for c in _cells(changes, cell_ids) if not _undone(decided.get(review_key(run_id, c)))]
    await hermes.manager.offload(_record, hermes.store, session_id, run_id, kept, KEPT)
    return {"kept": kept}


def _editor(hermes: HermesServices) -> NotebookEditor:
    if hermes.notebook_editor is None:
        raise NotebookUnavailable("This server cannot change notebooks (no notebook editor is configured).")
    return hermes.notebook_editor


async def _load(hermes: HermesServices, run_id: str) -> tuple[str, list[CellChange], dict[str, Any]]:
    """The run's session, its applied changes and the session's decisions so far."""
    manager = hermes.manager
    session_id: str = await manager.offload(manager.status.session_of, run_id)
    changes = await manager.offload(run_changes, hermes.journals, session_id, run_id)
    session = await manager.offload(hermes.store.load, session_id)
    return session_id, changes, dict(session.cell_undo)


def _cells(changes: Iterable[CellChange], cell_ids: list[str] | None) -> list[str]:
    """The changed cells, in the order first changed, limited to `cell_ids` when given."""
    cells = dict.fromkeys(c.cell_id for c in changes)
    return [c for c in cells if cell_ids is None or c in cell_ids]


def _undone(decision: Any) -> bool:
    return decision is not None and decision != KEPT


def _record(store: SessionStore, session_id: str, run_id: str, cell_ids: list[str], value: Any) -> None:
    """Save each cell's decision in the sidecar and on the run's stored rows, under the session lock (a no-op
    when there is none)."""
    if not cell_ids:
        return
    with store.lock(session_id):
        session = store.load(session_id)
        changed = copy.copy(session)
        changed.cell_undo = dict(session.cell_undo)
        for cell_id in cell_ids:
            changed.cell_undo[review_key(run_id, cell_id)] = value
        changed.turns = reviewed_turns(session.turns, run_id, changed.cell_undo)
        store.save(changed, touch=False)
