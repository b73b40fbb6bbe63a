"""Settle a turn into its session, however it ended: the one place that produces every outcome.

Completed, errored, cancelled, interrupted (kernel restart, shutdown, the backend
stopping, a lost worker) and recovered after a crash (server restart) all end
here (docs/transcript.md). Every ending merges the run's `Transcript` with the
same `transcript.merge`, so a turn reads alike however it was settled; endings
differ only in the row that closes them (none, an error, a cancel or an
interrupted marker) and in the terminal row the engine journals. Callers judge
(the manager from a `TurnResult`, recovery from the journal's evidence) and hold
the session lock; these functions edit the session in memory.
"""

from __future__ import annotations

import logging
import time

import msgspec
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from .. import markers
from ..agents.base import TurnResult
from ..events import APPERROR, CANCEL, DONE, INTERRUPTED_ERROR_TYPE, JournalRow, terminal_state_for
from ..recovery.evidence import Evidence, RecoveryVerdict, TerminalError, recoverable_terminal_error
from ..markers import Cause
from ..sessions.store import Session, SessionStore, valid_ts
from ..transcript import (
    Transcript, TranscriptFold, append_to_context, context_projection, continued_turn_start, merge, terminal_marker,
)
from ..transcript.cell_reviews import reviewed_rows
from ..transcript.old_turns import turns_from_messages
from ..transcript.rows import NoteRow, Row, row_id
from ..transcript.turns import StoredTurn, drop_turns, find_turn, keep_turn, turn_of, user_row, with_marker

log = logging.getLogger(__name__)

Outcome = Literal["completed", "errored", "cancelled", "interrupted"]


class NothingToRetry(RuntimeError):
    """Retry or undo on a session without a user turn."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How a live run ended: the outcome, the interruption cause, the error (what the user reads)."""

    outcome: Outcome
    cause: Cause = "unknown"
    error_kind: str = "error"
    message: str | None = None


#: A run cut off by a full disk (its turn is settled by recovery once space returns, `disk_full` verdict).
DISK_FULL_ENDING: Final = Ending("errored", error_kind="disk_full", message=markers.DISK_FULL_MESSAGE)


def ending_of(result: TurnResult) -> Ending:
    """A backend's typed outcome as an ending: a crashed worker is an interruption by a lost worker."""
    detail = result.error.message if result.error else None
    if result.outcome == "crashed":
        return Ending("interrupted", "lost_worker", message=detail)
    if result.outcome == "interrupted":
        return Ending("interrupted", "unknown", message=detail)
    if result.outcome == "errored":
        kind = result.error.kind if result.error else "error"
        return Ending("errored", error_kind=kind, message=detail or "the agent failed")
    return Ending("completed")


# -- the pending turn's rows ----------------------------------------------------------------------

def clear_pending(session: Session) -> None:
    session.active_run_id = None
    session.pending_user_message = None
    session.pending_attachments = []
    session.pending_started_at = None
    session.pending_continues = None


def pending_user_row(session: Session, **tags: Any) -> dict[str, Any]:
    """The pending prompt as a user row: its text, the time it was sent, its attachments, and `tags`."""
    started = valid_ts(session.pending_started_at)
    row: dict[str, Any] = {
        "role": "user",
        "content": session.pending_user_message or "",
        "timestamp": int(started if started is not None else time.time()),
        **tags,
    }
    if session.pending_attachments:
        row["attachments"] = list(session.pending_attachments)
    return row


def append_user_turn(session: Session, run_id: str) -> int:
    """The pending prompt as the turn's user row (in the transcript and the model's context).

    A continuation has no user row of its own: its turn starts at the marker it continues.
    """
    continued = continued_turn_start(session)
    if continued is not None:
        return continued
    row = pending_user_row(session, _run_id=run_id)
    session.messages.append(row)
    append_to_context(session, row)
    return len(session.messages) - 1


def append_recovered_user_turn(session: Session) -> int:
    """Restore the pending prompt as a `_recovered` user row (also into the model's context).

    If the tail already is this prompt, only the context is mirrored. A continuation
    adds none: its turn starts at the marker it continues.
    """
    continued = continued_turn_start(session)
    if continued is not None:
        return continued
    row = pending_user_row(session, _recovered=True)
    messages = session.messages
    tail = messages[-1] if messages else None
    if not (tail and tail.get("role") == "user" and tail.get("content") == row["content"]):
        messages.append(row)
    append_to_context(session, row)
    return len(messages) - 1


