"""Apply a run's `Transcript` to a stored `Session`: message rows, tool cards, context.

The session keeps the shape its readers know (docs/transcript.md: message rows and
`tool_calls` cards, docs/transcript.md). Merging is where de-duplication lives:
a settle after recovery, or recovery after a partial settle, must not show a
segment or a card twice. With `dedupe`, a segment already in this turn (or
tagged with this run) is adopted instead of appended, and a card already on the
session is updated instead of added. Pure: edits the session in memory only.

A run that continues an interrupted turn (`session.pending_continues`) merges as the
rest of that answer: no user row of its own, its rows follow the interrupted turn's
marker (which stays) tagged `_continues`, and for the model its text joins the
partial answer's context row, so the model's history holds one answer, not two.
"""

from __future__ import annotations

import time
from typing import Any, Final, Iterator

from ..agents.answered import AnsweredBy
from ..sessions.store import Session
from .context import append_to_context, cut_args, existing_tool_card, normalize_text
from .proposals import decision_fields, proposal_card
from .rows import (
    ApprovalRow,
    AssistantRow,
    ClarifyRow,
    PlanRow,
    ProposalRow,
    ReasoningRow,
    Row,
    SegmentMeta,
    ToolMeta,
    ToolRow,
    Transcript,
)

#: Contained-text dedupe only for texts at least this long (shorter ones must match exactly).
MIN_CONTAINED_DEDUPE_CHARS: Final = 24


