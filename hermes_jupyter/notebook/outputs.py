"""A `Transcript` → the mime bundle of a hermes cell output: the one renderer of cell outputs.

The kernel magic, `jupyter hermes recover`, `POST notebooks/recover` and
`GET runs/{run_id}/bundle` all render through `final_bundle`, so a live cell, a
finished cell and a recovered cell read alike, byte for byte. The fold itself is
`transcript.fold` (docs/transcript.md); this module only renders its rows.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any, Callable, Final, Iterable, Mapping, NotRequired, TypedDict

from msgspec.structs import replace

from ..events import JournalRow
from ..fences import fence_for, longest_run
from ..wording import USAGE_JOIN, USAGE_WORDS, answer_words
from ..transcript import FINAL_STATUSES, Transcript, TranscriptFold, Verdict
from ..transcript.chain import whole_answer
from .cell_edits import change_words
from ..transcript.rows import (
    ApprovalRow,
    AssistantRow,
    CellChangeRow,
    ClarifyRow,
    MarkerRow,
    NoteRow,
    PlanRow,
    ProposalRow,
    ReasoningRow,
    Row,
    ToolRow,
    UsageRow,
)

RUN_MIME: Final = "application/vnd.hermes.run+json"
WIDGET_MIME: Final = "application/vnd.jupyter.widget-view+json"
RUNNING: Final = "running"
#: What a run without a terminal row and without a writer was, when nobody says otherwise: its worker is gone.
DEFAULT_DEAD_CAUSE: Final = "lost_worker"

#: The most a cell's markdown, and separately its plain text, may hold, in UTF-8 bytes. A longer answer keeps
#: its head and ends with `SHORTENED_NOTE`, so a huge (or planted) answer cannot make a huge notebook.
OUTPUT_MAX_BYTES: Final = 1_000_000
SHORTENED_NOTE: Final = (
    "This answer was shortened to fit in the notebook. "
    "The whole answer is in the Hermes sidebar, in this run's session."
)

_PREVIEW_MAX_CHARS = 600
_PREVIEW_MAX_LINES = 12
_ARGS_MAX_CHARS = 100
_PLAN_BOXES: Final = {"completed": "[x]", "in_progress": "[ ]", "pending": "[ ]"}

MimeBundle = dict[str, Any]

__all__ = [
    "DEFAULT_DEAD_CAUSE", "FINAL_STATUSES", "OUTPUT_MAX_BYTES", "SHORTENED_NOTE", "RUN_MIME", "RUNNING", "WIDGET_MIME", "MimeBundle", "RunOutput", "RunRef",
    "bundle_for", "final_bundle", "fold_rows", "live_bundle", "render_markdown", "render_plain", "run_ref_of",
    "summarize_args", "view_state",
]


class RunRef(TypedDict):
    """`application/vnd.hermes.run+json`: enough to find the run again without a kernel.

    `continues` (only on a continuation) names the run it continues: the bundle then
    shows the whole answer, every part (transcript/chain.py).
    """

    run_id: str
    session_id: str
    seq: int
    status: str
    continues: NotRequired[str]
    #: The autonomy of a notebook run (docs/autonomy.md): its cell's header names it.
    autonomy: NotRequired[str]


class RunOutput:
    """Incremental fold of one run's rows for a cell; `snapshot()` is cheap enough to call on every refresh."""

    def __init__(self, session_id: str, run_id: str) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self._fold = TranscriptFold(run_id, session_id)
        #: The parts a continuation goes on from (kernel/parts.py): shown before its own rows, as the
        #: server's bundle shows the whole answer once it ended.
        self.earlier: list[Transcript] = []

    @property
    def seq(self) -> int:
        return self._fold.last_seq

    @property
    def terminal(self) -> JournalRow | None:
        return self._fold.terminal

    @property
    def continues(self) -> str | None:
        """The run this one continues, once its first row said so (docs/transcript.md, "Continue")."""
        return self._fold.continues

    def feed(self, rows: Iterable[JournalRow]) -> None:
        """Add rows in seq order; rows at or below the last seq are ignored (a resumed stream may repeat)."""
        self._fold.feed(rows)

    def snapshot(self, status: str | None = None, *, cause: str = DEFAULT_DEAD_CAUSE) -> Transcript:
        """The run so far. A terminal row decides how it ended; else `status="interrupted"` closes a dead
        run with the interrupted marker for `cause`, and anything else leaves it running."""
        verdict = Verdict(cause=cause) if status == "interrupted" and self.terminal is None else None
        own = self._fold.snapshot(verdict)
        if not self.earlier:
            return own
        if own.continues is None:  # shown before its first row (which names the part it continues) arrived
            own = replace(own, continues=self.earlier[-1].run_id)
        return whole_answer(own, {part.run_id: part for part in self.earlier}.get)


