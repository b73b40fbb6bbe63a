"""Collaboration rooms (jupyter-collaboration) in the in-process test server: turned on, and one opened on a
notebook as a browser opening it would (docs/notebook-edits.md: a notebook a room holds is changed through it)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook


def with_rooms(jp_server_config: dict[str, Any], save_delay: float) -> dict[str, Any]:
    """The server config with rooms on; a room saves its file `save_delay` seconds after a change."""
    config = copy.deepcopy(jp_server_config)
    config["ServerApp"]["jpserver_extensions"].update(jupyter_server_ydoc=True, jupyter_server_fileid=True)
    config["YDocExtension"]["document_save_delay"] = save_delay
    return config


async def open_room(jp_serverapp: Any, jp_root_dir: Path) -> Any:
    """The shared document of a room opened on a new nb.ipynb of one cell (`a = 1`, id c1), loaded."""
    nbformat.write(new_notebook(cells=[new_code_cell("a = 1", id="c1")]), jp_root_dir / "nb.ipynb")
    ydoc_app = next(iter(jp_serverapp.extension_manager.extension_apps["jupyter_server_ydoc"]))
    doc = await ydoc_app.get_document(path="nb.ipynb", content_type="notebook", file_format="json", copy=False,
                                      create=True)
    for _ in range(100):  # the room loads the file into its document
        if doc.cell_number:
            break
        await asyncio.sleep(0.05)
    return doc