class Merge:
    """One merge of one transcript into one session (see `merge`)."""

    def __init__(
        self, session: Session, transcript: Transcript, turn_start: int, *, dedupe: bool, recovered: bool,
        consume: bool = False,
    ):
        self.session = session
        self.t = transcript
        self.run_id = transcript.run_id
        self.turn_start = turn_start
        self.dedupe = dedupe
        self.recovered = recovered
        self.consume = consume
        self.output = False
        self._existing = len(session.messages)
        self._cards_before = list(session.tool_calls)
        self._claimed: set[int] = set()
        self._current: int | None = None
        self.continues = session.pending_continues if continued_turn_start(session) is not None else None
        self.tags = self._tags()  # the same on every row this merge adds

    def _tags(self) -> dict[str, Any]:
        tags: dict[str, Any] = {"_continues": self.continues} if self.continues else {}
        if self.recovered:
            return {**tags, "_recovered_from_run_journal": True, "_recovered_stream_id": self.run_id}
        return {**tags, "_run_id": self.run_id}

    def owns(self, row: dict[str, Any]) -> bool:
        return row.get("_recovered_stream_id") == self.run_id or row.get("_run_id") == self.run_id

    def run(self) -> bool:
        reasoning: ReasoningRow | None = None  # a segment's reasoning row waits for its assistant row
        for row in _drain(self.t.rows) if self.consume else self.t.rows:
            # Row types are final: `type(row) is` (which mypy narrows) costs less than isinstance.
            if reasoning is not None:
                if type(row) is AssistantRow and _segment_of(reasoning) == _segment_of(row):
                    self._meta(row)  # the segment's meta is its reasoning row's
                    self._segment(reasoning, row.text, reasoning.text)
                    reasoning = None
                    continue
                self._segment(reasoning, "", reasoning.text)
                reasoning = None
            if type(row) is ReasoningRow:
                reasoning = row
            elif type(row) is AssistantRow:
                self._segment(row, row.text)
            else:
                self._card(row)
        if reasoning is not None:
            self._segment(reasoning, "", reasoning.text)
        return self.output

    # -- segments --------------------------------------------------------------------------------
    def _segment(self, first: Row, content: str, reasoning: str = "") -> None:
        meta = self._meta(first)
        started = meta.started_at if isinstance(meta, SegmentMeta) else None
        messages = self.session.messages
        idx = self._match(content, reasoning) if self.dedupe else None
        if idx is None:
            row: dict[str, Any] = {"role": "assistant", "content": content, "timestamp": int(started or time.time())}
            row.update(self.tags)
            if reasoning:
                row["reasoning"] = reasoning
            messages.append(row)
            idx = len(messages) - 1
            self.output = True
            if self.continues:
                join_context(self.session, row)
            else:
                append_to_context(self.session, row, dedupe=False)  # a new segment of this run
        else:
            existing = messages[idx]
            if reasoning and not existing.get("reasoning"):
                existing["reasoning"] = reasoning
                self.output = True
            append_to_context(self.session, existing)
        self._claimed.add(idx)
        self._current = idx

    def _match(self, content: str, reasoning: str) -> int | None:
        """An existing row of this turn that already holds this segment."""
        messages = self.session.messages
        wanted = normalize_text(content)
        for idx in range(self._existing):
            row = messages[idx]
            if idx in self._claimed or row.get("role") != "assistant" or row.get("_error"):
                continue
            if idx < self.turn_start and not self.owns(row):
                continue
            if not wanted:
                if row.get("content") == "" and self.owns(row) and row.get("reasoning") == reasoning:
                    return idx
                continue
            have = normalize_text(row.get("content"))
            if have == wanted or (len(wanted) >= MIN_CONTAINED_DEDUPE_CHARS and wanted in have):
                return idx
        return None

    def _anchor(self) -> int:
        """The message a card hangs under: this merge's latest segment, else an empty row of this run."""
        if self._current is not None:
            return self._current
        messages = self.session.messages
        for i in range(len(messages) - 1, -1, -1):
            row = messages[i]
            if row.get("role") == "assistant" and row.get("content") == "" and self.owns(row):
                self._current = i
                return i
        anchor: dict[str, Any] = {"role": "assistant", "content": "", "timestamp": int(time.time())}
        anchor.update(self.tags)
        messages.append(anchor)
        self._current = len(messages) - 1
        return self._current

    # -- cards -----------------------------------------------------------------------------------
    def _card(self, row: Row) -> None:
        card = session_card(row)
        meta = self._meta(row)
        if card is None:
            return
        if isinstance(row, ProposalRow):
            card.update(decision_fields(row, self.session))
        anchor = self._anchor()
        if self.dedupe:
            found = self._existing_card(row, card, meta)
            if found is not None:
                if not found.get("done") and card.get("done"):
                    found.update({k: v for k, v in card.items() if k not in ("args", "assistant_msg_idx")})
                return
        card["assistant_msg_idx"] = anchor
        card.update(self.tags)
        self.session.tool_calls.append(card)
        self.output = True

    def _meta(self, row: Row) -> SegmentMeta | ToolMeta | None:
        """The row's merge facts; a consuming merge takes them out of the transcript."""
        return self.t.meta.pop(row.id, None) if self.consume else self.t.meta.get(row.id)

    def _existing_card(
        self, row: Row, card: dict[str, Any], meta: SegmentMeta | ToolMeta | None
    ) -> dict[str, Any] | None:
        if isinstance(row, ToolRow):
            first = meta.first_preview if isinstance(meta, ToolMeta) else row.preview
            tid = None if row.tid.startswith("journal-") else row.tid
            return existing_tool_card(self._cards_before, row.name, first, self.run_id, tid=tid, turn_start=self.turn_start)
        kind = card.get("kind")
        return next(
            (c for c in self._cards_before if c.get("kind") == kind and c.get("tid") == card.get("tid") and self.owns(c)),
            None,
        )


def session_card(row: Row) -> dict[str, Any] | None:
    """A transcript card as a session `tool_calls` entry (the shape the sidebar reads), or None."""
    if isinstance(row, ToolRow):
        card: dict[str, Any] = {
            "name": row.name, "preview": row.preview, "snippet": row.preview, "tid": row.tid,
            "args": cut_args(row.args or {}), "done": row.status != "running", "is_error": row.status == "error",
        }
        if row.duration_s is not None:
            card["duration"] = row.duration_s
        return card
    if isinstance(row, ApprovalRow):
        answered = row.status == "resolved"
        return {
            "kind": "approval", "name": "approval", "preview": row.description, "snippet": row.description,
            "tid": row.approval_id, "args": cut_args({"command": row.command}), "done": answered,
            "is_error": answered and row.choice not in ("allow_once", "allow_turn"), "choice": row.choice,
            "reason": row.reason,
            "choices": list(row.choices), "answered_by": _answered_by(row.answered_by),
        }
    if isinstance(row, ClarifyRow):
        return {
            "kind": "clarify", "name": "clarify", "preview": row.question, "snippet": row.question,
            "tid": row.clarify_id, "args": {}, "done": row.status == "resolved", "is_error": False,
            "choices": list(row.choices), "answer": row.answer, "reason": row.reason,
            "answered_by": _answered_by(row.answered_by),
        }
    if isinstance(row, PlanRow):
        return {
            "kind": "plan", "name": "plan", "preview": None, "snippet": None, "tid": row.id, "args": {},
            "done": True, "is_error": False, "items": [{"text": i.text, "status": i.status} for i in row.items],
        }
    if isinstance(row, ProposalRow):
        return proposal_card(row)
    return None  # usage, notes and the marker live elsewhere in a session (its counters, its marker row)


