"""Continue a turn that did not finish (docs/api.md): a stop, a kernel restart, a crash, a cut stream, a length stop.

The session already holds what a continuation needs: the turn's user row, its
partial answer (recovered from the journal when the server died) and the marker
saying how it ended. A continuation is admitted like any turn (the same lock, the
same pending state, so recovery settles it the same way), but nothing is sent as new
user input: the pending prompt is the interrupted turn's own, `pending_continues`
names the run it continues, and the backend gets the partial answer as the model's
own unfinished answer (`TurnRequest.continues`). The merge (transcript/merge.py)
shows the new text as the rest of that answer, after the marker, which stays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..agents.base import Continuation, EventSink
from ..events import CONTINUATION
from ..ids import is_valid_id
from ..sessions.store import Session
from ..transcript import continued_answer, continued_turn_start
from . import settle

#: Marker types a continuation picks up after.
CONTINUABLE = frozenset({"interrupted", "cancelled"})
#: Errors that leave an answer worth continuing: a cut stream and a length stop (docs/api.md); others are retried.
CONTINUABLE_ERRORS = frozenset({"stream_cut", "length_limit"})


def is_continuable(row: dict[str, Any]) -> bool:
    """Whether a turn ending in `row` (its closing marker) may be continued."""
    if row.get("_error") is not True:
        return False
    return row.get("type") in CONTINUABLE or row.get("_error_type") in CONTINUABLE_ERRORS


class NothingToContinue(RuntimeError):
    """The session's last turn finished normally, failed, or there is none (HTTP 409)."""


@dataclass(frozen=True, slots=True)
class ContinuePoint:
    """The turn to continue: its run, the index of its user row, its prompt and attachments."""

    run_id: str
    user: int
    prompt: str
    attachments: list[dict[str, Any]]


def continue_point(session: Session) -> ContinuePoint:
    """The session's last turn, if it ended interrupted or cancelled; else NothingToContinue."""
    messages = session.messages
    idx = len(messages) - 1
    while idx >= 0 and messages[idx].get("_disk_full"):
        idx -= 1  # the full-disk note follows the turn's marker
    row = messages[idx] if idx >= 0 else None
    if row is None or not is_continuable(row):
        raise NothingToContinue(f"the last turn of session {session.session_id} did not stop part-way")
    try:
        user = settle.last_user_index(session)
    except settle.NothingToRetry:
        raise NothingToContinue(f"session {session.session_id} has no user turn") from None
    run_id = row.get("_run_id") or row.get("_journal_retry_stream_id") or session.last_run_id
    if not is_valid_id(run_id):
        raise NothingToContinue(f"the marker of session {session.session_id} names no run")
    prompt = messages[user]
    text = str(prompt.get("content") or "")
    if not text.strip():
        raise NothingToContinue(f"the last turn of session {session.session_id} has no prompt to continue")
    return ContinuePoint(str(run_id), user, text, list(prompt.get("attachments") or []))


class Prepare:
    """`RunManager.start_run`'s `prepare` for a continuation: mark the turn continuing (under the lock).

    It remembers the run it continues, for the answer to the client.
    """

    def __init__(self) -> None:
        self.continues: str | None = None

    def __call__(self, session: Session) -> tuple[str, list[dict[str, Any]]]:
        point = continue_point(session)
        session.pending_continues = self.continues = point.run_id
        return point.prompt, point.attachments


def of_session(session: Session) -> Continuation | None:
    """The continuation a pending turn asks for, with the answer so far, or None for an ordinary turn."""
    run_id = session.pending_continues
    if not run_id or continued_turn_start(session) is None:
        return None
    user = settle.last_user_index(session)  # continued_turn_start found it
    return Continuation(run_id=run_id, partial=continued_answer(session, user))


def announce(sink: EventSink, continues: Continuation) -> None:
    """The continuing run's first journal row: `{continues: <run_id>}`, before the backend's own events."""
    sink.emit(CONTINUATION, {"continues": continues.run_id})

