"""Journal events: names, terminal states and the row envelope (docs/journal.md).

Event names, terminal states and the identity check of a row are spelled here
once; everything else imports them.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

TOKEN: Final = "token"
REASONING: Final = "reasoning"
INTERIM_ASSISTANT: Final = "interim_assistant"
TOOL: Final = "tool"
TOOL_COMPLETE: Final = "tool_complete"
APPROVAL: Final = "approval"
PLAN: Final = "plan"
CLARIFY: Final = "clarify"
USAGE: Final = "usage"
COMPACTION: Final = "compaction"
STATUS: Final = "status"
#: A cell the agent proposes to insert or replace (propose_cell); the user accepts or rejects it.
PROPOSAL: Final = "proposal"
#: A change the agent made to a notebook cell, as read back afterwards (notebook/cell_edits.CellChange).
CELL_CHANGE: Final = "cell_change"
DONE: Final = "done"
CANCEL: Final = "cancel"
APPERROR: Final = "apperror"
STREAM_END: Final = "stream_end"
ERROR: Final = "error"
#: A `status` payload's `kind`, when it has one: `steer` (what the user added to a running turn) or `waiting`
#: (the model has not started answering: every row of one wait carries the same `wait_id` and the folds show
#: them as one note, updated; docs/transcript.md "Waiting notes"). A status without a kind is a plain note.
StatusKind = Literal["steer", "waiting"]
WAITING: Final = "waiting"
#: The first row of a run that continues an interrupted one: `{continues: <run_id>}` (docs/transcript.md, "Continue").
CONTINUATION: Final = "continuation"

#: Every event name, in the order the labextension's generated `EVENTS` lists them
#: (`scripts/generate_ts_types.py`): a new event type is a constant above and a name here.
EVENT_NAMES: Final = (
    TOKEN, REASONING, INTERIM_ASSISTANT, TOOL, TOOL_COMPLETE, APPROVAL, PLAN, CLARIFY, USAGE, COMPACTION, STATUS,
    PROPOSAL, CELL_CHANGE, CONTINUATION, DONE, CANCEL, APPERROR, STREAM_END, ERROR,
)

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

#: What `GET runs/{id}` and the transcript call a run in each terminal state.
RunStatus = Literal["running", "completed", "cancelled", "interrupted", "errored"]
RUN_STATUS_OF_STATE: Final[dict[str, RunStatus]] = {
    "completed": "completed",
    "tool_limit_reached": "completed",
    "interrupted-by-user": "cancelled",
    "interrupted-by-crash": "interrupted",
    "errored": "errored",
}

#: `apperror.payload.type` for a run settled as interrupted (drain, kernel restart).
INTERRUPTED_ERROR_TYPE: Final = "interrupted"


class JournalRow(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """One line of `runs/<sid>/<run_id>.jsonl` (docs/journal.md).

    A typed record, not a dict: the decoder checks every field's type in C as it
    parses (seq a real int, payload an object), which is most of the identity
    check and what lets recovery read 10k rows in a few milliseconds. Fields a
    foreign writer may leave out have defaults; unknown fields are ignored.
    """

    version: int = 1
    event_id: str
    seq: int
    run_id: str
    session_id: str
    event: str
    type: str = ""
    created_at: float | None = None
    terminal: bool | None = False
    terminal_state: str | None = None
    payload: dict[str, Any]


_ROW_DECODER = msgspec.json.Decoder(JournalRow)
_ENCODER = msgspec.json.Encoder()


def decode_row(line: bytes) -> JournalRow:
    """One JSON line as a row. Raises `msgspec.ValidationError` (JSON of the wrong shape) or
    `msgspec.DecodeError` (not JSON)."""
    return _ROW_DECODER.decode(line)


def parse_row(data: bytes | str) -> JournalRow | None:
    """One JSON text as a row, or None if it is blank, not JSON, or not shaped like a row
    (a torn line, a WebSocket heartbeat)."""
    if not data.strip():
        return None
    try:
        return _ROW_DECODER.decode(data)
    except msgspec.DecodeError:  # includes ValidationError
        return None


def decode_lines(lines: bytes | memoryview) -> list[JournalRow]:
    """Newline-delimited rows in one C pass, without copying them; raises like `decode_row` if any line fails."""
    return _ROW_DECODER.decode_lines(lines)


def encode_row(row: JournalRow) -> bytes:
    """The row as one JSON object, keys in envelope order (what the writer writes)."""
    return _ENCODER.encode(row)


def rows_from_json(items: Any) -> list[JournalRow]:
    """Rows from already-parsed JSON (an HTTP page, a WebSocket message); items of the wrong shape are dropped."""
    rows: list[JournalRow] = []
    for item in items if isinstance(items, list) else ():
        try:
            rows.append(msgspec.convert(item, JournalRow))
        except msgspec.ValidationError:
            continue
    return rows


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


def row_owns_run(row: JournalRow, session_id: str, run_id: str) -> bool:
    """True if `row` is a row of this session's run.

    A file's path is not proof of ownership: seq must be >= 1 and the envelope
    must name this session and run, with `event_id == run_id:seq` (the decoder
    already checked the types).
    """
    return (
        row.seq >= 1 and row.session_id == session_id and row.run_id == run_id
        and row.event_id == f"{run_id}:{row.seq}"
    )


def authoritative_terminal(rows: list[JournalRow]) -> JournalRow | None:
    """The latest terminal row that is not `stream_end`; `stream_end` only if it is alone.

    A later `done` or `cancel` supersedes an earlier `apperror`; a transport-only
    `stream_end` never does.
    """
    fallback: JournalRow | None = None
    row: JournalRow
    for row in reversed(rows):
        if row.terminal is not True:
            continue
        if row.event != STREAM_END:
            return row
        if fallback is None:
            fallback = row
    return fallback