def fold_rows(
    rows: Iterable[JournalRow], session_id: str, run_id: str, *, status: str | None = None,
    cause: str = DEFAULT_DEAD_CAUSE,
) -> Transcript:
    """Fold a run's rows in one go (see `RunOutput.snapshot` for `status` and `cause`)."""
    output = RunOutput(session_id, run_id)
    output.feed(rows)
    return output.snapshot(status, cause=cause)


def ref_of(t: Transcript) -> RunRef:
    ref: RunRef = {"run_id": t.run_id, "session_id": t.session_id, "seq": t.last_seq, "status": t.status}
    if t.continues:
        ref["continues"] = t.continues
    if t.autonomy:
        ref["autonomy"] = t.autonomy
    return ref


# -- markdown --------------------------------------------------------------------------------

def render_markdown(t: Transcript) -> str:
    """Markdown of the run: reasoning folded, text, cards as list items, plan as a checklist, notes,
    the closing marker, and a quiet status line (with usage) at the foot."""
    blocks: list[str] = []
    items: list[str] = []  # consecutive cards form one list
    for row in t.rows:
        item = _card_markdown(row)
        if item is not None:
            items.append(item)
            continue
        if items:
            blocks.append("\n".join(items))
            items = []
        block = _block_markdown(row)
        if block:
            blocks.append(block)
    if items:
        blocks.append("\n".join(items))
    return _capped(blocks, f"*{SHORTENED_NOTE}*", f"<sub>hermes · {_status_words(t)}</sub>", _close_markdown)


def _block_markdown(row: Row) -> str | None:
    if isinstance(row, ReasoningRow):
        return "<details><summary>Reasoning</summary>\n\n" + html.escape(row.text, quote=False) + "\n\n</details>"
    if isinstance(row, AssistantRow):
        return row.text
    if isinstance(row, PlanRow):
        lines = [f"- {_PLAN_BOXES[i.status]} {_escape_inline(i.text)}" + (" *(in progress)*" if i.status == "in_progress" else "")
                 for i in row.items]
        return "**Plan**\n\n" + "\n".join(lines) if lines else None
    if isinstance(row, NoteRow):
        return f"> **Note:** {row.text}" if row.level == "warning" else f"*{_escape_inline(row.text)}*"
    if isinstance(row, MarkerRow):
        return "\n".join(f"> {line}" if line else ">" for line in row.text.split("\n"))
    return None  # usage: in the status line


def _card_markdown(row: Row) -> str | None:
    if isinstance(row, ToolRow):
        return _tool_markdown(row)
    if isinstance(row, ApprovalRow):
        line = "- **Approval:** " + _escape_inline(row.description or "the agent asked to run a command")
        if row.command:
            line += " " + _code_span(row.command)
        return line + " · " + _approval_words(row)
    if isinstance(row, ClarifyRow):
        line = "- **Question:** " + _escape_inline(row.question)
        if row.choices:
            line += " (" + " / ".join(_escape_inline(c) for c in row.choices) + ")"
        return line + " · " + _clarify_words(row)
    if isinstance(row, CellChangeRow):
        return "- **Notebook:** " + _escape_inline(change_words(row))
    if isinstance(row, ProposalRow):
        words = f"{_PROPOSAL_ACTION_WORDS[row.action]} · {_proposal_words(row)}"
        return f"- **Proposed cell:** {words}" + _fenced(row.source)
    return None


