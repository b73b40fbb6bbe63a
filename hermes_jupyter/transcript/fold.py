"""Journal rows → a `Transcript`: the one fold, pure and streaming (docs/transcript.md).

`TranscriptFold` takes rows one at a time and never keeps them: only the rows of the
transcript (text segments, cards) and the open segment's text live in memory, so a
run of any length folds in memory proportional to what it shows. A live view asks
for `snapshot()` as often as it likes; the end of a run is its terminal row, or, for
a run that has none (a crash), the server's `Verdict`.
"""

from __future__ import annotations

import bisect
import operator
from typing import Any, Callable, Final, Iterable

import msgspec

from .. import events, markers
from ..agents.answered import TIMEOUT, answered_by_of
from ..events import JournalRow
from ..events import RunStatus
from .rows import (
    ApprovalRow,
    AssistantRow,
    CELL_ACTIONS,
    CellChangeRow,
    ClarifyRow,
    MarkerRow,
    NoteLevel,
    NoteRow,
    OUTPUT_ROWS,
    PlanItem,
    PlanRow,
    PROPOSAL_ACTIONS,
    ProposalRow,
    ReasoningRow,
    Row,
    SegmentMeta,
    ToolMeta,
    ToolRow,
    Transcript,
    UsageRow,
    Verdict,
    row_id,
)

#: Open-segment text pieces kept before they are joined into one block (bounds the list, not the text;
#: checked once per batch of rows fed, so a reader block adds at most its own rows to it).
#: Blocks are joined once, when the segment closes: the text is never copied while it grows.
_JOIN_EVERY: Final = 4096
#: What an approval nobody answered before the run ended is resolved to (deny for the agent, by nobody).
UNANSWERED_CHOICE: Final = "deny"
UNANSWERED_REASON: Final = "not answered before the run ended"
_seq = operator.attrgetter("seq")


class ResumePoint(msgspec.Struct, kw_only=True):
    """Where a live view picks a run up without its journal rows (docs/api.md, "Joining a run in one
    message"): the closed rows, and the open segment as the fold holds it (raw, so tokens that follow
    join it exactly as they would have), and the note of each wait still open to updates."""

    rows: list[Row]
    segment: int
    text: str
    reasoning: str
    waits: dict[str, str]


