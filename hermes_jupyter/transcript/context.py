"""The model-facing side of a session: context rows, their projection and de-duplication. Pure.

Transcript rows (what people read) and context rows (what the model is sent) differ:
markers and errors are never sent, reasoning is display-only. These helpers keep the
two in step without duplicating the current turn.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..attachments import model_message
from ..sessions.store import Session

_LONG_ARG_KEYS = frozenset({"command", "path", "patch", "content", "code", "file_path"})
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def normalize_text(text: Any) -> str:
    """Whitespace-collapsed text, for comparing segments that differ only in spacing."""
    return " ".join(str(text or "").split())


def cut_args(args: Any) -> Any:
    """Tool arguments as shown on a card: at most 4 keys, long values cut. Arguments with nothing to cut
    are the same dict (never changed after the journal row they came from), not a copy of it: the
    stored turn's tool row holds them too."""
    if not isinstance(args, dict):
        return args
    if len(args) <= 4 and not any(isinstance(v, str) and len(v) > 120 for v in args.values()):
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
    proj = dict(row)  # a copy, then the few private keys out: faster than filtering every key
    for key in row:
        if (key[:1] == "_" and key != "_recovered") or key == "reasoning":
            del proj[key]
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
        if msg.get("role") == "user" and row.get("attachments") and isinstance(msg.get("content"), str):
            msg["content"] = model_message(msg["content"], row["attachments"])
        if msg.get("role") and (msg.get("content") or msg.get("tool_calls") or msg.get("tool_call_id")):
            out.append(msg)
    return out


# -- tools ----------------------------------------------------------------------------------

def existing_tool_card(
    cards: list[dict[str, Any]],
    name: str,
    preview: Any,
    stream_id: str | None = None,
    *,
    tid: str | None = None,
    turn_start: int | None = None,
) -> dict[str, Any] | None:
    """The session's card for this journaled tool call, if it already has one.

    A card tagged with another run never matches. Cards that carry a provider
    `tid` match on it; otherwise on name + preview. Untagged cards (live or from
    the core transcript) match only within the current turn when it is known.
    """
    wanted = normalize_text(preview)
    for card in cards:
        tagged = card.get("_recovered_stream_id") or card.get("_run_id")
        if stream_id is not None and tagged and tagged != stream_id:
            continue
        if not tagged and turn_start is not None:
            anchor = card.get("assistant_msg_idx")
            if isinstance(anchor, int) and anchor < turn_start:
                continue
        if tid and card.get("tid") == tid:
            return card
        if card.get("name") == name and normalize_text(card.get("preview") or card.get("snippet")) == wanted:
            return card
    return None


def tool_already_present(
    session: Session,
    name: str,
    preview: Any,
    stream_id: str | None = None,
    *,
    tid: str | None = None,
    turn_start: int | None = None,
) -> bool:
    """Is this journaled tool call already on one of the session's cards? (see `existing_tool_card`)"""
    return existing_tool_card(session.tool_calls, name, preview, stream_id, tid=tid, turn_start=turn_start) is not None