#: How a proposal's action and status read in a cell output.
_PROPOSAL_ACTION_WORDS: Final = {
    "insert_below": "a new cell below another", "insert_end": "a new cell at the end", "replace": "a new source for a cell",
    "delete": "removing a cell",
}
_PROPOSAL_PENDING: Final = "waiting for you to accept or reject it in the notebook"


def _tool_markdown(tool: ToolRow) -> str:
    line = f"- **{_escape_inline(tool.name)}**"
    args = summarize_args(tool.args)
    if args:
        line += " " + _code_span(args)
    line += f" · {tool.status}"
    if tool.duration_s is not None:
        line += f" · {tool.duration_s:.2f} s"
    return line + _fenced(tool.preview)


def _fenced(text: str | None) -> str:
    """A preview, cut, as a fenced block inside a list item (empty when there is nothing to show)."""
    preview = _cut_preview(text)
    if not preview:
        return ""
    fence = fence_for(preview)
    body = "\n".join("  " + ln for ln in preview.split("\n"))
    return f"\n\n  {fence}\n{body}\n  {fence}"


def _by(row: ApprovalRow | ClarifyRow | ProposalRow) -> tuple[str | None, str | None]:
    by = row.answered_by
    return (by.kind, by.user) if by is not None else (None, None)


def _approval_words(row: ApprovalRow) -> str:
    """"Allowed once by alice", "Not answered", … (wording.answer_words)."""
    if row.status == "pending":
        return "waiting for your answer"
    return answer_words(row.choice or "deny", *_by(row), row.reason)


def _clarify_words(row: ClarifyRow) -> str:
    if row.status == "pending":
        return "waiting for your answer"
    kind, user = _by(row)
    if row.answer is None:
        return answer_words("answered", kind or "timeout", user, row.reason)
    return f"{answer_words('answered', kind, user)}: {row.answer}"


def _proposal_words(row: ProposalRow) -> str:
    return _PROPOSAL_PENDING if row.status == "pending" else answer_words(row.status, *_by(row))


# -- plain text ------------------------------------------------------------------------------

def render_plain(t: Transcript) -> str:
    """The run as plain text (what a terminal or a notebook without markdown shows)."""
    blocks: list[str] = []
    for row in t.rows:
        text = _plain(row)
        if text:
            blocks.append(text)
    return _capped(blocks, SHORTENED_NOTE, f"[hermes: {_status_words(t)}]", lambda head: "")


def _capped(blocks: list[str], note: str, footer: str, close: Callable[[str], str]) -> str:
    """The blocks and the footer, joined; when that passes `OUTPUT_MAX_BYTES`, the head of the blocks (cut at a
    line end where one is near), what `close` says closes what the cut left open, `note`, the footer: within
    the cap (the closing is a few bytes, inside the note's margin)."""
    body = "\n\n".join(blocks)
    whole = f"{body}\n\n{footer}" if body else footer
    if len(whole) * 4 <= OUTPUT_MAX_BYTES or len(whole.encode()) <= OUTPUT_MAX_BYTES:
        return whole
    tail = f"\n\n{note}\n\n{footer}"
    budget = max(0, OUTPUT_MAX_BYTES - len(tail.encode()) - _CLOSE_MAX_BYTES)
    head = body.encode()[:budget].decode(errors="ignore")
    line_end = head.rfind("\n", max(0, len(head) - 4096))
    if line_end > 0:
        head = head[:line_end]
    head = head.rstrip()
    return head + close(head) + tail


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_CLOSE_MAX_BYTES = 4096


