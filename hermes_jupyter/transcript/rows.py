"""The rows of a run transcript: what every view shows, one typed shape (docs/transcript.md).

Each row has a `kind` and a deterministic `id` that never collides across kinds, so a
card is found by its own id and never replaces another card. The JSON form of these
rows is what the TypeScript live fold must reproduce exactly.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Union

import msgspec

from ..agents.answered import AnsweredBy, AnsweredByKind  # noqa: F401  (AnsweredByKind: named in generated.ts)
from ..events import RunStatus

ToolStatus = Literal["running", "done", "error"]
CardStatus = Literal["pending", "resolved"]
PlanStatus = Literal["pending", "in_progress", "completed"]
NoteVariant = Literal["status", "compaction"]
NoteLevel = Literal["info", "warning"]
MarkerVariant = Literal["interrupted", "cancelled", "error"]
ProposalAction = Literal["insert_below", "insert_end", "replace", "delete"]
ProposalStatus = Literal["pending", "accepted", "rejected"]
CellType = Literal["code", "markdown"]
#: `delete` comes only from delete_cell in Propose mode (agents/cell_tools.py), never from propose_cell.
PROPOSAL_ACTIONS: Final = frozenset({"insert_below", "insert_end", "replace", "delete"})
#: What the agent did to a notebook cell (a `cell_change` row), where it landed, and what the person decided.
CellAction = Literal["insert", "edit", "delete", "run"]
CellLanded = Literal["room", "file"]
CellReview = Literal["kept", "undone"]
CELL_ACTIONS: Final = frozenset({"insert", "edit", "delete", "run"})
#: What a user may decide about a proposal (its status once decided).
PROPOSAL_DECISIONS: Final = frozenset({"accepted", "rejected"})

#: Statuses after which a run (and its cell output) never changes again.
FINAL_STATUSES: Final = frozenset({"completed", "interrupted", "cancelled", "errored"})


class _Row(msgspec.Struct, kw_only=True, tag_field="kind"):
    id: str


class AssistantRow(_Row, tag="assistant", kw_only=True):
    text: str


class ReasoningRow(_Row, tag="reasoning", kw_only=True):
    text: str


class ToolRow(_Row, tag="tool", kw_only=True):
    tid: str
    name: str
    args: dict[str, Any] | None = None
    preview: str | None = None
    status: ToolStatus = "running"
    duration_s: float | None = None


class ApprovalRow(_Row, tag="approval", kw_only=True):
    approval_id: str
    description: str | None = None
    command: str | None = None
    choices: list[str] = msgspec.field(default_factory=list)
    status: CardStatus = "pending"
    choice: str | None = None
    reason: str | None = None
    #: Who answered (None: pending, or an old journal that did not say).
    answered_by: AnsweredBy | None = None


class ClarifyRow(_Row, tag="clarify", kw_only=True):
    clarify_id: str
    question: str
    choices: list[str] = msgspec.field(default_factory=list)
    status: CardStatus = "pending"
    answer: str | None = None
    reason: str | None = None
    answered_by: AnsweredBy | None = None


class PlanItem(msgspec.Struct, kw_only=True):
    text: str
    status: PlanStatus = "pending"


class PlanRow(_Row, tag="plan", kw_only=True):
    items: list[PlanItem] = msgspec.field(default_factory=list)


class UsageRow(_Row, tag="usage", kw_only=True):
    """A turn's token counts; a count the provider did not report is None (shown as not reported)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None
    model: str | None = None
    #: The counts are the backend's own (the demo agent counts words), not a provider's report.
    our_count: bool = False


class NoteRow(_Row, tag="note", kw_only=True):
    variant: NoteVariant
    level: NoteLevel = "info"
    text: str


class ProposalRow(_Row, tag="proposal", kw_only=True):
    """A cell the agent proposes; only the user applies it (never executed). `status` is the server's record."""

    proposal_id: str
    action: ProposalAction = "insert_end"
    cell_id: str | None = None
    cell_type: CellType = "code"
    source: str = ""
    old_source: str | None = None
    status: ProposalStatus = "pending"
    #: Who decided (from the session, like `status`); None while pending or when not recorded.
    answered_by: AnsweredBy | None = None


