"""Edit this cell through the real API: the offline demo answers an edit-this-cell request with a
replace-proposal of the attached cell (docs/editor.md), so the browser scene needs no model."""

from __future__ import annotations

from typing import Any

from .client import HermesClient

CELL = {"kind": "cell", "label": "In [1]", "text": "x = 1\nprint(x)", "path": "edit.ipynb", "cell_id": "c-42",
        "language": "python"}
#: What JupyterLab's Edit this cell sends (labextension/src/plugins/edit-cell.ts, editRequest).
MESSAGE = ('Edit this cell: add a comment\n\nThe cell is attached. Answer by calling propose_cell with action '
           '"replace", cell_id "c-42" and the complete new source of the cell.')


async def _events(api: HermesClient, message: str, attachments: list[dict[str, Any]], notebook: str | None
) -> list[dict[str, Any]]:
    sid = (await api.create_session(**({"notebook_path": notebook} if notebook else {})))["session_id"]
    run_id = await api.start(sid, message, attachments=attachments)
    await api.wait_status(run_id, "completed", "errored")
    return (await api.call("GET", "runs", run_id, "events"))[1]["events"]  # type: ignore[no-any-return]


def _text(events: list[dict[str, Any]]) -> str:
    return "".join(r["payload"].get("text", "") for r in events if r["event"] == "token")


async def test_an_edit_request_proposes_a_replacement_of_the_attached_cell(api: HermesClient) -> None:
    events = await _events(api, MESSAGE, [CELL], "edit.ipynb")
    [proposal] = [r["payload"] for r in events if r["event"] == "proposal"]
    assert proposal["action"] == "replace" and proposal["cell_id"] == "c-42" and proposal["cell_type"] == "code"
    assert proposal["source"] == "# edited by Hermes: add a comment\nx = 1\nprint(x)"
    assert proposal["old_source"] == "x = 1\nprint(x)"
    assert "proposed a new source for the cell" in _text(events)


async def test_an_edit_request_without_its_cell_or_notebook_proposes_nothing(api: HermesClient) -> None:
    other = {**CELL, "cell_id": "c-7"}
    events = await _events(api, MESSAGE, [other], "edit.ipynb")
    assert not [r for r in events if r["event"] == "proposal"] and "was not attached" in _text(events)
    events = await _events(api, MESSAGE, [CELL], None)
    assert not [r for r in events if r["event"] == "proposal"] and "bind this session" in _text(events)