def _close_markdown(head: str) -> str:
    """Closes a code fence or reasoning fold the cut left open, so the note renders as text after them."""
    opener = ""
    for match in _FENCE.finditer(head):
        fence, rest = match.groups()
        if not opener:
            opener = fence
        elif fence[0] == opener[0] and len(fence) >= len(opener) and not rest.strip():
            opener = ""
    # An absurdly long fence is left open rather than passing the cap.
    closing = f"\n{opener}" if opener and len(opener) < _CLOSE_MAX_BYTES // 2 else ""
    if head.count("<details>") > head.count("</details>"):
        closing += "\n\n</details>"
    return closing


def _plain(row: Row) -> str | None:
    if isinstance(row, AssistantRow):
        return row.text
    if isinstance(row, ToolRow):
        extra = f", {row.duration_s:.2f} s" if row.duration_s is not None else ""
        preview = _cut_preview(row.preview)
        return f"[tool {row.name} {summarize_args(row.args)}: {row.status}{extra}]" + (f"\n{preview}" if preview else "")
    if isinstance(row, ApprovalRow):
        command = f" `{row.command}`" if row.command else ""
        return f"[approval: {row.description or 'run a command'}{command}: {_approval_words(row)}]"
    if isinstance(row, ClarifyRow):
        return f"[question: {row.question}: {_clarify_words(row)}]"
    if isinstance(row, CellChangeRow):
        return f"[notebook: {change_words(row)}]"
    if isinstance(row, ProposalRow):
        return f"[proposed cell, {_PROPOSAL_ACTION_WORDS[row.action]}: {_proposal_words(row)}]"
    if isinstance(row, PlanRow):
        return "Plan:\n" + "\n".join(f"{_PLAN_BOXES[i.status]} {i.text}" for i in row.items) if row.items else None
    if isinstance(row, NoteRow):
        return f"Note: {row.text}"
    if isinstance(row, MarkerRow):
        return row.text.replace("**", "").replace("*", "")
    return None  # reasoning is for the markdown fold; usage is in the status line


def _status_words(t: Transcript) -> str:
    words: str = "streaming…" if t.status == RUNNING else t.status
    tools = sum(1 for r in t.rows if isinstance(r, ToolRow))
    if tools:
        words += f" · {tools} tool call{'s' if tools != 1 else ''}"
    usage = next((r for r in t.rows if isinstance(r, UsageRow)), None)
    return words + (" · " + usage_words(usage) if usage is not None else "")


def usage_words(usage: UsageRow) -> str:
    """`gpt-4o · 1,234 tokens in · 56 out · 3.2 s · $0.0123`: the footer of a turn (model when known), in
    the one wording of `wording.USAGE_WORDS` (the labextension's `usageWords` says the same).

    Counts the provider did not report read "not reported", never 0 (docs/transcript.md).
    """
    w = USAGE_WORDS
    parts = [usage.model] if usage.model else []
    parts += _token_words(usage.input_tokens, usage.output_tokens)
    if usage.our_count and (usage.input_tokens is not None or usage.output_tokens is not None):
        parts[-1] += " " + w["our_count"]
    if usage.cached_tokens:
        parts.append(w["cached"].format(n=f"{usage.cached_tokens:,}"))
    if usage.duration_s is not None:
        parts.append(w["duration"].format(s=_fixed(usage.duration_s, 1)))
    if usage.cost_usd is not None:
        parts.append(w["cost"].format(usd=_fixed(usage.cost_usd, 4)))
    return USAGE_JOIN.join(parts)


def _fixed(value: float, digits: int) -> str:
    """`value` to `digits` decimals, halves rounded up: the same arithmetic as the labextension's
    `fixed` (Python's own format rounds 1.25 to 1.2, JavaScript's toFixed to 1.3)."""
    scale = 10**digits
    return f"{math.floor(value * scale + 0.5) / scale:.{digits}f}"


