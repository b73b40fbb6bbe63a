"""Status of runs that are no longer live, read from their journals."""

from __future__ import annotations

from typing import Any

from ..events import RUN_STATUS_OF_STATE, RunStatus
from ..ids import validate_id
from ..journal import Journals
from ..sessions.store import CorruptSession, SessionStore, UnknownSession

_REMEMBER = 10_000


class UnknownRun(KeyError):
    """No journal for this run id (HTTP 404)."""


class RunStatusIndex:
    """Maps run ids to their sessions (remembered, else found on disk) and summarizes their journals."""

    def __init__(self, journals: Journals, store: SessionStore | None = None) -> None:
        self.journals = journals
        self.store = store
        self._sessions: dict[str, str] = {}

    def remember(self, run_id: str, session_id: str) -> None:
        if len(self._sessions) >= _REMEMBER:
            self._sessions.pop(next(iter(self._sessions)))
        self._sessions[run_id] = session_id

    def session_of(self, run_id: str) -> str:
        validate_id(run_id, "run id")
        sid = self._sessions.get(run_id)
        if sid is not None:
            return sid
        for sid in self.journals.session_ids():
            if self.journals.exists(sid, run_id):
                self.remember(run_id, sid)
                return sid
        raise UnknownRun(run_id)

    def describe(self, run_id: str) -> dict[str, Any]:
        """`{run_id, session_id, status, last_seq}` of a run nobody is running any more."""
        sid = self.session_of(run_id)
        summary = self.journals.summary(sid, run_id)
        if summary.terminal is not None:
            status = RUN_STATUS_OF_STATE.get(str(summary.terminal.terminal_state), "errored")
        else:  # not live and never terminated: its worker is gone, unless the turn was settled and saved
            status = self._stored_status(sid, run_id) or "interrupted"
        return {"run_id": run_id, "session_id": sid, "status": status, "last_seq": summary.last_seq}

    def _stored_status(self, session_id: str, run_id: str) -> RunStatus | None:
        """The status of the run's stored turn. The settle saves the session before it journals the
        terminal row (docs/architecture.md), so a crash between the two leaves a saved turn and a
        journal without its end: the saved turn is the verdict, and every view says the same."""
        if self.store is None:
            return None
        try:
            turns = self.store.load(session_id).turns
        except (UnknownSession, CorruptSession, OSError):
            return None
        return next((turn.status for turn in turns if turn.run_id == run_id), None)
