"""The one place the server changes a notebook's cells for the agent (docs/notebook-edits.md).

Where a change lands: a collaboration room holding the notebook → its shared document
(every browser sees it, the room saves it; a file write would be taken back by the room);
otherwise the file, through the contents manager. One asyncio lock per notebook makes the
agent's own changes one at a time. Every change is read back afterwards (a file: read again
from disk) and reported as what is there: `applied: false` with a plain `why` when it is
not, never an error the tool has to catch.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any, Callable

from jupyter_core.utils import ensure_async

from ..agents.sandbox import NotNotebookPath, notebook_api_path
from ..notebook.cell_docs import Cells, FileCells, RoomCells
from ..notebook.cell_edits import CellAction, CellChange, Provenance
from ..notebook.cell_ops import (
    apply_delete, apply_edit, apply_insert, apply_outputs, is_undone, refused, undo_cell, verify,
)
from .rooms import RoomUnavailable, SharedNotebooks

__all__ = ["CellChange", "NotebookEditor", "Provenance", "NotebookUnavailable"]

log = logging.getLogger(__name__)

CELL_TYPES = ("code", "markdown", "raw")
Apply = Callable[[Cells, str], CellChange]


class NotebookUnavailable(Exception):
    """The notebook could not be read or written; the message is a sentence for the person or the model."""


class NotebookEditor:
    """Insert, edit, delete cells and write run outputs, verified, with provenance; undo a run's changes."""

    def __init__(self, contents_manager: Any, root_dir: str, rooms: SharedNotebooks | None = None) -> None:
        self.contents_manager = contents_manager
        self.root_dir = root_dir
        self.rooms = rooms
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def insert(
        self, path: str, source: str, cell_type: str, after_cell_id: str | None, prov: Provenance,
    ) -> CellChange:
        if cell_type not in CELL_TYPES:
            return refused("insert", "", path, f"A cell is code, markdown or raw, not {cell_type!r}.", prov)
        return await self._change(path, "insert", "", prov,
                                  lambda cells, p: apply_insert(cells, p, source, cell_type, after_cell_id, prov))

    async def edit(self, path: str, cell_id: str, source: str, prov: Provenance) -> CellChange:
        return await self._change(path, "edit", cell_id, prov, lambda cells, p: apply_edit(cells, p, cell_id, source, prov))

    async def delete(self, path: str, cell_id: str, prov: Provenance) -> CellChange:
        return await self._change(path, "delete", cell_id, prov, lambda cells, p: apply_delete(cells, p, cell_id, prov))

    async def set_outputs(
        self, path: str, cell_id: str, outputs: list[dict[str, Any]], execution_count: int | None, prov: Provenance,
    ) -> CellChange:
        """Write a run's outputs into the cell that ran (after `run_cell`), read back against their count."""
        return await self._change(
            path, "run", cell_id, prov,
            lambda cells, p: apply_outputs(cells, p, cell_id, outputs, execution_count, prov), len(outputs),
        )

    async def read_cell(self, path: str, cell_id: str) -> dict[str, Any] | None:
        """The cell as the notebook holds it now (room or file), or None when there is no such cell."""
        try:
            target = self._target(path)
            async with self._locks[target]:
                cells, _ = await self._open(target)
        except NotebookUnavailable:
            return None
        index = cells.find(cell_id)
        return None if index is None else cells.read(index)

    async def undo(
        self, path: str, changes: list[CellChange], cell_ids: list[str] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Restore the cells `changes` touched (or those of `cell_ids`); `(restored, conflicts)`.

        Newest change first, so a re-inserted cell goes back where it was. A conflict is left as it is.
        Restored cells are read back (a file: from disk); one that does not read as restored is a conflict.
        """
        by_cell: dict[str, list[CellChange]] = {}
        for change in changes:
            if change.applied and change.cell_id and (cell_ids is None or change.cell_id in cell_ids):
                by_cell.setdefault(change.cell_id, []).append(change)
        if not by_cell:
            return [], []
        target = self._target(path)
        restored: list[str] = []
        conflicts: list[str] = []
        async with self._locks[target]:
            cells, notebook = await self._open(target)
            for cell_id, mine in sorted(by_cell.items(), key=lambda item: -changes.index(item[1][-1])):
                (restored if undo_cell(cells, mine) == "restored" else conflicts).append(cell_id)
            if notebook is not None and restored:
                await self._save(target, notebook)
                cells, _ = await self._open(target)
        unconfirmed = [c for c in restored if not is_undone(cells, by_cell[c])]
        if unconfirmed:
            log.warning("hermes: undo in %s did not read back for cells %s", target, unconfirmed)
        return [c for c in restored if c not in unconfirmed], conflicts + unconfirmed

    # -- where a change lands ---------------------------------------------------------------
    async def _change(
        self, path: str, action: CellAction, cell_id: str, prov: Provenance, apply: Apply,
        expected_outputs: int | None = None,
    ) -> CellChange:
        try:
            target = self._target(path)
            async with self._locks[target]:
                cells, notebook = await self._open(target)
                change = apply(cells, target)
                if notebook is None or not change.applied:
                    return verify(change, cells, expected_outputs)
                await self._save(target, notebook)
                fresh, _ = await self._open(target)  # the read-back is the file as saved
                return verify(change, fresh, expected_outputs)
        except NotebookUnavailable as exc:
            return refused(action, cell_id, path, str(exc), prov)

    def _target(self, path: str) -> str:
        try:
            return notebook_api_path(self.root_dir, path)
        except NotNotebookPath as exc:
            raise NotebookUnavailable(str(exc)) from exc

    async def _open(self, target: str) -> tuple[Cells, dict[str, Any] | None]:
        """The cells to change: the room's (notebook None: nothing to save) or the file's (and its notebook)."""
        if self.rooms is not None:
            try:
                doc = await self.rooms.document(target)
            except RoomUnavailable:
                raise NotebookUnavailable(
                    f"{target} is open for real-time collaboration, but its shared copy could not be reached, "
                    "so nothing was changed. Try again in a moment.") from None
            if doc is not None:
                return RoomCells(doc), None
        try:
            model = await ensure_async(self.contents_manager.get(target, content=True, type="notebook"))
        except Exception as exc:  # a missing file, invalid JSON, a contents manager's own error
            log.info("hermes: cannot read %s for a cell change: %s", target, exc)
            raise NotebookUnavailable(f"{target} could not be read, so nothing was changed ({_reason(exc)}).") from exc
        notebook = model["content"]
        return FileCells(notebook), notebook

    async def _save(self, target: str, notebook: dict[str, Any]) -> None:
        try:
            await ensure_async(self.contents_manager.save(
                {"type": "notebook", "format": "json", "content": notebook}, target))
        except Exception as exc:
            log.warning("hermes: cannot save %s after a cell change: %s", target, exc)
            raise NotebookUnavailable(f"{target} could not be saved, so nothing was changed ({_reason(exc)}).") from exc


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "log_message", None) or getattr(exc, "reason", None) or exc or type(exc).__name__)