def _token_words(tokens_in: int | None, tokens_out: int | None) -> list[str]:
    w = USAGE_WORDS
    if tokens_in is None and tokens_out is None:
        return [w["not_reported"]]
    return [w["tokens_in"].format(n=f"{tokens_in:,}") if tokens_in is not None else w["in_not_reported"],
            w["tokens_out"].format(n=f"{tokens_out:,}") if tokens_out is not None else w["out_not_reported"]]


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


def _code_span(text: str) -> str:
    ticks = "`" * (longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _escape_inline(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


# -- bundles -------------------------------------------------------------------------------

def final_bundle(t: Transcript) -> MimeBundle:
    """The static bundle a finished (or recovered) cell keeps: no widget, renders anywhere."""
    return {"text/markdown": render_markdown(t), "text/plain": render_plain(t), RUN_MIME: dict(ref_of(t))}


def live_bundle(t: Transcript, widget_model_id: str | None = None) -> MimeBundle:
    """The streaming bundle: the static parts plus, when given, the live widget's view."""
    bundle = final_bundle(t)
    if widget_model_id:
        bundle[WIDGET_MIME] = {"version_major": 2, "version_minor": 0, "model_id": widget_model_id}
    return bundle


def bundle_for(t: Transcript, widget_model_id: str | None = None) -> MimeBundle:
    """Live while the run is running, static once its status is final."""
    return final_bundle(t) if t.is_final else live_bundle(t, widget_model_id)


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


# -- the live widget ---------------------------------------------------------------------------

def view_state(t: Transcript) -> dict[str, Any]:
    """The transcript as the live widget's JSON: text segments, each with the cards that follow it."""
    segments: list[dict[str, Any]] = []
    ending = ""
    for row in t.rows:
        if isinstance(row, MarkerRow):
            ending = row.text
            continue
        if isinstance(row, (ReasoningRow, AssistantRow)):
            key = "reasoning" if isinstance(row, ReasoningRow) else "text"
            last = segments[-1] if segments else None
            if last is None or last["tools"] or last["text"] or (key == "reasoning" and last["reasoning"]):
                segments.append(last := {"text": "", "reasoning": "", "tools": []})
            last[key] = row.text
            continue
        card = _widget_card(row)
        if card is not None:
            if not segments:
                segments.append({"text": "", "reasoning": "", "tools": []})
            segments[-1]["tools"].append(card)
    return {"segments": segments, "status": t.status, "seq": t.last_seq, "ending": ending}


def _widget_card(row: Row) -> dict[str, Any] | None:
    """A card in the widget's tool-card shape (`name`, `args`, `preview`, `status`, `duration_s`, `tid`)."""
    if isinstance(row, ToolRow):
        return {"name": row.name, "args": summarize_args(row.args), "preview": _cut_preview(row.preview),
                "status": row.status, "duration_s": row.duration_s, "tid": row.tid}
    if isinstance(row, ApprovalRow):
        status = "running" if row.status == "pending" else "done" if row.choice != "deny" else "error"
        return {"name": "approval", "args": row.command or "", "preview": f"{row.description or ''} · {_approval_words(row)}",
                "status": status, "duration_s": None, "tid": row.approval_id}
    text = _plain(row)
    if isinstance(row, ClarifyRow):  # pending: the widget offers its choices and a box for the answer
        return {"name": "question", "args": "", "preview": text, "status": "running" if row.status == "pending" else "done",
                "duration_s": None, "tid": row.clarify_id, "choices": list(row.choices)}
    if text is None or isinstance(row, AssistantRow):
        return None
    name = {PlanRow: "plan", NoteRow: "note"}.get(type(row), "note")
    return {"name": name, "args": "", "preview": text, "status": "done", "duration_s": None, "tid": row.id}
