"""Journal rows → the mime bundle of a hermes cell output. Pure: no I/O, no kernel, no server.

The magic, `jupyter hermes recover` and the server's recover endpoint all call
this module, so a live cell, a finished cell and a recovered cell read alike.
The fold itself is `transcript.Fold` (text split at tool boundaries, tool
cards paired by `tid`); this module only renders its result.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Final, Iterable, Literal, Mapping, TypedDict

from .. import markers
from ..events import JournalRow
from ..store import Session
from ..transcript import Fold

RUN_MIME: Final = "application/vnd.hermes.run+json"
WIDGET_MIME: Final = "application/vnd.jupyter.widget-view+json"
RUNNING: Final = "running"
#: Statuses after which a cell output never changes again (CONTRACT §6 `GET runs/{id}`).
FINAL_STATUSES: Final = frozenset({"completed", "interrupted", "cancelled", "errored"})
#: Journal `terminal_state` → run status, as `GET runs/{run_id}` reports it.
STATUS_OF_TERMINAL_STATE: Final[dict[str, str]] = {
    "completed": "completed",
    "tool_limit_reached": "completed",
    "interrupted-by-user": "cancelled",
    "interrupted-by-crash": "interrupted",
    "errored": "errored",
}
#: What a run without a terminal row and without a writer was: its worker is gone.
DEFAULT_DEAD_CAUSE: Final = "lost_worker"

_PREVIEW_MAX_CHARS = 600
_PREVIEW_MAX_LINES = 12
_ARGS_MAX_CHARS = 100

ToolStatus = Literal["running", "done", "error"]
MimeBundle = dict[str, Any]


class RunRef(TypedDict):
    """`application/vnd.hermes.run+json`: enough to find the run again without a kernel."""

    run_id: str
    session_id: str
    seq: int
    status: str


@dataclass(frozen=True, slots=True)
class ToolCard:
    name: str
    args: Any
    preview: str | None
    status: ToolStatus
    duration_s: float | None
    #: The provider's call id (or the approval id for an approval card).
    tid: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    """One stretch of assistant text (with its reasoning) and the tool cards that follow it."""

    text: str
    reasoning: str
    tools: tuple[ToolCard, ...]


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """A run as far as its rows go: segments, status, and the closing note of a run that did not complete."""

    run_id: str
    session_id: str
    seq: int
    status: str
    segments: tuple[Segment, ...]
    ending: str | None

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.segments if s.text)

    @property
    def has_output(self) -> bool:
        return any(s.text or s.reasoning or s.tools for s in self.segments)

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    def ref(self) -> RunRef:
        return {"run_id": self.run_id, "session_id": self.session_id, "seq": self.seq, "status": self.status}


class _PeekFold(Fold):
    """A `Fold` whose unflushed tail can be read without closing the current segment.

    Flushing mid-stream would split the text where a snapshot happened to be
    taken; peeking keeps a live snapshot identical to the final fold's prefix.
    """

    def pending_text(self) -> tuple[str, str]:
        return "".join(self._parts).strip(), "".join(self._reasoning).strip()

    def cards(self) -> list[dict[str, Any]]:
        return self._cards


class RunOutput:
    """Incremental fold of one run's rows; `snapshot()` is cheap enough to call on every refresh."""

    def __init__(self, session_id: str, run_id: str) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.seq = 0
        self.terminal: JournalRow | None = None
        self._session = Session(session_id=session_id)
        self._fold = _PeekFold(self._session, run_id, 0, recovered=False)

    def feed(self, rows: Iterable[JournalRow]) -> None:
        """Add rows in seq order; rows at or below the last seq are ignored (a resumed stream may repeat)."""
        for row in rows:
            seq = row.seq
            if seq <= self.seq or self.terminal is not None:
                continue
            self.seq = seq
            self._fold.feed_row(row)
            if row.terminal is True:
                self.terminal = row

    def snapshot(self, status: str | None = None, *, cause: str = DEFAULT_DEAD_CAUSE) -> RunSnapshot:
        """The run so far. A terminal row decides the status; else `status` (default running).

        `status="interrupted"` without a terminal row describes a dead run: it
        gets the interrupted marker with `cause`.
        """
        segments = self._segments()
        if self.terminal is not None:
            status = STATUS_OF_TERMINAL_STATE.get(str(self.terminal.terminal_state), "errored")
            payload = self.terminal.payload
            cause = str(payload.get("cause") or cause)
        else:
            status = status or RUNNING
            payload = {}
        has_output = any(s.text or s.reasoning or s.tools for s in segments)
        ending = _ending(status, payload, cause, has_output)
        return RunSnapshot(self.run_id, self.session_id, self.seq, status, segments, ending)

    def _segments(self) -> tuple[Segment, ...]:
        messages = self._session.messages
        by_anchor: dict[int, list[ToolCard]] = {}
        for card in self._fold.cards():
            by_anchor.setdefault(int(card.get("assistant_msg_idx") or 0), []).append(_tool_card(card))
        segments = [
            Segment(str(m.get("content") or ""), str(m.get("reasoning") or ""), tuple(by_anchor.get(i, ())))
            for i, m in enumerate(messages)
        ]
        tail_text, tail_reasoning = self._fold.pending_text() if self.terminal is None else ("", "")
        if tail_text or tail_reasoning:
            segments.append(Segment(tail_text, tail_reasoning, ()))
        return tuple(segments)


