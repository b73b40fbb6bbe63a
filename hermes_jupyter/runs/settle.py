"""Settle a turn into its session, however it ended. Pure transcript edits plus one save.

Every ending folds the run's journal rows with the same `transcript.Fold`, so
a completed, failed, cancelled or interrupted turn reads alike; they differ
only in the row that closes them (none, an error, a cancel or an interrupted
marker). The caller holds the session lock.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from .. import markers
from ..recovery import clear_pending, pending_user_row
from ..store import Session, SessionStore
from ..transcript import Transcript, append_to_context, merge

log = logging.getLogger(__name__)


def append_user_turn(session: Session, run_id: str) -> int:
    """The pending prompt as the turn's user row (in the transcript and the model's context)."""
    row = pending_user_row(session, _run_id=run_id)
    session.messages.append(row)
    append_to_context(session, row)
    return len(session.messages) - 1


def fold_turn(session: Session, run_id: str, transcript: Transcript) -> tuple[int, bool]:
    """User row + the run's output; returns (index of the user row, whether there was output)."""
    turn = append_user_turn(session, run_id)
    output = merge(session, transcript, turn, recovered=False)
    return turn, output


def settle_completed(
    session: Session,
    run_id: str,
    transcript: Transcript,
    *,
    context: list[dict[str, Any]],
    replace_context: bool,
) -> None:
    """A finished turn: the journal's display rows, and the backend's own model-facing rows.

    The fold mirrors assistant text into the context; when the backend reports
    its own rows (tool calls and results included) they replace that mirror.
    """
    fold_turn(session, run_id, transcript)
    if replace_context:
        session.context_messages = list(context)
    elif context:
        ctx = session.context_messages
        last_user = max((i for i, r in enumerate(ctx) if r.get("role") == "user"), default=-1)
        session.context_messages = ctx[: last_user + 1] + list(context)
    clear_pending(session)


def settle_error(
    store: SessionStore,
    session: Session,
    run_id: str,
    transcript: Transcript,
    *,
    message: str,
    error_type: str,
    replaced_context: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A failed turn keeps its partial output and ends in an error row; returns the `apperror` payload.

    `replaced_context` is the history a backend compacted during the turn: even a
    failed turn must not leave the session on its pre-compression history. If the
    save fails, the payload carries the turn's rows (`terminal_session_persisted:
    false`) so recovery can still materialize the error from the journal.
    """
    turn, _ = fold_turn(session, run_id, transcript)
    if replaced_context is not None:
        session.context_messages = list(replaced_context)
    session.messages.append({
        "role": "assistant", "content": f"**Error:** {message}", "timestamp": int(time.time()),
        "_error": True, "_run_id": run_id,
    })
    clear_pending(session)
    payload: dict[str, Any] = {"message": message, "type": error_type, "session_id": session.session_id}
    try:
        store.save(session)
    except OSError:
        log.exception("could not save the failed turn of session %s; the journal keeps it", session.session_id)
        store.evict(session.session_id)
        payload["session"] = {"session_id": session.session_id, "messages": session.messages[turn:]}
        payload["terminal_session_persisted"] = False
        return payload
    payload["terminal_session_persisted"] = True
    payload["terminal_session_persisted_session_id"] = session.session_id
    return payload


def settle_cancelled(session: Session, run_id: str, transcript: Transcript) -> None:
    """A cancelled turn: partial output kept as `_partial` rows, then the cancel marker."""
    start = len(session.messages)
    fold_turn(session, run_id, transcript)
    for row in session.messages[start + 1:]:
        row["_partial"] = True
    session.messages.append(markers.cancel_marker(run_id=run_id))
    clear_pending(session)


def settle_interrupted(session: Session, run_id: str, transcript: Transcript, cause: str) -> None:
    """A live turn stopped by the server (kernel restart, shutdown): partial output plus the marker."""
    _, output = fold_turn(session, run_id, transcript)
    session.messages.append(markers.interrupted_marker(cause, recovered_output=output, run_id=run_id))
    clear_pending(session)
