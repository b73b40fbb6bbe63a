"""Fold journal rows into transcript rows. Pure: works on an in-memory `Session`, no I/O.

One fold serves every way a turn ends (completed, errored, cancelled, recovered
after a crash), so a turn reads the same however it was settled: assistant text
split at tool boundaries, reasoning kept for display only, tool cards paired to
their completion by `tid` and anchored to their text segment (`assistant_msg_idx`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from .events import JournalRow
from .store import Session

#: Contained-text dedupe only for texts at least this long (shorter ones must match exactly).
MIN_CONTAINED_DEDUPE_CHARS = 24
_LONG_ARG_KEYS = frozenset({"command", "path", "patch", "content", "code", "file_path"})
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def normalize_text(text: Any) -> str:
    """Whitespace-collapsed text, for comparing segments that differ only in spacing."""
    return " ".join(str(text or "").split())


def cut_args(args: Any) -> Any:
    """Tool arguments as shown on a card: at most 4 keys, long values cut."""
    if not isinstance(args, dict):
        return args
    cut: dict[str, Any] = {}
    for key in list(args)[:4]:
        value = args[key]
        limit = 4000 if key in _LONG_ARG_KEYS else 120
        if isinstance(value, str) and len(value) > limit:
            value = value[:limit] + "..."
        cut[key] = value
    return cut


# -- context (model-facing history) -------------------------------------------------------

def context_projection(row: dict[str, Any]) -> dict[str, Any] | None:
    """The model-facing copy of a transcript row, or None if the model must not see it.

    Markers and errors are dropped, reasoning is display-only, empty rows without
    tool linkage carry nothing.
    """
    if row.get("_error"):
        return None
    proj = {k: v for k, v in row.items() if k != "reasoning" and (not k.startswith("_") or k == "_recovered")}
    if not proj.get("content") and not proj.get("tool_calls") and not proj.get("tool_call_id"):
        return None
    return proj


def _same_checkpoint(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same user turn: text, integer timestamp, source and attachments all equal."""
    return (
        a.get("role") == b.get("role")
        and a.get("content") == b.get("content")
        and _int_ts(a.get("timestamp")) == _int_ts(b.get("timestamp"))
        and a.get("_source") == b.get("_source")
        and (a.get("attachments") or []) == (b.get("attachments") or [])
    )


