"""The demo agent's answer to an edit-this-cell request (docs/editor.md, docs/demo-agent.md).

JupyterLab's "Edit this cell" sends `Edit this cell: INSTRUCTION` (then `cell_id "C"` in its request to
the model) with cell C attached.
The demo proposes, offline and deterministically, a replacement of cell C: the line
`# edited by Hermes: INSTRUCTION` above the cell's source, so a browser test needs no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from .base import TurnRequest

#: The first line of an edit-this-cell request; the same words the labextension sends (edit-cell.ts).
EDIT_PREFIX_RE: Final = re.compile(r"Edit this cell: *(.*)")
_CELL_ID_RE: Final = re.compile(r'cell_id "([^"\s]+)"')
EDIT_MARK: Final = "# edited by Hermes: "


@dataclass(frozen=True)
class EditRequest:
    """What the demo proposes: `args` of one propose_cell call (None: it cannot) and its reply."""

    args: dict[str, Any] | None
    reply: str
    reader: Any = None


class _AttachedCell:
    """The notebook as the request shows it: the attached cell, so the proposal carries its old source."""

    def __init__(self, cell_id: str, source: str) -> None:
        self._notebook = {"cells": [{"id": cell_id, "cell_type": "code", "source": source}]}

    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]:
        return path, self._notebook


def edit_request(request: TurnRequest) -> EditRequest:
    """The demo's replacement for the attached cell the request names."""
    match = EDIT_PREFIX_RE.match(request.message)
    named = _CELL_ID_RE.search(request.message)
    instruction = match.group(1).strip() if match else ""
    cells = [a for a in request.attachments if a.get("kind") == "cell"]
    cell = next((a for a in cells if named and a.get("cell_id") == named.group(1)), None)
    if cell is None:
        return EditRequest(None, "I need the cell to edit: it was not attached. Try Edit this cell again.")
    source = str(cell.get("text") or "")
    new = f"{EDIT_MARK}{instruction or 'no instruction'}\n{source}"
    kind = "markdown" if cell.get("language") == "markdown" else "code"
    cell_id = str(cell.get("cell_id"))
    args = {"action": "replace", "cell_id": cell_id, "source": new, "cell_type": kind}
    reply = "I proposed a new source for the cell. Accept it to apply it; it will not run."
    return EditRequest(args, reply, _AttachedCell(cell_id, source))