def fold_turn(session: Session, run_id: str, transcript: Transcript) -> tuple[int, bool]:
    """User row + the run's output, and the turn stored as the fold's rows; returns (index of the user
    row, whether there was output)."""
    turn = append_user_turn(session, run_id)
    store_turn(session, transcript, turn)
    output = merge(session, transcript, turn, recovered=False)
    return turn, output


# -- stored turns (transcript/turns.py) -----------------------------------------------------------

def store_turn(session: Session, transcript: Transcript, user_idx: int | None, rows: list[Row] | None = None) -> None:
    """Keep the settled transcript as the session's turn of that run (replacing an earlier settle of it).

    `user_idx` is the turn's user row in `messages` (a continuation's is its marker: no user row).
    """
    message = session.messages[user_idx] if user_idx is not None and 0 <= user_idx < len(session.messages) else None
    turn = turn_of(transcript, user_row(transcript.run_id, message), decisions=session.proposal_decisions,
                   deciders=session.proposal_answered_by, rows=rows)
    if session.cell_undo:  # a Keep/Undo made before the turn settled (docs/notebook-edits.md)
        turn = msgspec.structs.replace(turn, rows=reviewed_rows(turn.rows, session.cell_undo))
    keep_turn(session.turns, turn)


def mark_turn(session: Session, run_id: str | None, marker: dict[str, Any], user_idx: int | None = None) -> None:
    """The stored turn of `run_id` ends with the session's interrupted marker as it now reads."""
    if not run_id:
        return
    turn = find_turn(session.turns, run_id)
    if turn is None:
        message = session.messages[user_idx] if user_idx is not None and 0 <= user_idx < len(session.messages) else None
        turn = StoredTurn(run_id=run_id, status="interrupted", user=user_row(run_id, message))
    keep_turn(session.turns, with_marker(turn, marker))


def ended(fold: TranscriptFold, event: str, payload: dict[str, Any], seq: int) -> Transcript:
    """The final transcript of a live run: its fold closed by the terminal row the engine is about to journal.

    The settle stores this turn before the row is written (save first), so the turn is what
    any later fold of the journal gives.
    """
    fold.feed_row(JournalRow(
        event_id=f"{fold.run_id}:{seq}", seq=seq, run_id=fold.run_id, session_id=fold.session_id, event=event,
        type=event, created_at=time.time(), terminal=True, terminal_state=terminal_state_for(event, payload),
        payload=payload,
    ))
    return fold.snapshot()


# -- live endings ---------------------------------------------------------------------------------