class CellChangeRow(_Row, tag="cell_change", kw_only=True):
    """A change the agent made to a notebook cell, as read back (docs/notebook-edits.md); `review` is the
    person's Keep/Undo, laid over from the session like a proposal's decision."""

    run_id: str
    action: CellAction
    cell_id: str
    applied: bool = True
    why: str | None = None
    path: str = ""
    index: int | None = None
    cell_type: str | None = None
    before_source: str | None = None
    after_source: str | None = None
    source_sha256: str | None = None
    execution_count: int | None = None
    outputs_summary: str | None = None
    landed: CellLanded = "file"
    tool_call_id: str = ""
    #: When the change was made (seconds since the epoch; None in a journal that did not say).
    at: float | None = None
    review: CellReview | None = None


class MarkerRow(_Row, tag="marker", kw_only=True):
    variant: MarkerVariant
    text: str
    cause: str | None = None


Row = Union[
    AssistantRow, ReasoningRow, ToolRow, ApprovalRow, ClarifyRow, PlanRow, UsageRow, NoteRow, ProposalRow,
    CellChangeRow, MarkerRow,
]
#: Rows that show what the agent produced (recovery calls a run with any of these "recovered output").
OUTPUT_ROWS: Final = (AssistantRow, ReasoningRow, ToolRow)


class SegmentMeta(msgspec.Struct, frozen=True):
    """What a merge needs about a text segment that the JSON rows do not carry."""

    started_at: float | None = None


class ToolMeta(msgspec.Struct, frozen=True):
    """The preview the `tool` event started with (a settle matches existing cards on it)."""

    first_preview: Any = None


class Transcript(msgspec.Struct, kw_only=True):
    """A run folded: its status, how far the journal went, and its rows in display order.

    `meta` carries per-row facts for the session merge (segment start times, first
    previews); it is not part of the JSON form.
    """

    run_id: str
    session_id: str
    status: RunStatus = "running"
    last_seq: int = 0
    rows: list[Row] = msgspec.field(default_factory=list)
    meta: dict[str, SegmentMeta | ToolMeta] = msgspec.field(default_factory=dict)
    #: The run this one continues (docs/transcript.md, "Continue"), else None; not part of the JSON form.
    continues: str | None = None
    #: The autonomy of a notebook run (its terminal row says it), else None; not part of the JSON form.
    autonomy: str | None = None

    @property
    def marker(self) -> MarkerRow | None:
        last = self.rows[-1] if self.rows else None
        return last if isinstance(last, MarkerRow) else None

    @property
    def text(self) -> str:
        """The assistant's text, segments joined by a blank line."""
        return "\n\n".join(row.text for row in self.rows if isinstance(row, AssistantRow))

    @property
    def has_output(self) -> bool:
        return any(isinstance(row, OUTPUT_ROWS) for row in self.rows)

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The agreed JSON form: `{run_id, session_id, status, last_seq, rows}`."""
        return {
            "run_id": self.run_id, "session_id": self.session_id, "status": self.status,
            "last_seq": self.last_seq, "rows": rows_json(self.rows),
        }


def rows_json(rows: list[Row]) -> list[dict[str, Any]]:
    return msgspec.to_builtins(rows)  # type: ignore[no-any-return]


_SHORT_KINDS: Final = {"assistant": "a", "reasoning": "r"}


def row_id(run_id: str, kind: str, key: str | int | None = None) -> str:
    """`<run>:<kind>[:<key>]`, with the short kinds the schema uses for text segments."""
    short = _SHORT_KINDS.get(kind, kind)
    return f"{run_id}:{short}" if key is None else f"{run_id}:{short}:{key}"


class Verdict(msgspec.Struct, frozen=True):
    """The server's word on a run whose journal has no terminal row (a crash, a restart, a lost worker)."""

    cause: str = "unknown"
    status: RunStatus = "interrupted"
