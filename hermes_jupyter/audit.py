"""`jupyter hermes audit NB.ipynb`: every cell an agent created or changed, from the notebook alone.

The provenance travels in the file (`metadata.hermes`, docs/notebook-edits.md), so the audit
needs no server and no state directory: it works on a notebook mailed to a colleague. A cell
whose source no longer matches the hash the agent left was edited since by someone else.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .notebook.cell_edits import source_sha256


class AuditItem(msgspec.Struct, kw_only=True):
    """One agent-touched cell, as `--json` prints it."""

    cell_id: str | None
    actions: list[str]
    run_id: str | None
    model: str | None
    approved_by: dict[str, Any] | None
    edited_since: bool


def audit(notebook: dict[str, Any]) -> list[tuple[int, AuditItem]]:
    """(index, item) of every cell carrying `metadata.hermes`, in notebook order."""
    found: list[tuple[int, AuditItem]] = []
    for index, cell in enumerate(notebook.get("cells") or []):
        hermes = (cell.get("metadata") or {}).get("hermes")
        if not isinstance(hermes, dict):
            continue
        actions = hermes.get("actions")
        approved = hermes.get("approved_by")
        found.append((index, AuditItem(
            cell_id=_str(cell.get("id")), actions=[str(a) for a in actions] if isinstance(actions, list) else [],
            run_id=_str(hermes.get("run_id")), model=_str(hermes.get("model")),
            approved_by=approved if isinstance(approved, dict) else None,
            edited_since=source_sha256(cell.get("source")) != hermes.get("source_sha256"),
        )))
    return found


def as_json(items: list[tuple[int, AuditItem]]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(item) for _, item in items]


def table(name: str, items: list[tuple[int, AuditItem]]) -> str:
    """The plain form: one line per cell, aligned columns, a sentence when there is nothing to show."""
    if not items:
        return f"No cell of {name} was created or changed by an agent."
    head = ("cell", "id", "done by the agent", "model", "approved by", "run", "changed since")
    rows = [head] + [(
        str(index), item.cell_id or "-", ", ".join(item.actions) or "-", item.model or "-",
        approver(item.approved_by), item.run_id or "-", "yes, edited since" if item.edited_since else "no",
    ) for index, item in items]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip() for row in rows]
    edited = sum(item.edited_since for _, item in items)
    summary = f"{len(items)} agent cell{'s' if len(items) != 1 else ''} in {name}; {edited} edited since."
    return "\n".join([*lines, "", summary])


def approver(approved_by: dict[str, Any] | None) -> str:
    """Who approved, in words: a person's name, or how it was allowed; "-" when nothing needed approving."""
    if not approved_by:
        return "-"
    if approved_by.get("user"):
        return str(approved_by["user"])
    kind = str(approved_by.get("kind") or "")
    return {"person": "a person", "policy": "a standing rule", "timeout": "nobody (timed out)"}.get(kind, kind or "-")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
