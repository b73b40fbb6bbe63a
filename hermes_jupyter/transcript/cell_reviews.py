"""The person's Keep/Undo laid over `cell_change` rows (docs/notebook-edits.md). Pure.

The decisions live in the session (`Session.cell_undo`, by `<run>:<cell_id>`), because the
run's journal may be sealed when the person decides; a stored turn's rows get the same
`review`, so a reloaded view reads "undone" or "kept" from the rows themselves.
"""

from __future__ import annotations

from typing import Any, Mapping

import msgspec

from .rows import CellChangeRow, CellReview, Row
from .turns import StoredTurn


def review_of(decision: Any) -> CellReview | None:
    """"kept" stays kept; any other recorded value is an undo (`{by, at}`); nothing recorded: None."""
    if decision is None:
        return None
    return "kept" if decision == "kept" else "undone"


def reviewed_rows(rows: list[Row], cell_undo: Mapping[str, Any]) -> list[Row]:
    """The rows with each cell change's `review` as the session records it (unchanged rows are shared)."""
    out = list(rows)
    for at, row in enumerate(out):
        if type(row) is CellChangeRow:
            review = review_of(cell_undo.get(f"{row.run_id}:{row.cell_id}"))
            if review != row.review:
                out[at] = msgspec.structs.replace(row, review=review)
    return out


def reviewed_turns(turns: list[StoredTurn], run_id: str, cell_undo: Mapping[str, Any]) -> list[StoredTurn]:
    """The turns with the run's cell changes reviewed (a new list; only that run's turn is a new object)."""
    out = list(turns)
    for at, turn in enumerate(out):
        if turn.run_id == run_id:
            out[at] = msgspec.structs.replace(turn, rows=reviewed_rows(turn.rows, cell_undo))
    return out
