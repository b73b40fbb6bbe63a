"""`propose_cell`: the agent proposes a cell; only the user, in the notebook, applies it.

The tool journals a `proposal` event and returns at once. Nothing here edits a
notebook or runs code: a frontend shows the proposal next to its target cell with
Accept / Reject, and Accept inserts (or replaces) the source through the open
notebook's model, never executing it. Headless (no frontend) a proposal is never
applied (docs/proposals.md).
"""

from __future__ import annotations

import secrets
from typing import Any, Final, Protocol

from ..events import PROPOSAL
from ..transcript.rows import PROPOSAL_ACTIONS
from .base import EventSink

PROPOSE_CELL: Final = "propose_cell"
#: What propose_cell may propose (a deletion is proposed by delete_cell in Propose mode: cell_tools.py).
CELL_ACTIONS: Final = PROPOSAL_ACTIONS - {"delete"}
#: Longest source a proposal may carry, in characters.
MAX_PROPOSAL_CHARS: Final = 20_000

_ACTION_WORDS: Final = {
    "insert_below": "a new cell below cell {cell}",
    "insert_end": "a new cell at the end of the notebook",
    "replace": "a new source for cell {cell}",
}


class ProposalError(Exception):
    """A proposal the model must fix (bad action, unknown cell); its text is the tool result."""


class NotebookReader(Protocol):
    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]: ...


def propose_schema(notebook_path: str) -> dict[str, Any]:
    """The OpenAI `tools` entry of `propose_cell` (offered only to a session bound to a notebook)."""
    properties = {
        "action": {"type": "string", "enum": sorted(CELL_ACTIONS),
                   "description": "insert_below: a new cell below cell_id; insert_end: a new last cell; "
                                  "replace: new source for cell_id."},
        "source": {"type": "string", "description": "The cell's full source."},
        "cell_id": {"type": "string", "description": "The target cell's id (from read_notebook); "
                                                     "not needed for insert_end."},
        "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "Default code."},
    }
    description = (
        f"Propose a cell for the notebook {notebook_path}: a new cell, or a new source for an existing one. "
        "The user sees it next to the cell as a preview and accepts or rejects it; it is never run."
    )
    parameters = {"type": "object", "properties": properties, "required": ["action", "source"]}
    return {"type": "function", "function": {"name": PROPOSE_CELL, "description": description, "parameters": parameters}}


def proposal_payload(args: dict[str, Any], cells: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The `proposal` event of a tool call, checked; `cells` (the saved notebook's) locate the target cell."""
    action = args.get("action") or ("insert_below" if args.get("cell_id") else "insert_end")
    if action not in CELL_ACTIONS:
        raise ProposalError(f"action must be one of {', '.join(sorted(CELL_ACTIONS))}.")
    source = args.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ProposalError("propose_cell needs the cell's source.")
    if len(source) > MAX_PROPOSAL_CHARS:
        raise ProposalError(f"The source is {len(source)} characters long; at most {MAX_PROPOSAL_CHARS} are accepted.")
    cell_type = args.get("cell_type") or "code"
    if cell_type not in ("code", "markdown"):
        raise ProposalError("cell_type must be code or markdown.")
    cell_id = args.get("cell_id") if action != "insert_end" else None
    old_source = None
    if action != "insert_end":
        if not isinstance(cell_id, str) or not cell_id:
            raise ProposalError(f"{action} needs the target cell's id (read_notebook shows each cell's id).")
        target = next((c for c in cells or () if c.get("id") == cell_id), None)
        if cells is not None and target is None:
            raise ProposalError(f"The notebook has no cell with id {cell_id!r}; call read_notebook to see the ids.")
        if action == "replace" and target is not None:
            raw = target.get("source")
            old_source = "".join(raw) if isinstance(raw, list) else str(raw or "")
    return {
        "proposal_id": f"p-{secrets.token_hex(6)}", "action": action, "cell_id": cell_id, "cell_type": cell_type,
        "source": source, "old_source": old_source,
    }


async def propose_cell(
    sink: EventSink, args: dict[str, Any], *, notebook_path: str | None, reader: NotebookReader | None,
) -> tuple[str, bool]:
    """Journal a proposal; `(result for the model, is_error)`. The saved notebook is read to find the target cell."""
    if not notebook_path:
        return "propose_cell needs a notebook: this conversation is not bound to one.", True
    try:
        cells = None
        if reader is not None and args.get("action") != "insert_end":
            _, notebook = await reader.read_notebook(notebook_path)
            cells = list(notebook.get("cells") or [])
        payload = proposal_payload(args, cells)
    except ProposalError as exc:
        return str(exc), True
    sink.emit(PROPOSAL, payload)
    what = _ACTION_WORDS[payload["action"]].format(cell=payload["cell_id"])
    return (f"Proposed {what} (proposal {payload['proposal_id']}). The user sees it in the notebook and accepts "
            "or rejects it; it is not run. Do not assume it was applied."), False