def _tool_card(card: Mapping[str, Any]) -> ToolCard:
    status: ToolStatus = "error" if card.get("is_error") else "done" if card.get("done") else "running"
    preview = card.get("preview")
    duration = card.get("duration")
    return ToolCard(
        name=str(card.get("name") or "tool"),
        args=card.get("args"),
        preview=None if preview is None else str(preview),
        status=status,
        duration_s=float(duration) if isinstance(duration, (int, float)) else None,
        tid=None if card.get("tid") is None else str(card["tid"]),
    )


def _ending(status: str, payload: Mapping[str, Any], cause: str, has_output: bool) -> str | None:
    """The closing note: the interrupted or cancel marker, or the error, worded as CONTRACT §5 says."""
    if status == "cancelled":
        return markers.CANCEL_CONTENT
    if status == "interrupted":
        return markers.interrupted_content(cause, "recovered" if has_output else "none")
    if status == "errored":
        return f"**Error:** {payload.get('message') or 'the run failed.'}"
    return None


def fold_rows(
    rows: Iterable[JournalRow], session_id: str, run_id: str, *, status: str | None = None,
    cause: str = DEFAULT_DEAD_CAUSE,
) -> RunSnapshot:
    """Fold a run's rows in one go (see `RunOutput.snapshot` for `status` and `cause`)."""
    output = RunOutput(session_id, run_id)
    output.feed(rows)
    return output.snapshot(status, cause=cause)


# -- rendering -----------------------------------------------------------------------------

def render_markdown(snap: RunSnapshot) -> str:
    """Markdown of the run so far: text, reasoning in <details>, tool cards, the closing note, a status line."""
    blocks: list[str] = []
    for seg in snap.segments:
        if seg.reasoning:
            blocks.append(
                "<details><summary>Reasoning</summary>\n\n"
                + html.escape(seg.reasoning, quote=False) + "\n\n</details>"
            )
        if seg.text:
            blocks.append(seg.text)
        if seg.tools:
            blocks.append("\n".join(_tool_markdown(t) for t in seg.tools))
    if snap.ending:
        blocks.append("\n".join(f"> {line}" if line else ">" for line in snap.ending.split("\n")))
    blocks.append(f"<sub>hermes · {_status_words(snap)}</sub>")
    return "\n\n".join(blocks)


def _tool_markdown(tool: ToolCard) -> str:
    line = f"- **{_escape_inline(tool.name)}**"
    args = summarize_args(tool.args)
    if args:
        line += " " + _code_span(args)
    line += f" · {tool.status}"
    if tool.duration_s is not None:
        line += f" · {tool.duration_s:.2f} s"
    preview = _cut_preview(tool.preview)
    if preview:
        fence = "`" * max(3, _longest_run(preview, "`") + 1)
        body = "\n".join("  " + ln for ln in preview.split("\n"))
        line += f"\n\n  {fence}\n{body}\n  {fence}"
    return line


