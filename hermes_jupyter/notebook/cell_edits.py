"""What one agent change to a notebook cell was, verified, and the provenance it leaves (docs/notebook-edits.md).

`CellChange` is journaled as the `cell_change` event and is what undo works from, so it
records the read-back (what the notebook really holds after the change), never what was
asked. `Provenance` is who asked; `hermes_metadata` is what a changed cell carries under
`metadata.hermes`, so a later human edit shows as a source that no longer matches its hash.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

import msgspec

from ..transcript.rows import CellAction, CellChangeRow, CellLanded as Landed

__all__ = [
    "CellAction", "CellChange", "Landed", "Provenance", "change_words", "hermes_metadata", "outputs_summary",
    "source_sha256",
]
#: Changes one cell's provenance remembers (the oldest are dropped beyond this).
MAX_ACTIONS = 20


@dataclass(frozen=True)
class Provenance:
    """Who asked for a change: the turn, its tool call, its model, and who approved it (None: nobody had to)."""

    session_id: str
    run_id: str
    tool_call_id: str
    model: str | None = None
    approved_by: dict[str, Any] | None = None


class CellChange(msgspec.Struct, kw_only=True):
    """One change as the notebook holds it afterwards (the `cell_change` payload).

    `applied: false` with a plain `why` when nothing changed. `before_source` is what undo
    restores; `source_sha256` is the hash of what the agent left, which undo compares with
    the cell's source now (a differing hash means someone edited it since: a conflict).
    """

    action: CellAction
    cell_id: str
    applied: bool
    why: str | None = None
    path: str = ""
    index: int | None = None
    cell_type: str | None = None
    before_source: str | None = None
    #: The cell's `metadata.hermes` before the change (an earlier run's provenance), which undo puts back.
    before_hermes: dict[str, Any] | None = None
    after_source: str | None = None
    source_sha256: str | None = None
    execution_count: int | None = None
    outputs_summary: str | None = None
    landed: Landed = "file"
    tool_call_id: str = ""
    at: float = msgspec.field(default_factory=time.time)


def source_text(value: Any) -> str:
    """A cell source as one string (nbformat allows a list of lines)."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ("" if value is None else str(value))


def source_sha256(source: Any) -> str:
    """sha256 (hex) of a cell's source text, the fingerprint of what the agent wrote."""
    return hashlib.sha256(source_text(source).encode("utf-8")).hexdigest()


def hermes_metadata(prov: Provenance, source: str, action: CellAction, previous: Any = None) -> dict[str, Any]:
    """`metadata.hermes` after `action`: the provenance, the source hash, and the cell's list of agent actions."""
    earlier = previous.get("actions") if isinstance(previous, dict) else None
    actions = [a for a in earlier if isinstance(a, str)] if isinstance(earlier, list) else []
    return {
        "session_id": prov.session_id, "run_id": prov.run_id, "tool_call_id": prov.tool_call_id,
        "model": prov.model, "approved_by": prov.approved_by, "source_sha256": source_sha256(source),
        "actions": [*actions, action][-MAX_ACTIONS:],
    }


def outputs_summary(outputs: list[dict[str, Any]], limit: int = 300) -> str:
    """One line saying what the outputs are: streams and results as text, errors by name, images counted."""
    parts: list[str] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(source_text(output.get("text")).strip())
        elif kind == "error":
            parts.append(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}")
        else:
            data = output.get("data") or {}
            images = sorted(k for k in data if k.startswith("image/"))
            parts.append(f"an image ({images[0]})" if images else source_text(data.get("text/plain")).strip())
    text = "; ".join(p for p in parts if p) or "no output"
    return text if len(text) <= limit else text[: limit - 1] + "…"


_DONE: dict[str, str] = {"insert": "inserted", "edit": "edited", "delete": "deleted", "run": "ran"}
_TRIED: dict[str, str] = {"insert": "insert a cell", "edit": "edit", "delete": "delete", "run": "run"}


def change_words(row: CellChangeRow) -> str:
    """One change as a person reads it in a cell output: "ran cell a1: [3] an image (image/png) · undone"."""
    cell = f"cell {row.cell_id}" if row.cell_id else "a cell"
    if not row.applied:
        target = "" if row.action == "insert" else f" {cell}"
        return f"could not {_TRIED[row.action]}{target}: {row.why or 'the notebook was not changed.'}"
    words = f"{_DONE[row.action]} {cell}"
    if row.action == "insert" and row.index is not None:
        words += f" at position {row.index}"
    if row.action == "run":
        count = f"[{row.execution_count}] " if row.execution_count is not None else ""
        words += f": {count}{row.outputs_summary or 'no output'}"
    return words + (f" · {row.review}" if row.review else "")
