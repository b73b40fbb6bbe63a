"""The editor's steps on `Cells`, pure: apply a change, verify it by reading the cell back, undo a cell.

`apply_*` returns the change as claimed; `verify` replaces the claim with what the
notebook holds (read again: for a file, from the saved file), so a journaled change
is never more than what is there. `undo_cell` restores one cell from a run's changes
to it, unless the cell no longer holds what the agent left (docs/notebook-edits.md).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .cell_docs import Cells, new_cell, new_cell_id
from .cell_edits import CellAction, CellChange, Provenance, hermes_metadata, outputs_summary, source_sha256

UndoOutcome = Literal["restored", "conflict"]


def refused(action: CellAction, cell_id: str, path: str, why: str, prov: Provenance, landed: Any = "file") -> CellChange:
    """A change that was not made, and why in a sentence the model and the person can act on."""
    return CellChange(action=action, cell_id=cell_id, applied=False, why=why, path=path, landed=landed,
                      tool_call_id=prov.tool_call_id)


def unknown_cell(cell_id: str, path: str) -> str:
    return f"There is no cell with id {cell_id} in {path}; read the notebook again for the current cell ids."


def apply_insert(
    cells: Cells, path: str, source: str, cell_type: str, after_cell_id: str | None, prov: Provenance,
) -> CellChange:
    """A new cell below `after_cell_id`, or at the end without one."""
    index = len(cells)
    if after_cell_id:
        found = cells.find(after_cell_id)
        if found is None:
            return refused("insert", "", path, unknown_cell(after_cell_id, path), prov, cells.landed)
        index = found + 1
    cell_id = new_cell_id()
    cells.insert(index, new_cell(cell_id, cell_type, source, hermes_metadata(prov, source, "insert")))
    return CellChange(action="insert", cell_id=cell_id, applied=True, path=path, index=index, cell_type=cell_type,
                      after_source=source, landed=cells.landed, tool_call_id=prov.tool_call_id)


def apply_edit(cells: Cells, path: str, cell_id: str, source: str, prov: Provenance) -> CellChange:
    """Replace a cell's source (its outputs stay until it runs again)."""
    index = cells.find(cell_id)
    if index is None:
        return refused("edit", cell_id, path, unknown_cell(cell_id, path), prov, cells.landed)
    cell = cells.read(index)
    cells.set_source(index, source)
    cells.set_hermes(index, hermes_metadata(prov, source, "edit", _hermes_of(cell)))
    return CellChange(action="edit", cell_id=cell_id, applied=True, path=path, index=index,
                      cell_type=cell.get("cell_type"), before_source=cell["source"], before_hermes=_hermes_dict(cell),
                      after_source=source, landed=cells.landed, tool_call_id=prov.tool_call_id)


def apply_delete(cells: Cells, path: str, cell_id: str, prov: Provenance) -> CellChange:
    index = cells.find(cell_id)
    if index is None:
        return refused("delete", cell_id, path, unknown_cell(cell_id, path), prov, cells.landed)
    cell = cells.read(index)
    cells.delete(index)
    return CellChange(action="delete", cell_id=cell_id, applied=True, path=path, index=index,
                      cell_type=cell.get("cell_type"), before_source=cell["source"], before_hermes=_hermes_dict(cell),
                      landed=cells.landed, tool_call_id=prov.tool_call_id)


def apply_outputs(
    cells: Cells, path: str, cell_id: str, outputs: list[dict[str, Any]], execution_count: int | None,
    prov: Provenance,
) -> CellChange:
    """The outputs and execution count of a run, written into the cell that ran."""
    index = cells.find(cell_id)
    if index is None:
        return refused("run", cell_id, path, unknown_cell(cell_id, path), prov, cells.landed)
    cell = cells.read(index)
    if cell.get("cell_type") != "code":
        return refused("run", cell_id, path, f"Cell {cell_id} is a {cell.get('cell_type')} cell; only code cells run.",
                       prov, cells.landed)
    cells.set_outputs(index, outputs, execution_count)
    cells.set_hermes(index, hermes_metadata(prov, cell["source"], "run", _hermes_of(cell)))
    return CellChange(action="run", cell_id=cell_id, applied=True, path=path, index=index, cell_type="code",
                      before_hermes=_hermes_dict(cell), after_source=cell["source"], execution_count=execution_count,
                      outputs_summary=outputs_summary(outputs), landed=cells.landed, tool_call_id=prov.tool_call_id)


