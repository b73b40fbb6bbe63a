"""Sidecar writes the engine makes beside a run, under the session lock: edits that must not race a run
(undo, PATCH) and the periodic progress checkpoint. `RunManager` validates and offloads them here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..agents.base import NotebookBinding
from ..recovery.repair import Recovery
from ..sessions.store import RunActive, Session, SessionStore
from . import settle

if TYPE_CHECKING:
    from .run import Run

#: Session fields a client may change with `PATCH sessions/{sid}`.
EDITABLE = frozenset({"title", "model", "backend", "notebook_path", "kernel_id", "autonomy"})


def undo_last_turn(store: SessionStore, recovery: Recovery, is_live: Callable[[str], bool], session_id: str) -> Session:
    """Remove the last turn (its user row and everything after it); refused while a turn runs."""
    recovery.get_session(session_id)
    with store.lock(session_id):
        session = store.load(session_id)
        if session.active_run_id and is_live(session.active_run_id):
            raise RunActive(f"session {session_id} has a running turn")
        settle.truncate_turn(session, settle.last_user_index(session))
        store.save(session)
        return session


def edit_fields(store: SessionStore, session_id: str, changes: dict[str, str | None]) -> Session:
    """Save `changes` (fields of `EDITABLE`); a new notebook forgets the cell, a new backend its conversation."""
    with store.lock(session_id):
        fields: dict[str, str | None] = dict(changes)
        before = store.load(session_id)
        if "notebook_path" in changes and changes["notebook_path"] != before.notebook_path:
            fields["cell_id"] = None  # the cell of the last magic run belongs to the notebook it was in
        if changes.get("backend") not in (None, before.backend):
            fields["backend_session_id"] = None  # the old backend's conversation id means nothing to the new one
        return store.replace(session_id, **fields)


def session_binding(session: Session) -> NotebookBinding | None:
    """The notebook a session is bound to, for a run whose request names none (a sidebar run).

    The binding belongs to the session, so every run of a bound session gets the notebook
    tools, and a restart of that kernel interrupts it, whichever client started it.
    """
    if not (session.notebook_path or session.kernel_id):
        return None
    return NotebookBinding(notebook_path=session.notebook_path, cell_id=session.cell_id, kernel_id=session.kernel_id)


def checkpoint(store: SessionStore, run: Run) -> None:
    """Persist the run's progress in the sidecar (the journal holds the output itself)."""
    if run.channel.last_seq == run.checkpointed_seq:
        return
    lock = store.lock(run.session_id)
    if not lock.acquire(blocking=False):
        return
    try:
        session = store.load(run.session_id)
        if session.active_run_id == run.run_id:
            session.extra["run_progress"] = {"run_id": run.run_id, "last_seq": run.channel.last_seq, "at": time.time()}
            store.save(session, touch=False)
            run.checkpointed_seq = run.channel.last_seq
    finally:
        lock.release()