def settle_completed(
    session: Session,
    run_id: str,
    transcript: Transcript,
    *,
    context: list[dict[str, Any]],
    replace_context: bool,
) -> None:
    """A finished turn: the journal's display rows, and the backend's own model-facing rows.

    The merge mirrors assistant text into the context; when the backend reports
    its own rows (tool calls and results included) they replace that mirror.
    """
    fold_turn(session, run_id, transcript)
    if replace_context:
        session.context_messages = list(context)
    elif context and continued_turn_start(session) is None:  # a continuation's text already joined its answer
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
    # At the tool limit the run completed (the transcript shows a warning note): the same words, no "Error".
    content = message if error_type == "tool_limit_reached" else markers.error_content(message)
    session.messages.append({
        "role": "assistant", "content": content, "timestamp": int(time.time()), "_error": True, "_run_id": run_id,
        "_error_type": error_type,  # Continue picks up after a cut or a length stop (runs/continuation.py)
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
    turn, _ = fold_turn(session, run_id, transcript)
    for row in session.messages[max(start, turn + 1):]:
        row["_partial"] = True
    session.messages.append(markers.cancel_marker(run_id=run_id))
    clear_pending(session)


def settle_interrupted(session: Session, run_id: str, transcript: Transcript, cause: str) -> None:
    """A live turn stopped by the server (kernel restart, shutdown, lost worker): partial output plus the marker."""
    _, output = fold_turn(session, run_id, transcript)
    session.messages.append(markers.interrupted_marker(cause, recovered_output=output, run_id=run_id))
    clear_pending(session)


def terminal_row(
    session_id: str, ending: Ending, transcript: Transcript | TranscriptFold | None, result: TurnResult | None = None
) -> tuple[str, dict[str, Any]]:
    """The terminal event and payload the engine journals for an ending (cancel and apperror carry
    `payload.marker`, worded from the run so far, a transcript or the open fold: docs/journal.md)."""
    if ending.outcome == "completed":
        return DONE, {
            "session_id": session_id, "usage": result.usage if result else {},
            "backend_session_id": result.backend_session_id if result else None,
        }
    payload: dict[str, Any]
    if ending.outcome == "cancelled":
        event, payload = CANCEL, {"message": "Cancelled by user", "session_id": session_id}
    elif ending.outcome == "interrupted":
        event, payload = APPERROR, {
            "type": INTERRUPTED_ERROR_TYPE, "cause": ending.cause, "session_id": session_id,
            "message": ending.message or f"The run was interrupted ({ending.cause}).",
        }
    else:
        event, payload = APPERROR, {"message": ending.message, "type": ending.error_kind, "session_id": session_id}
    # terminal_marker reads only `has_output`, which an open fold answers as its transcript would
    marker = terminal_marker(cast(Transcript, transcript), event, payload) if transcript is not None else None
    if marker is not None:
        payload["marker"] = marker
    return event, payload


# -- recovered endings (a turn whose worker is gone; recovery judged it) --------------------------

def settle_recovered(session: Session, run_id: str | None, verdict: RecoveryVerdict) -> None:
    """Settle a dead pending turn from recovery's verdict: completed, synced from the core, or interrupted."""
    if verdict.core is not None:
        _settle_from_core(session, run_id, verdict)
    elif verdict.evidence.completed:
        turn = current_user_turn(session)
        if turn is None:
            turn = append_recovered_user_turn(session)
        transcript = verdict.evidence.transcript(take=True) if run_id else None
        if transcript is not None:
            store_turn(session, transcript, turn, rows=list(transcript.rows))  # the merge below consumes them
            merge(session, transcript, turn, dedupe=True, consume=True)
    else:
        _settle_recovered_interrupted(session, run_id, verdict)
    if verdict.disk_full:
        note = markers.disk_full_note(run_id)
        session.messages.append(note)
        _note_turn(session, run_id, note)
    clear_pending(session)


def _note_turn(session: Session, run_id: str | None, note: dict[str, Any]) -> None:
    """A closing note (a full disk) on the stored turn too."""
    turn = find_turn(session.turns, run_id) if run_id else None
    if turn is not None:
        row = NoteRow(id=row_id(turn.run_id, "note", "disk_full"), variant="status", level="warning",
                      text=str(note["content"]))
        keep_turn(session.turns, msgspec.structs.replace(turn, rows=[*turn.rows, row]))


def _settle_recovered_interrupted(session: Session, run_id: str | None, verdict: RecoveryVerdict) -> None:
    evidence = verdict.evidence
    turn = append_recovered_user_turn(session)
    output, terminal = recover_output(session, run_id, evidence, turn, dedupe=False, cause=verdict.cause)
    if terminal:
        return
    pending = bool(run_id) and not output and not evidence.sealed_without_output
    marker = markers.interrupted_marker(verdict.cause, recovered_output=output, pending_retry=pending, run_id=run_id)
    if pending and run_id:
        markers.arm_retry(marker, run_id)
    session.messages.append(marker)
    mark_turn(session, run_id, marker, turn)


def _settle_from_core(session: Session, run_id: str | None, verdict: RecoveryVerdict) -> None:
    core, evidence = verdict.core or {}, verdict.evidence
    session.messages = [dict(m) for m in core["messages"] if isinstance(m, dict)]
    session.tool_calls = [dict(c) for c in core.get("tool_calls") or [] if isinstance(c, dict)]
    session.turns = turns_from_messages(session.messages, session.tool_calls)
    for key in ("input_tokens", "output_tokens", "estimated_cost"):
        if core.get(key) is not None:
            setattr(session, key, core[key])
    if not session.context_messages:
        session.context_messages = [p for p in map(context_projection, session.messages) if p]
    terminal_error = recoverable_terminal_error(evidence, session.session_id, run_id) if run_id else None
    turn = current_user_turn(session)
    if turn is None:
        if not (evidence.has_visible_output or terminal_error):
            return
        turn = append_recovered_user_turn(session)
    output, terminal = recover_output(session, run_id, evidence, turn, dedupe=True)
    if output and not terminal:
        marker = markers.interrupted_marker(verdict.cause, recovered_output=True, run_id=run_id)
        session.messages.append(marker)
        mark_turn(session, run_id, marker, turn)


def recover_output(
    session: Session, run_id: str | None, evidence: Evidence, turn: int, *, dedupe: bool, cause: str = "unknown"
) -> tuple[bool, bool]:
    """Append the journal's output of this turn; returns (output recovered, terminal error recovered)."""
    if not run_id:
        return False, False
    transcript = evidence.transcript(cause, take=True)  # handed over: each row is freed once merged
    if transcript is None:
        return False, False
    store_turn(session, transcript, turn, rows=list(transcript.rows))  # the merge below consumes them
    output = merge(session, transcript, turn, dedupe=dedupe, consume=True)
    terminal_error = recoverable_terminal_error(evidence, session.session_id, run_id)
    if terminal_error is None:
        return output, False
    materialize_terminal_error(session, terminal_error, turn)
    return output, True


def promote_pending_marker(session: Session, idx: int, run_id: str, evidence: Evidence) -> bool:
    """A pending-retry marker whose journal now shows output: that output goes above it, and the marker
    says it was recovered (or goes away when the journal held the turn's own error). False: nothing yet."""
    turn = next((i for i in range(idx - 1, -1, -1) if session.messages[i].get("role") == "user"), 0)
    output, terminal = recover_output(session, run_id, evidence, turn, dedupe=True)
    if not (output or terminal):
        return False
    marker = session.messages[idx]
    idx = move_recovered_rows_above(session, idx)
    if terminal:
        remove_message(session, idx)
    else:
        markers.settle_marker(marker, "recovered")
        mark_turn(session, run_id, marker, turn)
    return True


def current_user_turn(session: Session) -> int | None:
    """Index of the latest user row if it holds the pending prompt (a continuation: the marker it continues)."""
    continued = continued_turn_start(session)
    if continued is not None:
        return continued
    text = session.pending_user_message
    messages = session.messages
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if users and messages[users[-1]].get("content") == text:
        return users[-1]
    return None


def materialize_terminal_error(session: Session, error: TerminalError, turn: int) -> None:
    """Put the journaled terminal error into the transcript once (idempotent by event id)."""
    if any(m.get("_recovered_event_id") == error.event_id for m in session.messages):
        return
    tags = {
        "_recovered_from_run_journal": True,
        "_recovered_stream_id": error.stream_id,
        "_recovered_event_id": error.event_id,
    }
    for row in session.messages[turn:]:
        if row.get("_error") and row.get("content") == error.message.get("content") and "type" not in row:
            row.update(tags)  # adopt the same error already in this turn
            return
    session.messages.append({**error.message, **tags})


def move_recovered_rows_above(session: Session, marker_idx: int) -> int:
    """Move journal rows appended after a marker to just above it; returns the marker's new index.

    Tool cards follow their rows through an old → new index map.
    """
    messages = session.messages
    tail = list(range(marker_idx + 1, len(messages)))
    moved = [i for i in tail if messages[i].get("_recovered_from_run_journal")]
    stay = [i for i in tail if i not in set(moved)]
    order = list(range(marker_idx)) + moved + [marker_idx] + stay
    _reorder(session, order)
    return marker_idx + len(moved)


def remove_message(session: Session, idx: int) -> None:
    order = [i for i in range(len(session.messages)) if i != idx]
    _reorder(session, order)


def _reorder(session: Session, order: list[int]) -> None:
    new_index = {old: new for new, old in enumerate(order)}
    session.messages = [session.messages[i] for i in order]
    for card in session.tool_calls:
        anchor = card.get("assistant_msg_idx")
        if isinstance(anchor, int) and anchor in new_index:
            card["assistant_msg_idx"] = new_index[anchor]


# -- usage, retry and undo ----------------------------------------------------------------------

def add_usage(session: Session, usage: dict[str, Any]) -> None:
    for ours, theirs in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
        value = usage.get(ours, usage.get(theirs))
        if isinstance(value, int):
            setattr(session, ours, (getattr(session, ours) or 0) + value)


def last_user_index(session: Session) -> int:
    for idx in range(len(session.messages) - 1, -1, -1):
        row = session.messages[idx]
        if row.get("role") == "user" and not row.get("_error"):
            return idx
    raise NothingToRetry(f"session {session.session_id} has no user turn")


def truncate_turn(session: Session, idx: int) -> None:
    """Drop the user row at `idx` and everything after it, with its tool cards and context rows."""
    user = session.messages[idx]
    dropped = {run for row in session.messages[idx:] if isinstance(run := _run_tag(row), str)}
    session.turns = drop_turns(session.turns, dropped) if dropped else session.turns[:-1]
    session.messages = session.messages[:idx]
    session.tool_calls = [
        c for c in session.tool_calls if not isinstance(c.get("assistant_msg_idx"), int) or c["assistant_msg_idx"] < idx
    ]
    ctx = session.context_messages
    for cidx in range(len(ctx) - 1, -1, -1):
        if ctx[cidx].get("role") == "user" and ctx[cidx].get("content") == user.get("content"):
            session.context_messages = ctx[:cidx]
            break


def _run_tag(row: dict[str, Any]) -> Any:
    return row.get("_run_id") or row.get("_recovered_stream_id") or row.get("_journal_retry_stream_id")
