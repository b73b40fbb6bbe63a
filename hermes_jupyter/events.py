"""Journal events: names, terminal states and the row envelope (CONTRACT §3-§4).

Event names, terminal states and the identity check of a row are spelled here
once; everything else imports them.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypedDict

TOKEN: Final = "token"
REASONING: Final = "reasoning"
INTERIM_ASSISTANT: Final = "interim_assistant"
TOOL: Final = "tool"
TOOL_COMPLETE: Final = "tool_complete"
APPROVAL: Final = "approval"
PLAN: Final = "plan"
DONE: Final = "done"
CANCEL: Final = "cancel"
APPERROR: Final = "apperror"
STREAM_END: Final = "stream_end"
ERROR: Final = "error"

#: Events that end a run. `stream_end`/`error` are accepted from foreign
#: journals (the peer writes them) but our engine never emits them.
TERMINAL_EVENTS: Final = frozenset({DONE, CANCEL, APPERROR, STREAM_END, ERROR})

TerminalState = Literal[
    "completed",
    "interrupted-by-user",
    "interrupted-by-crash",
    "errored",
    "tool_limit_reached",
]

#: `apperror.payload.type` for a run settled as interrupted (drain, kernel restart).
INTERRUPTED_ERROR_TYPE: Final = "interrupted"


class JournalRow(TypedDict):
    """One line of `runs/<sid>/<run_id>.jsonl`."""

    version: int
    event_id: str
    seq: int
    run_id: str
    session_id: str
    event: str
    type: str
    created_at: float
    terminal: bool
    terminal_state: TerminalState | None
    payload: dict[str, Any]


def terminal_state_for(event: str, payload: dict[str, Any]) -> TerminalState | None:
    """The terminal state an event puts its run in, or None if it is not terminal."""
    if event not in TERMINAL_EVENTS:
        return None
    if event in (DONE, STREAM_END):
        if payload.get("terminal_state") == "tool_limit_reached":
            return "tool_limit_reached"
        return "completed"
    if event == CANCEL:
        return "interrupted-by-user"
    kind = str(payload.get("type") or "").lower()
    if kind == "tool_limit_reached":
        return "tool_limit_reached"
    if "cancelled" in kind or "canceled" in kind:
        return "interrupted-by-user"
    if "interrupted" in kind:
        return "interrupted-by-crash"
    return "errored"


def row_owns_run(row: Any, session_id: str, run_id: str) -> bool:
    """True if `row` is a well-formed row of this session's run.

    A file's path is not proof of ownership: seq must be a real int >= 1 and the
    envelope must name this session and run, with `event_id == run_id:seq`.
    """
    if not isinstance(row, dict):
        return False
    seq = row.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return False
    if not isinstance(row.get("event"), str) or not isinstance(row.get("payload"), dict):
        return False
    return (
        row.get("session_id") == session_id
        and row.get("run_id") == run_id
        and row.get("event_id") == f"{run_id}:{seq}"
    )


def authoritative_terminal(rows: list[JournalRow]) -> JournalRow | None:
    """The latest terminal row that is not `stream_end`; `stream_end` only if it is alone.

    A later `done` or `cancel` supersedes an earlier `apperror`; a transport-only
    `stream_end` never does.
    """
    fallback: JournalRow | None = None
    row: JournalRow
    for row in reversed(rows):
        if row.get("terminal") is not True:
            continue
        if row["event"] != STREAM_END:
            return row
        if fallback is None:
            fallback = row
    return fallback