class TranscriptFold:
    """Fold one run's journal rows, in seq order, into transcript rows."""

    def __init__(self, run_id: str, session_id: str) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.last_seq = 0
        #: The run's authoritative terminal row so far (a later `done`/`cancel`/`apperror` supersedes an
        #: earlier one; `stream_end` only counts when alone). Rows after it are not folded.
        self.terminal: JournalRow | None = None
        self._rows: list[Row] = []
        self._meta: dict[str, SegmentMeta | ToolMeta] = {}
        self._parts: list[str] = []
        self._blocks: list[str] = []  # the open segment's earlier pieces, `_JOIN_EVERY` at a time
        self._reasoning: list[str] = []
        self._first_ts: float | None = None
        self._segment = 0
        self._tools: dict[str, ToolRow] = {}
        self._approvals: dict[str, ApprovalRow] = {}
        self._clarify: dict[str, ClarifyRow] = {}
        self._plan: PlanRow | None = None
        self._waits: dict[str, NoteRow] = {}  # a wait's one note, by `wait_id`
        self._usage: UsageRow | None = None
        #: The run this one continues (its first row says so), else None.
        self.continues: str | None = None
        self._proposals: set[str] = set()
        self._taken: bool | None = None  # set by `take`: whether the rows handed over showed output
        self._handlers: dict[str, Callable[[JournalRow], None]] = {
            events.REASONING: self._on_reasoning,
            events.INTERIM_ASSISTANT: self._on_interim,
            events.TOOL: self._on_tool,
            events.TOOL_COMPLETE: self._on_tool_complete,
            events.APPROVAL: self._on_approval,
            events.CLARIFY: self._on_clarify,
            events.PLAN: self._on_plan,
            events.USAGE: self._on_usage,
            events.STATUS: self._on_status,
            events.COMPACTION: self._on_compaction,
            events.CONTINUATION: self._on_continuation,
            events.PROPOSAL: self._on_proposal,
            events.CELL_CHANGE: self._on_cell_change,
        }

    # -- feeding ------------------------------------------------------------------------------
    def feed(self, rows: Iterable[JournalRow]) -> None:
        """Fold rows in order; a row at or below the last seq is a repeat (a resumed stream) and skipped."""
        last = self.last_seq
        fresh: list[JournalRow] = []
        for row in rows:
            if row.seq > last:
                fresh.append(row)
                last = row.seq
        if fresh:
            self._feed_increasing(fresh)

    def feed_chunks(self, chunks: Iterable[list[JournalRow]]) -> None:
        """Fold a journal read chunk by chunk (`journal.iter_row_chunks`): the reader's identity
        check makes each chunk's seqs increase, so only a chunk's head can repeat folded rows."""
        for chunk in chunks:
            if chunk and chunk[0].seq <= self.last_seq:
                chunk = chunk[bisect.bisect_right(chunk, self.last_seq, key=_seq):]
            if chunk:
                self._feed_increasing(chunk)

    def _feed_increasing(self, rows: list[JournalRow]) -> None:
        """Fold rows whose seqs increase, all past the last one folded.

        The loop runs once per journal row: it keeps its state in locals, and a text delta costs
        one append (the open segment's pieces are joined into a block once per call, not per row).
        """
        parts = self._parts
        append = parts.append
        token = events.TOKEN
        ended = self.terminal is not None
        need_ts = self._first_ts is None
        for row in rows:
            if row.event == token and not ended:  # the hot path: plain text deltas
                text = row.payload.get("text")
                if text.__class__ is str and text:
                    append(text)
                    if need_ts:
                        self._first_ts, need_ts = row.created_at, False
                continue
            self.last_seq = row.seq
            self._other(row)
            ended = self.terminal is not None
            need_ts = self._first_ts is None
        self.last_seq = rows[-1].seq
        if len(parts) > _JOIN_EVERY:
            self._blocks.append("".join(parts))
            parts.clear()

    def feed_row(self, row: JournalRow) -> None:
        self.feed((row,))

    def _other(self, row: JournalRow) -> None:
        if row.terminal is True:
            keep = self.terminal
            if keep is None or row.event != events.STREAM_END or keep.event == events.STREAM_END:
                self.terminal = row
            return
        if self.terminal is not None:
            return  # nothing after the end of a run is part of it
        handler = self._handlers.get(row.event)
        if handler is not None:
            handler(row)

    # -- results ------------------------------------------------------------------------------
    def snapshot(self, verdict: Verdict | None = None) -> Transcript:
        """The run as far as its rows go.

        With a terminal row (or a `verdict` for a run that has none) the transcript is
        final: the open segment is closed, unanswered cards are resolved and the ending
        (marker or note) is the last row. Otherwise the open segment is shown as it
        stands and the status is `running`.
        """
        if self._taken is not None:
            raise RuntimeError("this fold's transcript was handed over (take)")
        if self.terminal is None and verdict is None:
            rows = self._rows + self._open_segment_rows()
            return self._transcript("running", rows)
        self._flush()
        status, ending = self._ending(verdict)
        self._resolve_unanswered(status)
        return self._transcript(status, self._rows + ending)

    def resume_point(self) -> ResumePoint:
        """The fold's state as a live view needs it to fold the rows after `last_seq` (a snapshot frame)."""
        return ResumePoint(
            rows=list(self._rows), segment=self._segment, text="".join([*self._blocks, *self._parts]),
            reasoning="".join(self._reasoning), waits={wait: note.id for wait, note in self._waits.items()},
        )

    def take(self, verdict: Verdict | None = None) -> Transcript:
        """The final transcript (as `snapshot`), handed over: the fold forgets its rows, so whoever
        consumes the transcript (recovery's merge) can free each row as it goes. Later snapshots refuse."""
        transcript = self.snapshot(verdict)
        self._taken = transcript.has_output
        self._rows, self._meta = [], {}
        self._tools.clear()
        self._approvals.clear()
        self._clarify.clear()
        self._waits.clear()
        self._plan = self._usage = None
        return transcript

    @property
    def has_output(self) -> bool:
        """Whether the run shows any output so far (what `snapshot().has_output` says, without building it)."""
        if self._taken is not None:
            return self._taken
        return any(isinstance(r, OUTPUT_ROWS) for r in self._rows) or any(
            piece and not piece.isspace() for piece in (*self._blocks, *self._parts, *self._reasoning)
        )

    def distrust_terminal(self) -> None:
        """Forget the terminal row (recovery found later terminal evidence that is not ours)."""
        self.terminal = None

    def _transcript(self, status: RunStatus, rows: list[Row]) -> Transcript:
        return Transcript(
            run_id=self.run_id, session_id=self.session_id, status=status, last_seq=self.last_seq,
            rows=rows, meta=self._meta, continues=self.continues, autonomy=self._autonomy(),
        )

    def _autonomy(self) -> str | None:
        """The autonomy a notebook run had, as its terminal row says (docs/autonomy.md), else None."""
        value = self.terminal.payload.get("autonomy") if self.terminal is not None else None
        return value if isinstance(value, str) and value else None

    def _on_continuation(self, row: JournalRow) -> None:
        """A continuing run's first row names the run it continues (it adds no row of its own)."""
        continues = row.payload.get("continues")
        if isinstance(continues, str) and continues:
            self.continues = continues

    def _ending(self, verdict: Verdict | None) -> tuple[RunStatus, list[Row]]:
        term = self.terminal
        has_output = any(isinstance(r, (AssistantRow, ReasoningRow, ToolRow)) for r in self._rows)
        if term is None:
            assert verdict is not None
            text = markers.interrupted_content(verdict.cause, "recovered" if has_output else "none")
            return verdict.status, [MarkerRow(id=row_id(self.run_id, "marker"), variant="interrupted",
                                              text=text, cause=markers.known_cause(verdict.cause))]
        payload = term.payload
        state = term.terminal_state or events.terminal_state_for(term.event, payload) or "errored"
        status = events.RUN_STATUS_OF_STATE.get(state, "errored")
        if state == "tool_limit_reached":
            note = NoteRow(id=row_id(self.run_id, "note", term.seq), variant="status", level="warning",
                           text=_text(payload.get("message")) or markers.TOOL_LIMIT_NOTE)
            return status, [note]
        if status == "completed":
            return status, []
        marker = _carried_marker(self.run_id, payload.get("marker"))
        if marker is None:
            worded = markers.ending_marker(status, payload, has_output=has_output)
            marker = MarkerRow(id=row_id(self.run_id, "marker"), **worded)
        return status, [marker]

    # -- text segments -------------------------------------------------------------------------
    def _open_segment_rows(self) -> list[Row]:
        text, reasoning = _joined_stripped(self._blocks + self._parts, own=True), _joined_stripped(self._reasoning)
        return self._segment_rows(self._segment, text, reasoning)

    def _segment_rows(self, n: int, text: str, reasoning: str) -> list[Row]:
        rows: list[Row] = []
        if reasoning:
            rows.append(ReasoningRow(id=row_id(self.run_id, "reasoning", n), text=reasoning))
        if text:
            rows.append(AssistantRow(id=row_id(self.run_id, "assistant", n), text=text))
        return rows

    def _flush(self) -> None:
        """Close the open text segment: its reasoning row, then its assistant row (empty ones are no rows)."""
        pieces = self._parts
        if self._blocks:  # a long segment: its earlier pieces were joined into blocks
            self._blocks.extend(pieces)
            pieces.clear()
            pieces = self._blocks
        text = _joined_stripped(pieces, own=True) if pieces else ""
        pieces.clear()
        reasoning = _joined_stripped(self._reasoning, own=True) if self._reasoning else ""
        self._reasoning.clear()
        started, self._first_ts = self._first_ts, None
        if not text and not reasoning:
            return
        meta = SegmentMeta(started_at=started)
        for row in self._segment_rows(self._segment, text, reasoning):
            self._meta[row.id] = meta
            self._rows.append(row)
        self._segment += 1

    def _add(self, row: Row) -> None:
        """A new row: it closes the open segment first, so text before it is shown before it."""
        self._flush()
        self._rows.append(row)

    def _on_reasoning(self, row: JournalRow) -> None:
        payload = row.payload
        text = payload.get("text")
        if text is None:
            text = payload.get("reasoning") or payload.get("thinking")
        if isinstance(text, str) and text:
            self._reasoning.append(text)
            if self._first_ts is None:
                self._first_ts = row.created_at

    def _on_interim(self, row: JournalRow) -> None:
        """An interim message closes its segment; its text joins it unless it was streamed as tokens."""
        payload = row.payload
        text = payload.get("text")
        if not payload.get("already_streamed") and isinstance(text, str) and text.strip():
            last = self._parts or self._blocks
            if last and not last[-1][-1:].isspace():
                self._parts.append("\n\n")
            self._parts.append(text)
            if self._first_ts is None:
                self._first_ts = row.created_at
        self._flush()

    # -- cards ---------------------------------------------------------------------------------
    def _on_tool(self, row: JournalRow) -> None:
        payload = row.payload
        tid = str(payload.get("tid") or f"journal-{row.seq}")
        if tid in self._tools:
            return  # one card per id
        args = payload.get("args")
        card = ToolRow(
            id=row_id(self.run_id, "tool", tid), tid=tid, name=str(payload.get("name") or "tool"),
            args=args if isinstance(args, dict) else None, preview=_text(payload.get("preview")),
        )
        self._tools[tid] = card
        self._meta[card.id] = ToolMeta(first_preview=payload.get("preview"))
        self._add(card)

    def _on_tool_complete(self, row: JournalRow) -> None:
        payload = row.payload
        tid = payload.get("tid")
        card = self._tools.get(str(tid)) if tid else None
        if card is None or card.status != "running":
            # No open card with that id: the newest open card of that name that had no id either.
            name = payload.get("name")
            card = next(
                (c for c in reversed(self._tools.values())
                 if c.status == "running" and c.tid.startswith("journal-") and (not name or c.name == name)),
                None,
            )
        if card is None:
            return
        card.status = "error" if payload.get("is_error") else "done"
        preview = _text(payload.get("preview"))
        if preview is not None:
            card.preview = preview
        duration = payload.get("duration")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            card.duration_s = float(duration)

    def _on_approval(self, row: JournalRow) -> None:
        payload = row.payload
        approval_id = str(payload.get("approval_id") or f"journal-{row.seq}")
        card = self._approvals.get(approval_id)
        if payload.get("status") == "pending":
            if card is None:
                card = ApprovalRow(
                    id=row_id(self.run_id, "approval", approval_id), approval_id=approval_id,
                    description=_text(payload.get("description")), command=_text(payload.get("command")),
                    choices=_strings(payload.get("choices", payload.get("options"))),
                )
                self._approvals[approval_id] = card
                self._add(card)
            return
        if card is not None and card.status == "pending":
            card.status = "resolved"
            card.choice = _text(payload.get("choice")) or UNANSWERED_CHOICE
            card.reason = _text(payload.get("reason"))
            card.answered_by = answered_by_of(payload.get("answered_by"))

    def _on_clarify(self, row: JournalRow) -> None:
        payload = row.payload
        clarify_id = str(payload.get("clarify_id") or f"journal-{row.seq}")
        card = self._clarify.get(clarify_id)
        if payload.get("status") != "resolved":
            if card is None:
                card = ClarifyRow(
                    id=row_id(self.run_id, "clarify", clarify_id), clarify_id=clarify_id,
                    question=_text(payload.get("question")) or "", choices=_strings(payload.get("choices")),
                )
                self._clarify[clarify_id] = card
                self._add(card)
            return
        if card is not None and card.status == "pending":
            card.status = "resolved"
            card.answer = _text(payload.get("answer"))
            card.reason = _text(payload.get("reason"))
            card.answered_by = answered_by_of(payload.get("answered_by"))

    def _on_plan(self, row: JournalRow) -> None:
        items = _plan_items(row.payload)
        if self._plan is None and not items:
            return  # an empty plan shows nothing
        if self._plan is None:
            self._plan = PlanRow(id=row_id(self.run_id, "plan"), items=items)
            self._add(self._plan)
        else:
            self._plan.items = items  # the latest plan wins, shown where the first one was

    def _on_usage(self, row: JournalRow) -> None:
        p = row.payload
        usage = UsageRow(
            id=row_id(self.run_id, "usage"), input_tokens=_int(p.get("input_tokens")),
            output_tokens=_int(p.get("output_tokens")), cached_tokens=_int(p.get("cached_tokens")),
            cost_usd=_number(p.get("cost_usd")), duration_s=_number(p.get("duration_s")), model=_text(p.get("model")),
            our_count=p.get("our_count") is True,
        )
        if self._usage is None:
            self._usage = usage
            self._add(usage)
        else:
            for field in usage.__struct_fields__:
                setattr(self._usage, field, getattr(usage, field))

    def _on_status(self, row: JournalRow) -> None:
        """A note; the rows of one wait for the model (`kind: waiting`, one `wait_id`) are one note, which
        later rows update in place (it keeps its id and place and closes no text segment)."""
        p = row.payload
        text = _text(p.get("text"))
        if not text or not text.strip():
            return
        level: NoteLevel = "warning" if p.get("level") == "warning" else "info"
        wait_id = p.get("wait_id") if p.get("kind") == events.WAITING else None
        shown = self._waits.get(wait_id) if isinstance(wait_id, str) else None
        if shown is not None:
            shown.text, shown.level = text, level
            return
        note = NoteRow(id=row_id(self.run_id, "note", row.seq), variant="status", level=level, text=text)
        if isinstance(wait_id, str):
            self._waits[wait_id] = note
        self._add(note)

    def _on_compaction(self, row: JournalRow) -> None:
        p = row.payload
        text = _text(p.get("text")) or markers.compaction_text(_int(p.get("messages_before")), _int(p.get("messages_after")))
        self._add(NoteRow(id=row_id(self.run_id, "note", row.seq), variant="compaction", level="info", text=text))

    def _on_proposal(self, row: JournalRow) -> None:
        """A proposed cell: one card per id, always pending in the journal (decisions live with the session)."""
        p = row.payload
        proposal_id = str(p.get("proposal_id") or f"journal-{row.seq}")
        if proposal_id in self._proposals:
            return
        self._proposals.add(proposal_id)
        action = p.get("action")
        self._add(ProposalRow(
            id=row_id(self.run_id, "proposal", proposal_id), proposal_id=proposal_id,
            action=action if action in PROPOSAL_ACTIONS else "insert_end", cell_id=_text(p.get("cell_id")),
            cell_type="markdown" if p.get("cell_type") == "markdown" else "code",
            source=_text(p.get("source")) or "", old_source=_text(p.get("old_source")),
        ))

    def _on_cell_change(self, row: JournalRow) -> None:
        """A change the agent made to a notebook cell, as read back (one row per change, in order)."""
        p = row.payload
        action = p.get("action")
        if action not in CELL_ACTIONS:
            return
        self._add(CellChangeRow(
            id=row_id(self.run_id, "cell_change", row.seq), run_id=self.run_id, action=action,
            cell_id=_text(p.get("cell_id")) or "", applied=p.get("applied") is not False, why=_text(p.get("why")),
            path=_text(p.get("path")) or "", index=_int(p.get("index")), cell_type=_text(p.get("cell_type")),
            before_source=_text(p.get("before_source")), after_source=_text(p.get("after_source")),
            source_sha256=_text(p.get("source_sha256")), execution_count=_int(p.get("execution_count")),
            outputs_summary=_text(p.get("outputs_summary")), landed="room" if p.get("landed") == "room" else "file",
            tool_call_id=_text(p.get("tool_call_id")) or "", at=_number(p.get("at")),
        ))

    def _resolve_unanswered(self, status: RunStatus) -> None:
        """At the end of a run a question nobody answered is closed as not answered (the agent had a deny,
        or no answer), and a tool still running ends with the run: done if the run completed, else error
        (it did not finish)."""
        for approval in self._approvals.values():
            if approval.status == "pending":
                approval.status, approval.choice, approval.reason = "resolved", UNANSWERED_CHOICE, UNANSWERED_REASON
                approval.answered_by = TIMEOUT
        for question in self._clarify.values():
            if question.status == "pending":
                question.status, question.answer, question.reason = "resolved", None, UNANSWERED_REASON
                question.answered_by = TIMEOUT
        for tool in self._tools.values():
            if tool.status == "running":
                tool.status = "done" if status == "completed" else "error"


