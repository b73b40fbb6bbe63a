"""The one converter from an old sidecar (no `turns`) to stored turns (docs/transcript.md, "Stored turns").

Sidecars written before turns were stored keep a turn as `messages` (user and assistant
rows, `_error` markers, recovery flags) and `tool_calls` cards anchored to a message by
`assistant_msg_idx`. Reading one, each user row starts a turn; the assistant rows and
cards after it become its rows, in order; a continuation's rows (`_continues`) are a turn
of their own. What those sidecars never kept (plans of old turns, usage, notes) stays
missing. A sidecar is untrusted input: rows of the wrong shape are skipped, never fatal.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..agents.answered import answered_by_of
from ..events import RunStatus
from .context import cut_args
from .rows import (
    PROPOSAL_ACTIONS, ApprovalRow, AssistantRow, CardStatus, ClarifyRow, MarkerRow, NoteRow, PlanItem, PlanRow, ProposalRow,
    ReasoningRow, Row, ToolRow, row_id,
)
from .turns import RetryState, StoredTurn, user_row

_STATUS_OF_MARKER: dict[str, RunStatus] = {"interrupted": "interrupted", "cancelled": "cancelled", "error": "errored"}


class _Turn:
    """A turn being gathered from the old rows."""

    def __init__(self, index: int, message: Mapping[str, Any] | None, run_id: str | None, continues: str | None = None):
        self.index = index
        self.message = message
        self.run_id = run_id
        self.continues = continues
        self.rows: list[Row] = []
        self.segments = 0
        self.status: RunStatus = "completed"
        self.retry: RetryState | None = None

    @property
    def rid(self) -> str:
        return self.run_id or f"turn-{self.index}"

    def done(self) -> StoredTurn:
        rid = self.rid
        return StoredTurn(run_id=rid, status=self.status, rows=self.rows, user=user_row(rid, self.message),
                          continues=self.continues, retry=self.retry)


def turns_from_messages(messages: list[Any], tool_calls: list[Any]) -> list[StoredTurn]:
    """Stored turns read from an old sidecar's `messages` and `tool_calls`, oldest first."""
    cards: dict[int, list[Mapping[str, Any]]] = {}
    for card in tool_calls:
        if isinstance(card, dict) and isinstance(card.get("assistant_msg_idx"), int):
            cards.setdefault(card["assistant_msg_idx"], []).append(card)
    turns: list[_Turn] = []
    turn: _Turn | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user" and not message.get("_error"):
            turn = _Turn(index, message, _run_of(message))
            turns.append(turn)
        elif role == "assistant":
            continues = message.get("_continues")
            if isinstance(continues, str) and (turn is None or turn.continues != continues):
                turn = _Turn(index, None, _run_of(message), continues)
                turns.append(turn)
            elif turn is None:
                turn = _Turn(index, None, _run_of(message))
                turns.append(turn)
            if turn.run_id is None:
                turn.run_id = _run_of(message)
            _add_message(turn, message)
        else:
            continue
        for card in cards.get(index, ()):
            row = _card_row(turn.rid, card)
            if row is not None:
                turn.rows.append(row)
    return [t.done() for t in turns]


def _run_of(row: Mapping[str, Any]) -> str | None:
    run = row.get("_run_id") or row.get("_recovered_stream_id") or row.get("_journal_retry_stream_id")
    return run if isinstance(run, str) and run else None


def _add_message(turn: _Turn, message: Mapping[str, Any]) -> None:
    text = str(message.get("content") or "").strip() if isinstance(message.get("content"), (str, type(None))) else ""
    if message.get("_error"):
        turn.rows.append(_marker_or_note(turn, message, text))
        return
    reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        turn.rows.append(ReasoningRow(id=row_id(turn.rid, "reasoning", turn.segments), text=reasoning.strip()))
    if text:
        turn.rows.append(AssistantRow(id=row_id(turn.rid, "assistant", turn.segments), text=text))
    turn.segments += 1


def _marker_or_note(turn: _Turn, message: Mapping[str, Any], text: str) -> Row:
    """An `_error` row: the tool-limit and full-disk notes, else the turn's marker (which sets its status)."""
    if message.get("_error_type") == "tool_limit_reached" or message.get("_disk_full"):
        return NoteRow(id=row_id(turn.rid, "note", f"m{turn.index}"), variant="status", level="warning", text=text)
    kind = message.get("type")
    variant = "interrupted" if kind == "interrupted" else "cancelled" if kind in ("cancelled", "cancel") else "error"
    turn.status = _STATUS_OF_MARKER[variant]
    cause = message.get("interruption_cause") or message.get("_error_type")
    retry_run = message.get("_journal_retry_stream_id")
    if message.get("_pending_journal_recovery") and isinstance(retry_run, str):
        attempts, seen = message.get("_journal_retry_attempts"), message.get("_journal_retry_first_seen_ts")
        turn.retry = RetryState(run_id=retry_run, attempts=attempts if isinstance(attempts, int) else 0,
                                first_seen_ts=float(seen) if isinstance(seen, (int, float)) else None)
    return MarkerRow(id=row_id(turn.rid, "marker"), variant=variant, text=text,  # type: ignore[arg-type]
                     cause=cause if isinstance(cause, str) else None)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _card_row(run_id: str, card: Mapping[str, Any]) -> Row | None:
    """A stored card as the transcript row it was made from (the inverse of the old merge)."""
    kind, tid = card.get("kind"), str(card.get("tid") or card.get("assistant_msg_idx"))
    done = card.get("done") is not False
    by = answered_by_of(card.get("answered_by"))
    status: CardStatus = "resolved" if done else "pending"
    if kind == "plan":
        items = [PlanItem(text=str(i.get("text") or ""), status=i["status"] if i.get("status") in (
            "pending", "in_progress", "completed") else "pending") for i in card.get("items") or [] if isinstance(i, dict)]
        return PlanRow(id=row_id(run_id, "plan"), items=items)
    if kind == "proposal":
        return ProposalRow(
            id=row_id(run_id, "proposal", tid), proposal_id=tid,
            action=card["action"] if card.get("action") in PROPOSAL_ACTIONS else "insert_end",
            cell_id=_str(card.get("cell_id")), cell_type="markdown" if card.get("cell_type") == "markdown" else "code",
            source=_str(card.get("source")) or "", old_source=_str(card.get("old_source")),
            status=card["status"] if card.get("status") in ("accepted", "rejected") else "pending", answered_by=by,
        )
    if kind == "clarify":
        return ClarifyRow(id=row_id(run_id, "clarify", tid), clarify_id=tid, question=_str(card.get("preview")) or "",
                          choices=_strings(card.get("choices")), status=status, answer=_str(card.get("answer")),
                          reason=_str(card.get("reason")), answered_by=by)
    args: dict[str, Any] = card["args"] if isinstance(card.get("args"), dict) else {}
    if kind == "approval" or card.get("name") == "approval":
        return ApprovalRow(id=row_id(run_id, "approval", tid), approval_id=tid, description=_str(card.get("preview")),
                           command=_str(args.get("command")), choices=_strings(card.get("choices")), status=status,
                           choice=_str(card.get("choice")), reason=_str(card.get("reason")), answered_by=by)
    duration = card.get("duration")
    return ToolRow(
        id=row_id(run_id, "tool", tid), tid=tid, name=_str(card.get("name")) or "tool", args=cut_args(args),
        preview=_str(card.get("preview")) or _str(card.get("snippet")),
        status="running" if not done else "error" if card.get("is_error") is True else "done",
        duration_s=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
    )
