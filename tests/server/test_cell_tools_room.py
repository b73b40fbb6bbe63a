"""The cell tools under real-time collaboration: read_notebook reads the room's live document, so the
agent sees its own change (and a collaborator's unsaved one) before the room saves the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.server.notebook_access import make_tools_factory

from ..fakes.recording_sink import RecordingSink
from .rooms import open_room, with_rooms

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration (the test extra) is not installed")


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return with_rooms(jp_server_config, save_delay=600)  # the file stays as it was for the whole test


async def test_read_notebook_reads_the_rooms_live_document(hermes: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    room = await open_room(jp_serverapp, jp_root_dir)
    saved = (jp_root_dir / "nb.ipynb").read_text()
    room.set_cell(0, source="a = 2  # a collaborator, not saved yet")
    tools = make_tools_factory(jp_serverapp, ApprovalBroker(), editor=hermes.notebook_editor)
    request = TurnRequest(session_id="s1", run_id="r1", message="hi", history=[], autonomy="agent",
                          notebook=NotebookBinding(notebook_path="nb.ipynb"))
    registry = tools(request, RecordingSink())
    text, is_error = await registry.call("insert_cell", {"source": "b = 3", "after_cell_id": "c1"})
    assert not is_error and "applied: true" in text
    text, is_error = await registry.call("read_notebook", {})
    assert not is_error and "a = 2  # a collaborator, not saved yet" in text and "b = 3" in text
    assert (jp_root_dir / "nb.ipynb").read_text() == saved  # none of it was read from the file
