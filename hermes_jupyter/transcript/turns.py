"""A session's settled turns, stored as the transcript's own rows (docs/transcript.md, "Stored turns").

Settle folds a run's journal once; the transcript it gets is kept on the session as a
`StoredTurn`: the user's row, the fold's rows (text, reasoning, tools, approvals,
questions, plan, proposals with their decision, usage, notes, marker), the status and,
for a turn whose output recovery still waits for, its retry state. Every view of a
settled turn reads these rows: a reload, the stream's settled message, a bundle. Row
ids are the fold's (deterministic), and a turn is kept by its run id, so settling a
turn twice replaces it, never adds a second copy. The model's history
(`context_messages`) is a separate projection and is not derived from these rows.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import msgspec

from ..agents.answered import answered_by_of
from ..events import RunStatus
from .rows import MarkerRow, ProposalRow, Row, Transcript, row_id


class UserRow(msgspec.Struct, kw_only=True):
    """What the user sent to start the turn (a continuation has none)."""

    id: str
    text: str
    timestamp: float | None = None
    attachments: list[dict[str, Any]] = msgspec.field(default_factory=list)
    #: Restored by recovery after the server restarted mid-turn.
    recovered: bool = False


class RetryState(msgspec.Struct, kw_only=True):
    """A crashed turn whose journal showed no output yet: recovery looks again on later reads."""

    run_id: str
    attempts: int = 0
    first_seen_ts: float | None = None


class StoredTurn(msgspec.Struct, kw_only=True):
    """One settled turn: `{run_id, status, rows}` (what `GET sessions/{sid}` shows in `turns`), the user row,
    the run it continues, and its retry state."""

    run_id: str
    status: RunStatus
    rows: list[Row] = msgspec.field(default_factory=list)
    user: UserRow | None = None
    #: The journal's last row when the turn was settled (0: converted from an old sidecar).
    last_seq: int = 0
    continues: str | None = None
    #: The autonomy a notebook run had (docs/autonomy.md), else None.
    autonomy: str | None = None
    retry: RetryState | None = None


def user_row(run_id: str, message: Mapping[str, Any] | None) -> UserRow | None:
    """A session user message as the turn's user row (None for a continuation or no message)."""
    if not message or message.get("role") != "user":
        return None
    ts = message.get("timestamp")
    attachments = message.get("attachments")
    return UserRow(
        id=row_id(run_id, "user"), text=str(message.get("content") or ""),
        timestamp=float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None,
        attachments=[a for a in attachments if isinstance(a, dict)] if isinstance(attachments, list) else [],
        recovered=message.get("_recovered") is True,
    )


def turn_of(
    transcript: Transcript, user: UserRow | None, *, decisions: Mapping[str, str] | None = None,
    deciders: Mapping[str, Any] | None = None, rows: list[Row] | None = None,
) -> StoredTurn:
    """The settled turn of a final transcript, with the session's decisions on its proposals.

    `rows` replaces the transcript's rows (a consuming merge empties them: the caller copies the list first).
    """
    kept = list(transcript.rows if rows is None else rows)
    if decisions:
        kept = [_decided(row, decisions, deciders or {}) if type(row) is ProposalRow else row for row in kept]
    return StoredTurn(run_id=transcript.run_id, status=transcript.status, rows=kept, user=user,
                      last_seq=transcript.last_seq, continues=transcript.continues, autonomy=transcript.autonomy)


def _decided(row: ProposalRow, decisions: Mapping[str, str], deciders: Mapping[str, Any]) -> ProposalRow:
    decision = decisions.get(row.id)
    if decision not in ("accepted", "rejected"):
        return row
    return msgspec.structs.replace(row, status=decision, answered_by=answered_by_of(deciders.get(row.id)))


def find_turn(turns: list[StoredTurn], run_id: str) -> StoredTurn | None:
    return next((t for t in reversed(turns) if t.run_id == run_id), None)


def keep_turn(turns: list[StoredTurn], turn: StoredTurn) -> None:
    """Store `turn` in place of the same run's turn (settling again is a no-op), else after the others."""
    for at in range(len(turns) - 1, -1, -1):
        if turns[at].run_id == turn.run_id:
            turns[at] = turn
            return
    turns.append(turn)


def drop_turns(turns: list[StoredTurn], run_ids: Iterable[str]) -> list[StoredTurn]:
    gone = set(run_ids)
    return [t for t in turns if t.run_id not in gone]


def with_marker(turn: StoredTurn, marker: Mapping[str, Any]) -> StoredTurn:
    """The turn ending with the session's marker row as it now reads (recovery's words, its retry state)."""
    rows = [r for r in turn.rows if type(r) is not MarkerRow]
    cause = marker.get("interruption_cause")
    rows.append(MarkerRow(id=row_id(turn.run_id, "marker"), variant="interrupted", text=str(marker.get("content") or ""),
                          cause=cause if isinstance(cause, str) else None))
    retry_run = marker.get("_journal_retry_stream_id")
    retry = None
    if isinstance(retry_run, str) and marker.get("_pending_journal_recovery"):
        attempts, seen = marker.get("_journal_retry_attempts"), marker.get("_journal_retry_first_seen_ts")
        retry = RetryState(run_id=retry_run, attempts=attempts if isinstance(attempts, int) else 0,
                           first_seen_ts=float(seen) if isinstance(seen, (int, float)) else None)
    return msgspec.structs.replace(turn, rows=rows, status="interrupted", retry=retry)


def with_decision(turns: list[StoredTurn], proposal_row_id: str, decision: str, by: Any) -> list[StoredTurn]:
    """The turns with one proposal decided (a new list and a new turn object; the others are shared)."""
    out = list(turns)
    for at, turn in enumerate(out):
        for i, row in enumerate(turn.rows):
            if type(row) is ProposalRow and row.id == proposal_row_id:
                rows = list(turn.rows)
                rows[i] = msgspec.structs.replace(row, status=decision, answered_by=by)
                out[at] = msgspec.structs.replace(turn, rows=rows)
                return out
    return out


def turn_transcript(turn: StoredTurn, session_id: str) -> Transcript:
    """A stored turn as a transcript (what the bundle renderer and the settled message take)."""
    return Transcript(run_id=turn.run_id, session_id=session_id, status=turn.status, last_seq=turn.last_seq,
                      rows=list(turn.rows), continues=turn.continues, autonomy=turn.autonomy)


def turns_json(turns: list[StoredTurn]) -> list[dict[str, Any]]:
    return msgspec.to_builtins(turns)  # type: ignore[no-any-return]
