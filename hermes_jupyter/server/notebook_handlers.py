"""`POST runs/{run_id}/notebook/undo|keep {cell_ids?}`: the person's review of an agent run's cell changes.

Undo answers `{restored, conflicts}`, keep answers `{kept}` (docs/notebook-edits.md). Both are a
person's acts: a kernel's token or a bare token gets a 403 saying to do it in JupyterLab.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..ids import validate_id
from .answerer import answering_person
from .errors import user_error
from .handlers import HermesHandler, api_errors
from .principals import person_only
from .undo import NotebookUnavailable, keep_run, undo_run

#: Most cell ids one request may name.
MAX_CELL_IDS = 1000


def cell_ids_of(body: dict[str, Any]) -> list[str] | None:
    """The cells a request names (`cell_ids`), or None for all of the run's cells."""
    ids = body.get("cell_ids")
    if ids is None:
        return None
    if not isinstance(ids, list) or len(ids) > MAX_CELL_IDS or not all(isinstance(i, str) and 0 < len(i) <= 200
                                                                       for i in ids):
        raise user_error(400, "Choose the cells to undo or keep from the run's changed cells.",
                         f"cell_ids must be a list of at most {MAX_CELL_IDS} cell ids")
    return ids


class RunNotebookReviewHandler(HermesHandler):
    """Undo or keep what a run changed in its notebook."""

    auth_resource = "hermes:runs"

    @web.authenticated
    @authorized
    @api_errors
    @person_only("review")
    async def post(self, run_id: str, action: str) -> None:
        run_id = validate_id(run_id, "run id")
        cell_ids = cell_ids_of(self.json_body())
        by = await answering_person(self)
        try:
            if action == "undo":
                self.answer(await undo_run(self.hermes, run_id, cell_ids, by))
            else:
                self.answer(await keep_run(self.hermes, run_id, cell_ids, by))
        except NotebookUnavailable as exc:
            raise user_error(409, str(exc), f"run {run_id}: the notebook could not be changed") from None


handlers = [(r"runs/(?P<run_id>[^/]+)/notebook/(?P<action>undo|keep)", RunNotebookReviewHandler)]
