"""The same few cell operations on the two forms a notebook has: nbformat JSON (a file) and a room's YNotebook.

The editor's steps (notebook/cell_ops.py) are written once against `Cells`; `FileCells`
wraps a notebook read from the contents manager, `RoomCells` the shared document of a
collaboration room (jupyter_ydoc), where every change is one transaction, so browsers
see it whole. Cells are found by id; an index is only ever where a cell is now.
"""

from __future__ import annotations

import copy
import secrets
from typing import Any, Protocol

from .cell_edits import Landed, source_text


class Cells(Protocol):
    """A notebook's cells, found by id; `read` gives a plain nbformat cell (source as one string)."""

    landed: Landed

    def __len__(self) -> int: ...
    def find(self, cell_id: str) -> int | None: ...
    def read(self, index: int) -> dict[str, Any]: ...
    def insert(self, index: int, cell: dict[str, Any]) -> None: ...
    def set_source(self, index: int, source: str) -> None: ...
    def set_hermes(self, index: int, meta: dict[str, Any] | None) -> None: ...
    def delete(self, index: int) -> None: ...
    def set_outputs(self, index: int, outputs: list[dict[str, Any]], execution_count: int | None) -> None: ...


def new_cell_id() -> str:
    """A fresh nbformat cell id (8 hex characters, like JupyterLab's short ids)."""
    return secrets.token_hex(4)


def new_cell(cell_id: str, cell_type: str, source: str, hermes: dict[str, Any] | None) -> dict[str, Any]:
    """An nbformat 4.5 cell; a code cell starts unrun (no outputs, no execution count)."""
    cell: dict[str, Any] = {"id": cell_id, "cell_type": cell_type, "metadata": {}, "source": source}
    if hermes is not None:
        cell["metadata"]["hermes"] = hermes
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


class FileCells:
    """Cells of an nbformat v4 notebook dict (changed in place; the caller saves it).

    A notebook older than 4.5 has no cell ids: it is upgraded to 4.5 and its cells get ids,
    as JupyterLab does when it saves one, so every cell can be named.
    """

    landed: Landed = "file"

    def __init__(self, notebook: dict[str, Any]) -> None:
        self.notebook = notebook
        if notebook.get("nbformat") == 4 and int(notebook.get("nbformat_minor") or 0) < 5:
            notebook["nbformat_minor"] = 5
        for cell in self._cells:
            if not cell.get("id"):
                cell["id"] = new_cell_id()

    @property
    def _cells(self) -> list[Any]:
        return self.notebook.setdefault("cells", [])  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._cells)

    def find(self, cell_id: str) -> int | None:
        return next((i for i, cell in enumerate(self._cells) if cell.get("id") == cell_id), None)

    def read(self, index: int) -> dict[str, Any]:
        cell = copy.deepcopy(dict(self._cells[index]))
        cell["source"] = source_text(cell.get("source"))
        return cell

    def insert(self, index: int, cell: dict[str, Any]) -> None:
        self._cells.insert(index, _node(copy.deepcopy(cell)))

    def set_source(self, index: int, source: str) -> None:
        self._cells[index]["source"] = source

    def set_hermes(self, index: int, meta: dict[str, Any] | None) -> None:
        metadata = self._cells[index].setdefault("metadata", _node({}))
        if meta is None:
            metadata.pop("hermes", None)
        else:
            metadata["hermes"] = _node(copy.deepcopy(meta))

    def delete(self, index: int) -> None:
        del self._cells[index]

    def set_outputs(self, index: int, outputs: list[dict[str, Any]], execution_count: int | None) -> None:
        cell = self._cells[index]
        cell["outputs"] = [_node(copy.deepcopy(o)) for o in outputs]
        cell["execution_count"] = execution_count


def _node(value: dict[str, Any]) -> Any:
    """nbformat's attribute dict when nbformat is there (the contents manager hands those out)."""
    try:
        from nbformat import from_dict
    except ImportError:  # pragma: no cover - nbformat comes with jupyter_server
        return value
    return from_dict(value)


class RoomCells:
    """Cells of a collaboration room's YNotebook; each change is one transaction of its shared document."""

    landed: Landed = "room"

    def __init__(self, ynotebook: Any) -> None:
        self.ynotebook = ynotebook

    def __len__(self) -> int:
        return len(self.ynotebook.ycells)

    def find(self, cell_id: str) -> int | None:
        ycells = self.ynotebook.ycells
        return next((i for i in range(len(ycells)) if ycells[i].get("id") == cell_id), None)

    def read(self, index: int) -> dict[str, Any]:
        cell: dict[str, Any] = self.ynotebook.get_cell(index)
        cell["source"] = source_text(cell.get("source"))
        return cell

    def insert(self, index: int, cell: dict[str, Any]) -> None:
        with self.ynotebook.ydoc.transaction():
            self.ynotebook.ycells.insert(index, self.ynotebook.create_ycell(cell))

    def set_source(self, index: int, source: str) -> None:
        with self.ynotebook.ydoc.transaction():
            self.ynotebook.set_cell(index, source=source)

    def set_hermes(self, index: int, meta: dict[str, Any] | None) -> None:
        from pycrdt import Map

        ycell = self.ynotebook.ycells[index]
        with self.ynotebook.ydoc.transaction():
            metadata = ycell.get("metadata")
            if not isinstance(metadata, Map):
                ycell["metadata"] = metadata = Map(dict(metadata or {}))
            if meta is None:
                if "hermes" in metadata:
                    del metadata["hermes"]
            else:
                metadata["hermes"] = copy.deepcopy(meta)

    def delete(self, index: int) -> None:
        with self.ynotebook.ydoc.transaction():
            del self.ynotebook.ycells[index]

    def set_outputs(self, index: int, outputs: list[dict[str, Any]], execution_count: int | None) -> None:
        """Replace the outputs whole (clear and extend in one transaction), as JupyterLab does for a run."""
        from pycrdt import Array, Map, Text

        ycell = self.ynotebook.ycells[index]
        fresh = []
        for output in copy.deepcopy(outputs):
            if output.get("output_type") == "stream":
                output["text"] = Text(source_text(output.get("text")))
            fresh.append(Map(output))
        with self.ynotebook.ydoc.transaction():
            youtputs = ycell.get("outputs")
            if not isinstance(youtputs, Array):
                ycell["outputs"] = youtputs = Array()
            youtputs.clear()
            youtputs.extend(fresh)
            ycell["execution_count"] = execution_count