def fold(
    rows: Iterable[JournalRow], *, run_id: str, session_id: str, verdict: Verdict | None = None
) -> Transcript:
    """Fold a run's rows in one streaming pass (see `TranscriptFold.snapshot` for `verdict`)."""
    folder = TranscriptFold(run_id, session_id)
    folder.feed(rows)
    return folder.snapshot(verdict)


def _joined_stripped(pieces: list[str], *, own: bool = False) -> str:
    """`"".join(pieces).strip()`, but the text is built once: the ends are stripped piece by piece first.

    `own`: the caller gives the list up, so its end pieces are replaced by their stripped
    forms and the list is joined as it is (no second list of the pieces is built).
    """
    start, end = 0, len(pieces)
    while start < end and (not pieces[start] or pieces[start].isspace()):  # blank: no stripped copy made
        start += 1
    while end > start and (not pieces[end - 1] or pieces[end - 1].isspace()):
        end -= 1
    if start == end:
        return ""
    if end - start == 1:
        return pieces[start].strip()
    head, tail = pieces[start].lstrip(), pieces[end - 1].rstrip()
    if not own:
        return "".join([head, *pieces[start + 1:end - 1], tail])
    pieces[start], pieces[end - 1] = head, tail
    return "".join(pieces if start == 0 and end == len(pieces) else pieces[start:end])