def render_plain(snap: RunSnapshot) -> str:
    """The run as plain text (what a terminal or a notebook without markdown shows)."""
    blocks: list[str] = []
    for seg in snap.segments:
        if seg.text:
            blocks.append(seg.text)
        for tool in seg.tools:
            extra = f", {tool.duration_s:.2f} s" if tool.duration_s is not None else ""
            line = f"[tool {tool.name} {summarize_args(tool.args)}: {tool.status}{extra}]"
            preview = _cut_preview(tool.preview)
            blocks.append(line + (f"\n{preview}" if preview else ""))
    if snap.ending:
        blocks.append(snap.ending.replace("**", "").replace("*", ""))
    blocks.append(f"[hermes: {_status_words(snap)}]")
    return "\n\n".join(blocks)


def _status_words(snap: RunSnapshot) -> str:
    words = "streaming…" if snap.status == RUNNING else snap.status
    tools = sum(len(s.tools) for s in snap.segments)
    return words + (f" · {tools} tool call{'s' if tools != 1 else ''}" if tools else "")


def summarize_args(args: Any) -> str:
    """`key=value, …` on one line, at most about 100 characters."""
    if isinstance(args, Mapping):
        text = ", ".join(f"{k}={v}" for k, v in args.items())
    elif args in (None, "", [], {}):
        return ""
    else:
        text = str(args)
    text = " ".join(text.split())
    return text if len(text) <= _ARGS_MAX_CHARS else text[: _ARGS_MAX_CHARS - 1] + "…"


def _cut_preview(preview: str | None) -> str:
    if not preview:
        return ""
    lines = preview.strip("\n").split("\n")
    cut = "\n".join(lines[:_PREVIEW_MAX_LINES])
    if len(cut) > _PREVIEW_MAX_CHARS:
        cut = cut[:_PREVIEW_MAX_CHARS]
    return cut + ("\n…" if cut != preview.strip("\n") else "")


def _longest_run(text: str, char: str) -> int:
    return max((len(m) for m in re.findall(f"{re.escape(char)}+", text)), default=0)


def _code_span(text: str) -> str:
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _escape_inline(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


# -- bundles -------------------------------------------------------------------------------

def final_bundle(snap: RunSnapshot) -> MimeBundle:
    """The static bundle a finished (or recovered) cell keeps: no widget, renders anywhere."""
    return {"text/markdown": render_markdown(snap), "text/plain": render_plain(snap), RUN_MIME: dict(snap.ref())}


def live_bundle(snap: RunSnapshot, widget_model_id: str | None = None) -> MimeBundle:
    """The streaming bundle: the static parts plus, when given, the live widget's view."""
    bundle = final_bundle(snap)
    if widget_model_id:
        bundle[WIDGET_MIME] = {"version_major": 2, "version_minor": 0, "model_id": widget_model_id}
    return bundle


def bundle_for(snap: RunSnapshot, widget_model_id: str | None = None) -> MimeBundle:
    """Live while the run is running, static once its status is final."""
    return final_bundle(snap) if snap.is_final else live_bundle(snap, widget_model_id)


def run_ref_of(output: Mapping[str, Any]) -> RunRef | None:
    """The hermes run an nbformat output belongs to, or None if it is not a hermes output."""
    data = output.get("data")
    if not isinstance(data, Mapping):
        return None
    ref = data.get(RUN_MIME)
    if not isinstance(ref, Mapping):
        return None
    run_id, session_id = ref.get("run_id"), ref.get("session_id")
    if not isinstance(run_id, str) or not isinstance(session_id, str):
        return None
    seq = ref.get("seq")
    return {
        "run_id": run_id, "session_id": session_id,
        "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
        "status": str(ref.get("status") or "unknown"),
    }


def view_state(snap: RunSnapshot) -> dict[str, Any]:
    """The snapshot as JSON for the live widget (segments, tools, status, closing note)."""
    return {
        "segments": [
            {
                "text": s.text, "reasoning": s.reasoning,
                "tools": [
                    {
                        "name": t.name, "args": summarize_args(t.args), "preview": _cut_preview(t.preview),
                        "status": t.status, "duration_s": t.duration_s, "tid": t.tid,
                    }
                    for t in s.tools
                ],
            }
            for s in snap.segments
        ],
        "status": snap.status,
        "seq": snap.seq,
        "ending": snap.ending or "",
    }
