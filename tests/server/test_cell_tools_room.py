"""The cell tools under real-time collaboration: read_notebook reads the room's live document, so the
agent sees its own change (and a collaborator's unsaved one) before the room saves the file."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from collections.abc import Callable
from typing import Any

import nbformat
import nbformat.v4
import pytest

from hermes_jupyter.agents.approvals import ApprovalBroker
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.server.notebook_access import make_tools_factory

from ..fakes.recording_sink import RecordingSink

write_notebook: Callable[..., Any] = nbformat.write
new_notebook: Callable[..., Any] = nbformat.v4.new_notebook
new_code_cell: Callable[..., Any] = nbformat.v4.new_code_cell

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration (the test extra) is not installed")


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(jp_server_config)
    config["ServerApp"]["jpserver_extensions"].update(jupyter_server_ydoc=True, jupyter_server_fileid=True)
    config["YDocExtension"]["document_save_delay"] = 600  # the file stays as it was for the whole test
    return config


async def test_read_notebook_reads_the_rooms_live_document(hermes: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    write_notebook(new_notebook(cells=[new_code_cell("a = 1", id="c1")]), jp_root_dir / "nb.ipynb")
    saved = (jp_root_dir / "nb.ipynb").read_text()
    ydoc_app = next(iter(jp_serverapp.extension_manager.extension_apps["jupyter_server_ydoc"]))
    room = await ydoc_app.get_document(path="nb.ipynb", content_type="notebook", file_format="json", copy=False,
                                       create=True)
    for _ in range(100):  # the room loads the file into its document
        if room.cell_number:
            break
        await asyncio.sleep(0.05)
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