def _carried_marker(run_id: str, value: Any) -> MarkerRow | None:
    """The marker the server wrote into a terminal row, if it is well formed."""
    if not isinstance(value, dict) or value.get("variant") not in ("interrupted", "cancelled", "error"):
        return None
    text = value.get("text")
    if not isinstance(text, str) or not text:
        return None
    cause = value.get("cause")
    return MarkerRow(id=row_id(run_id, "marker"), variant=value["variant"], text=text,
                     cause=cause if isinstance(cause, str) else None)


def _plan_items(payload: dict[str, Any]) -> list[PlanItem]:
    raw = payload.get("items")
    key = "text"
    if not isinstance(raw, list):
        raw, key = payload.get("entries"), "content"  # the Hermes Agent todo tool's shape
    items: list[PlanItem] = []
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, dict):
            continue
        text = _text(item.get(key, item.get("text")))
        if text and text.strip():
            status = item.get("status")
            items.append(PlanItem(text=text.strip(), status=status if status in ("in_progress", "completed") else "pending"))
    return items


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def terminal_marker(t: Transcript, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The `payload.marker` the server writes into a terminal row, worded from the run so far (`t`).

    None for an ending without a marker (completed, or stopped at the tool limit, which gets a note).
    """
    state = events.terminal_state_for(event, payload)
    if state is None or state == "tool_limit_reached":
        return None
    status = events.RUN_STATUS_OF_STATE[state]
    if status == "completed":
        return None
    return markers.ending_marker(status, payload, has_output=t.has_output)