def _answered_by(by: AnsweredBy | None) -> dict[str, Any] | None:
    return by.to_json() if by is not None else None


def _drain(rows: list[Row]) -> Iterator[Row]:
    """The rows in order, each leaving the list as it is yielded (the list ends empty)."""
    rows.reverse()
    pop = rows.pop
    while rows:
        yield pop()


# -- continuations ------------------------------------------------------------------------------

def continued_turn_start(session: Session) -> int | None:
    """Where a continuing run's turn starts: the marker of the run it continues (None: not continuing).

    The merge treats it as a turn's user row: only rows after it (or of this run) absorb
    the continuation's text, so it never adopts the interrupted part's own rows.
    """
    run_id = session.pending_continues
    if not run_id:
        return None
    messages = session.messages
    user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if user is None or messages[user].get("content") != session.pending_user_message:
        return None  # the pending prompt is a new turn's: nothing here is continued
    markers = [i for i in range(user + 1, len(messages)) if messages[i].get("_error")]
    for idx in reversed(markers):
        if run_id in (messages[idx].get("_run_id"), messages[idx].get("_journal_retry_stream_id")):
            return idx
    return markers[0] if markers else None  # an untagged marker; none: a new turn of the same words


def _run_of(row: dict[str, Any]) -> Any:
    return row.get("_run_id") or row.get("_recovered_stream_id")


def join_answer(head: str, tail: str, *, same_run: bool) -> str:
    """Two parts of one answer as one text: segments of one run a paragraph apart, a continuation a space."""
    if not head or not tail:
        return head or tail
    if head[-1:].isspace() or tail[:1].isspace():
        return head + tail
    return head + ("\n\n" if same_run else " ") + tail


def continued_answer(session: Session, user_idx: int) -> str:
    """The answer of the turn at `user_idx` as shown so far (every part, markers left out)."""
    text, last_run = "", None
    for row in session.messages[user_idx + 1:]:
        if row.get("role") != "assistant" or row.get("_error"):
            continue
        content = str(row.get("content") or "")
        if content:
            text = join_answer(text, content, same_run=last_run is not None and _run_of(row) == last_run)
            last_run = _run_of(row)
    return text


def join_context(session: Session, row: dict[str, Any]) -> None:
    """A continuation's segment for the model: appended to the partial answer's context row."""
    ctx = session.context_messages
    tail = ctx[-1] if ctx else None
    content = row.get("content")
    if (tail is None or tail.get("role") != "assistant" or tail.get("tool_calls") or not content
            or not isinstance(tail.get("content"), str)):
        append_to_context(session, row, dedupe=False)
        return
    ctx[-1] = {**tail, "content": join_answer(tail["content"], str(content), same_run=False)}


def _segment_of(row: Row) -> str:
    return row.id.rsplit(":", 1)[-1]


def merge(
    session: Session, transcript: Transcript, turn_start: int, *, dedupe: bool = False, recovered: bool = True,
    consume: bool = False,
) -> bool:
    """Append a transcript's segments and cards to the session's current turn; True if anything was added.

    `turn_start` is the index of the turn's user row: with `dedupe` only rows of this
    turn (or rows tagged with this run) may absorb the transcript's text, never an
    earlier turn's identical answer. `recovered` tags rows as recovered from the
    journal; a live settle tags them with `_run_id` instead. `consume` empties the transcript as
    it goes (recovery, with `Evidence.transcript(take=True)`): each row is freed once merged.
    """
    return Merge(session, transcript, turn_start, dedupe=dedupe, recovered=recovered, consume=consume).run()
