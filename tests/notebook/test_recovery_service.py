"""Notebook recovery is the engine's: `RunManager.recover_notebook` rewrites the file, refuses an open one
unless forced, and goes through a room when one holds the notebook (the handler only validates and calls it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_notebook

from hermes_jupyter.notebook.recovery_service import NotebookOpen, NotebookPlaces

from ..hermes_fixtures import Core, build_engine
from .journal_writer import KERNEL_RESTART, count_events, write_run
from .test_recover import hermes_cell, plain_cells, save

pytestmark = pytest.mark.asyncio


def _notebook(core: Core, tmp_path: Path) -> Path:
    write_run(core.journals, "s1", "r1", count_events(5) + [KERNEL_RESTART])
    return save(new_notebook(cells=[*plain_cells(), hermes_cell(core, "s1", "r1", seen=2)]), tmp_path / "nb.ipynb")


async def test_the_engine_rewrites_the_file_and_refuses_one_open_in_a_frontend_unless_forced(
    hermes_core: Core, tmp_path: Path
) -> None:
    path = _notebook(hermes_core, tmp_path)
    asked: list[str] = []

    async def is_open(relative: str) -> bool:
        asked.append(relative)
        return True

    engine = build_engine(hermes_core, notebooks=NotebookPlaces(tmp_path, hermes_core.state_dir, None, is_open))
    with pytest.raises(NotebookOpen):
        await engine.manager.recover_notebook("nb.ipynb", path)
    assert asked == ["nb.ipynb"] and nbformat.read(path, as_version=4).cells[2].outputs[0]["data"] \
        == hermes_cell(hermes_core, "s1", "r1", seen=2).outputs[0]["data"]  # untouched
    recovered = await engine.manager.recover_notebook("nb.ipynb", path, force=True)
    assert recovered.to_json() == {"path": "nb.ipynb", "cells_recovered": 1, "shared": False}
    assert " 5" in nbformat.read(path, as_version=4).cells[2].outputs[0]["data"]["text/markdown"]


async def test_a_room_holding_the_notebook_is_used_instead_of_the_file(hermes_core: Core, tmp_path: Path) -> None:
    path = _notebook(hermes_core, tmp_path)
    before = path.read_bytes()

    class Room:
        async def recover(self, api_path: str, journals: Any, **kwargs: Any) -> int | None:
            assert api_path == "nb.ipynb" and journals is hermes_core.journals
            return 1

    engine = build_engine(hermes_core, notebooks=NotebookPlaces(tmp_path, hermes_core.state_dir, Room()))
    recovered = await engine.manager.recover_notebook("nb.ipynb", path)
    assert recovered.shared and recovered.cells_recovered == 1
    assert path.read_bytes() == before
