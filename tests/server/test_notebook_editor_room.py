"""NotebookEditor with real-time collaboration on: a notebook a room holds is changed through the room's
shared document (never the file, which the room owns and saves), and the room's save keeps the provenance."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_jupyter.notebook.cell_edits import source_sha256
from hermes_jupyter.server.notebook_editor import NotebookEditor, Provenance

from .rooms import open_room, with_rooms

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration (the test extra) is not installed")

PROV = Provenance(session_id="s1", run_id="r1", tool_call_id="call-1", model="gpt-test", approved_by=None)


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return with_rooms(jp_server_config, save_delay=0.2)


async def until_saved(path: Path, check: Any) -> Any:
    for _ in range(100):
        nb = nbformat.read(path, as_version=4)
        if check(nb):
            return nb
        await asyncio.sleep(0.1)
    raise AssertionError(f"the room never saved the change to {path}")


async def test_changes_land_in_the_room_and_the_room_saves_them(hermes: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    room = await open_room(jp_serverapp, jp_root_dir)
    editor: NotebookEditor = hermes.notebook_editor
    inserted = await editor.insert("nb.ipynb", "print('from the agent')", "code", "c1", PROV)
    assert inserted.applied and inserted.landed == "room" and inserted.index == 1
    assert room.get_cell(1)["source"] == "print('from the agent')"
    ran = await editor.set_outputs("nb.ipynb", inserted.cell_id,
                                   [{"output_type": "stream", "name": "stdout", "text": "from the agent\n"}], 1, PROV)
    assert ran.applied and ran.landed == "room" and room.get_cell(1)["execution_count"] == 1
    nb = await until_saved(jp_root_dir / "nb.ipynb", lambda nb: len(nb.cells) == 2 and nb.cells[1].outputs)
    assert nb.cells[1].metadata.hermes["source_sha256"] == source_sha256("print('from the agent')")
    assert nb.cells[1].metadata.hermes["actions"] == ["insert", "run"]


async def test_undo_in_the_room_restores_and_never_overwrites_a_collaborators_edit(
    hermes: Any, jp_serverapp: Any, jp_root_dir: Path,
) -> None:
    room = await open_room(jp_serverapp, jp_root_dir)
    editor: NotebookEditor = hermes.notebook_editor
    edited = await editor.edit("nb.ipynb", "c1", "a = 2", PROV)
    inserted = await editor.insert("nb.ipynb", "b = 1", "code", None, PROV)
    room.set_cell(1, source="b = 1  # a collaborator's edit")
    restored, conflicts = await editor.undo("nb.ipynb", [edited, inserted])
    assert restored == ["c1"] and conflicts == [inserted.cell_id]
    assert [room.get_cell(i)["source"] for i in range(room.cell_number)] == ["a = 1", "b = 1  # a collaborator's edit"]