def verify(change: CellChange, cells: Cells, expected_outputs: int | None = None) -> CellChange:
    """The change as the notebook now holds it: `applied: false` with why, if the read-back differs."""
    if not change.applied:
        return change
    index = cells.find(change.cell_id)
    if change.action == "delete":
        return change if index is None else _not_there(change, "the cell is still in the notebook after the delete")
    if index is None:
        return _not_there(change, "the cell is not in the notebook any more (someone may have deleted it meanwhile)")
    cell = cells.read(index)
    source = cell["source"]
    if change.after_source is not None and source != change.after_source:
        return _not_there(change, "the cell holds another source than the one written (someone typed in it meanwhile)")
    summary = change.outputs_summary
    if change.action == "run":
        outputs = list(cell.get("outputs") or [])
        if cell.get("execution_count") != change.execution_count or (
                expected_outputs is not None and len(outputs) != expected_outputs):
            return _not_there(change, "the cell's outputs read back differently from the run's")
        summary = outputs_summary(outputs)
    return msgspec.structs.replace(change, index=index, source_sha256=source_sha256(source), outputs_summary=summary)


def _not_there(change: CellChange, what: str) -> CellChange:
    why = f"The change could not be confirmed: {what}. Read the notebook to see what it holds."
    return msgspec.structs.replace(change, applied=False, why=why)


def _hermes_of(cell: dict[str, Any]) -> Any:
    return (cell.get("metadata") or {}).get("hermes")


def _hermes_dict(cell: dict[str, Any]) -> dict[str, Any] | None:
    hermes = _hermes_of(cell)
    return dict(hermes) if isinstance(hermes, dict) else None


def undo_cell(cells: Cells, changes: list[CellChange]) -> UndoOutcome:
    """Put one cell back as it was before a run's `changes` to it (applied ones, oldest first).

    A conflict, and nothing touched, when the cell no longer holds what the agent left: its
    source hash differs, or it was deleted, or (after a delete) another cell with its id is back.
    A cell already as it was before the run (undone before, by a second click or by hand) is
    restored without a change, so undo can be asked again safely.
    """
    first, last = changes[0], changes[-1]
    original = next((c.before_source for c in changes if c.action in ("edit", "delete")), None)
    index = cells.find(last.cell_id)
    current = None if index is None else cells.read(index)["source"]
    if first.action == "insert" and index is None:
        return "restored"  # the run's new cell is gone: as before the run
    if first.action != "insert" and original is not None and current == original:
        return "restored"
    if last.action == "delete":
        if index is not None:
            return "conflict"
        if first.action != "insert":
            cell = new_cell(last.cell_id, last.cell_type or "code", original or "", first.before_hermes)
            cells.insert(min(last.index or 0, len(cells)), cell)
        return "restored"
    if index is None or source_sha256(current) != last.source_sha256:
        return "conflict"
    if first.action == "insert":
        assert index is not None
        cells.delete(index)
        return "restored"
    if original is not None:
        cells.set_source(index, original)
    cells.set_hermes(index, first.before_hermes)  # an earlier run's provenance, or none
    return "restored"


def is_undone(cells: Cells, changes: list[CellChange]) -> bool:
    """Whether the cell reads back as undo leaves it: gone when the run created it, else there with its old source."""
    first = changes[0]
    index = cells.find(first.cell_id)
    if first.action == "insert":
        return index is None
    original = next((c.before_source for c in changes if c.action in ("edit", "delete")), None)
    return index is not None and (original is None or cells.read(index)["source"] == original)