def _int_ts(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def append_to_context(session: Session, row: dict[str, Any], *, dedupe: bool = True) -> None:
    """Mirror a transcript row into `context_messages`, without duplicating the current turn.

    A user row is skipped only when the context already ends with that exact turn;
    an assistant row only when the current context turn (after its last user row)
    already holds the same text in its last 8 assistant rows. `dedupe=False` is for
    rows that are new by construction (a fold's fresh segments).
    """
    proj = context_projection(row)
    if proj is None:
        return
    ctx = session.context_messages
    if not ctx:
        ctx.extend(p for p in map(context_projection, session.messages) if p is not None)
        if ctx and ctx[-1] == proj:
            return  # seeding from the transcript already took this row
    if not dedupe:
        ctx.append(proj)
        return
    if proj.get("role") == "user":
        if ctx and _same_checkpoint(ctx[-1], proj):
            return
    elif proj.get("role") == "assistant":
        text = normalize_text(proj.get("content"))
        last_user = max((i for i, r in enumerate(ctx) if r.get("role") == "user"), default=-1)
        recent = [r for r in ctx[last_user + 1:] if r.get("role") == "assistant"][-8:]
        if text and any(normalize_text(r.get("content")) == text for r in recent):
            return
    ctx.append(proj)


def api_messages(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as a provider accepts them: no errors, no markers, no reasoning, no private keys."""
    out = []
    for row in rows:
        if row.get("_error"):
            continue
        msg = {k: row[k] for k in _API_KEYS if k in row}
        if msg.get("role") and (msg.get("content") or msg.get("tool_calls") or msg.get("tool_call_id")):
            out.append(msg)
    return out


# -- tools ----------------------------------------------------------------------------------

def tool_already_present(
    session: Session,
    name: str,
    preview: Any,
    stream_id: str | None = None,
    *,
    tid: str | None = None,
    turn_start: int | None = None,
) -> bool:
    """Is this journaled tool call already on a card?

    A card tagged with another run never matches. Cards that carry a provider
    `tid` match on it; otherwise on name + preview. Untagged cards (live or from
    the core transcript) match only within the current turn when it is known.
    """
    wanted = normalize_text(preview)
    for card in session.tool_calls:
        tagged = card.get("_recovered_stream_id") or card.get("_run_id")
        if stream_id is not None and tagged and tagged != stream_id:
            continue
        if not tagged and turn_start is not None:
            anchor = card.get("assistant_msg_idx")
            if isinstance(anchor, int) and anchor < turn_start:
                continue
        if tid and card.get("tid") == tid:
            return True
        if card.get("name") == name and normalize_text(card.get("preview") or card.get("snippet")) == wanted:
            return True
    return False


# -- the fold ---------------------------------------------------------------------------------

@dataclass
class Fold:
    """Append a run's journal rows to a session's transcript.

    `turn_start` is the index of the run's user row: with `dedupe`, only rows of
    this turn (or rows tagged with this run) may absorb journal text, never an
    earlier turn's identical answer. `recovered=True` tags rows as recovered from
    the journal; a live settle tags them with `_run_id` instead.
    """

    session: Session
    stream_id: str
    turn_start: int
    dedupe: bool = False
    recovered: bool = True
    output: bool = False
    _parts: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
    _first_ts: float | None = None
    _current: int | None = None
    _claimed: set[int] = field(default_factory=set)
    _open: dict[str, dict[str, Any]] = field(default_factory=dict)
    _cards: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._existing = len(self.session.messages)
        if self.dedupe:
            for card in self.session.tool_calls:
                if self._owns(card) and card.get("tid") and not card.get("done"):
                    self._open[str(card["tid"])] = card

    def _owns(self, row: dict[str, Any]) -> bool:
        return row.get("_recovered_stream_id") == self.stream_id or row.get("_run_id") == self.stream_id

    def _tags(self) -> dict[str, Any]:
        if self.recovered:
            return {"_recovered_from_run_journal": True, "_recovered_stream_id": self.stream_id}
        return {"_run_id": self.stream_id}

    def feed(self, rows: Iterable[JournalRow]) -> bool:
        parts = self._parts
        for row in rows:
            if row.event == "token":  # the hot path: most rows are plain text deltas
                text = row.payload.get("text")
                if isinstance(text, str) and text:
                    parts.append(text)
                    if self._first_ts is None:
                        self._first_ts = row.created_at
                continue
            self.feed_row(row)
        self.flush()
        for card in self._cards:
            if card["name"] == "approval" and not card["done"]:
                # Nobody answered before the run ended: nothing was run on its behalf.
                card.update(done=True, is_error=True, choice="deny", reason="not answered before the run ended")
        self.session.tool_calls.extend(self._cards)
        return self.output

    def feed_row(self, row: JournalRow) -> None:
        event, payload = row.event, row.payload
        if event in ("token", "reasoning"):
            text = payload.get("text")
            if text is None and event == "reasoning":
                text = payload.get("reasoning") or payload.get("thinking")
            if isinstance(text, str) and text:
                (self._parts if event == "token" else self._reasoning).append(text)
                if self._first_ts is None:
                    self._first_ts = row.created_at
        elif event == "interim_assistant":
            self._interim(payload)
        elif event == "tool":
            self._tool(row)
        elif event == "tool_complete":
            self._tool_complete(payload)
        elif event == "approval":
            self._approval(row)
        elif row.terminal is True:
            self.flush()

    def _interim(self, payload: dict[str, Any]) -> None:
        text = payload.get("text")
        if not payload.get("already_streamed") and isinstance(text, str) and text.strip():
            if self._parts and not "".join(self._parts)[-1:].isspace():
                self._parts.append("\n\n")
            self._parts.append(text)
        self.flush()

    def flush(self) -> int | None:
        """Close the current text segment; returns the index of this pass's latest assistant row."""
        content = "".join(self._parts).strip()
        reasoning = "".join(self._reasoning).strip()
        self._parts.clear()
        self._reasoning.clear()
        ts, self._first_ts = self._first_ts, None
        if not content and not reasoning:
            return self._current
        messages = self.session.messages
        idx = self._match(content, reasoning) if self.dedupe else None
        if idx is None:
            row: dict[str, Any] = {"role": "assistant", "content": content, "timestamp": int(ts or time.time())}
            row.update(self._tags())
            if reasoning:
                row["reasoning"] = reasoning
            messages.append(row)
            idx = len(messages) - 1
            self.output = True
            append_to_context(self.session, row, dedupe=False)  # a new segment of this run
        else:
            existing = messages[idx]
            if reasoning and not existing.get("reasoning"):
                existing["reasoning"] = reasoning
                self.output = True
            append_to_context(self.session, existing)
        self._claimed.add(idx)
        self._current = idx
        return idx

    def _match(self, content: str, reasoning: str) -> int | None:
        """An existing row of this turn that already holds this segment."""
        messages = self.session.messages
        wanted = normalize_text(content)
        for idx in range(self._existing):
            row = messages[idx]
            if idx in self._claimed or row.get("role") != "assistant" or row.get("_error"):
                continue
            if idx < self.turn_start and not self._owns(row):
                continue
            if not wanted:
                if row.get("content") == "" and self._owns(row) and row.get("reasoning") == reasoning:
                    return idx
                continue
            have = normalize_text(row.get("content"))
            if have == wanted or (len(wanted) >= MIN_CONTAINED_DEDUPE_CHARS and wanted in have):
                return idx
        return None

    def _anchor(self) -> int:
        idx = self.flush()
        if idx is not None:
            return idx
        messages = self.session.messages
        for i in range(len(messages) - 1, -1, -1):
            row = messages[i]
            if row.get("role") == "assistant" and row.get("content") == "" and self._owns(row):
                self._current = i
                return i
        anchor: dict[str, Any] = {"role": "assistant", "content": "", "timestamp": int(time.time())}
        anchor.update(self._tags())
        messages.append(anchor)
        self._current = len(messages) - 1
        return self._current

    def _tool(self, row: JournalRow) -> None:
        payload = row.payload
        name = str(payload.get("name") or "tool")
        tid = payload.get("tid")
        preview = payload.get("preview")
        anchor = self._anchor()
        if self.dedupe and tool_already_present(
            self.session, name, preview, self.stream_id, tid=tid, turn_start=self.turn_start
        ):
            return
        card: dict[str, Any] = {
            "name": name, "preview": preview, "snippet": preview,
            "tid": str(tid) if tid else f"journal-{row.seq}", "assistant_msg_idx": anchor,
            "args": cut_args(payload.get("args") or {}), "done": False, "is_error": False,
        }
        card.update(self._tags())
        self._cards.append(card)
        self.output = True
        if tid:
            self._open[str(tid)] = card

    def _approval(self, row: JournalRow) -> None:
        """An approval is shown as a card of its own: what was asked, and how it was answered."""
        payload = row.payload
        approval_id = str(payload.get("approval_id") or f"journal-{row.seq}")
        if payload.get("status") == "pending":
            card: dict[str, Any] = {
                "name": "approval", "preview": payload.get("description"), "snippet": payload.get("description"),
                "tid": approval_id, "assistant_msg_idx": self._anchor(),
                "args": cut_args({"command": payload.get("command")}), "done": False, "is_error": False,
            }
            card.update(self._tags())
            self._cards.append(card)
            self._open[approval_id] = card
            self.output = True
            return
        answered = self._open.pop(approval_id, None)
        if answered is not None:
            choice = str(payload.get("choice") or "deny")
            answered.update(done=True, is_error=choice != "allow_once", choice=choice, reason=payload.get("reason"))

    def _tool_complete(self, payload: dict[str, Any]) -> None:
        tid = payload.get("tid")
        card = self._open.pop(str(tid), None) if tid else None
        if card is None:
            # No provider id to pair on: the newest open card of that name that has none either.
            name = payload.get("name")
            card = next(
                (
                    c for c in reversed(self._cards)
                    if not c["done"] and c["tid"].startswith("journal-") and (not name or c["name"] == name)
                ),
                None,
            )
        if card is None:
            return
        card["done"] = True
        if payload.get("preview") is not None:
            card["preview"] = card["snippet"] = payload["preview"]
        if payload.get("duration") is not None:
            card["duration"] = payload["duration"]
        card["is_error"] = bool(payload.get("is_error"))
