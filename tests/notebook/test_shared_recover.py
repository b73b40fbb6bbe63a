"""Recovery through a collaboration room's shared document: one output per run, in every replica."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_notebook

from hermes_jupyter.notebook.outputs import RUN_MIME
from hermes_jupyter.notebook.recover import recovered_bundle, run_bundle
from hermes_jupyter.notebook.shared import replace_by_run, unfinished
from hermes_jupyter.server import rooms
from hermes_jupyter.server.rooms import SharedNotebooks
from hermes_jupyter.transcript import Verdict

from ..hermes_fixtures import Core
from .journal_writer import KERNEL_RESTART, count_events, write_run
from .test_recover import hermes_cell, plain_cells

ydoc = pytest.importorskip("jupyter_ydoc", reason="jupyter-collaboration (the test extra) is not installed")
pycrdt = pytest.importorskip("pycrdt")


def shared(nb: nbformat.NotebookNode) -> Any:
    doc = ydoc.YNotebook()
    doc.set(nbformat.from_dict(nb))
    return doc


def replica(doc: Any) -> Any:
    """Another browser's copy of the room's document, kept in sync with it."""
    other = pycrdt.Doc()
    other.apply_update(doc.ydoc.get_update())
    return other


def outputs_of(doc: Any, cell: int) -> list[dict[str, Any]]:
    return list(doc.get()["cells"][cell]["outputs"])


def never_live(sid: str, run_id: str) -> bool:
    return False


def no_verdict(sid: str, run_id: str) -> Verdict:
    return Verdict()


def test_a_settled_run_gets_the_servers_bundle_once_in_its_place(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(20) + [KERNEL_RESTART])
    nb = new_notebook(cells=[*plain_cells(), hermes_cell(hermes_core, "s1", "r1", seen=3)])
    doc = shared(nb)
    before = doc.get()["cells"][:2]
    changes: list[Any] = []
    subscription = doc.ycells[2]["outputs"].observe(lambda event: changes.append(event.delta))  # noqa: F841 - kept alive

    outputs = unfinished(doc)
    bundle = recovered_bundle(outputs[0], hermes_core.journals, never_live, no_verdict, settled_only=True)
    assert bundle is not None
    assert replace_by_run(doc, {"r1": bundle}) == 1

    (output,) = outputs_of(doc, 2)
    _, expected = run_bundle(hermes_core.journals, "s1", "r1", live=False, verdict_of=no_verdict)
    assert output["data"] == expected and output["data"][RUN_MIME]["status"] == "interrupted"
    assert doc.get()["cells"][:2] == before
    assert len(changes) == 1  # one transaction: browsers see one replacement of the output list
    # Idempotent by run id: a second writer (another browser's request) changes nothing.
    assert replace_by_run(doc, {"r1": bundle}) == 0
    mirror = replica(doc)
    assert len(mirror.get("cells", type=pycrdt.Array)[2]["outputs"]) == 1


def test_a_run_still_streaming_is_left_to_its_kernel(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(5))  # no terminal row
    doc = shared(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=2)]))
    (output,) = unfinished(doc)
    assert recovered_bundle(output, hermes_core.journals, lambda s, r: True, no_verdict, settled_only=True) is None


class FakeCollaboration:
    """jupyter_server_ydoc's extension app, reduced to `get_document` over one room."""

    disable_rtc = False

    def __init__(self, doc: Any, path: str) -> None:
        self.doc, self.path = doc, path

    async def get_document(self, *, path: str, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return self.doc if path == self.path else None


class FakeServer:
    def __init__(self, extension: FakeCollaboration) -> None:
        self.extension_manager = type("M", (), {"extension_apps": {rooms.YDOC_EXTENSION: {extension}}})()


async def test_browsers_asking_at_once_get_one_output_and_no_room_means_the_file(
    hermes_core: Core, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(rooms, "FOLLOWER_GRACE_S", 0.0)
    write_run(hermes_core.journals, "s1", "r1", count_events(10) + [KERNEL_RESTART])
    doc = shared(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=2)]))
    notebooks = SharedNotebooks(FakeServer(FakeCollaboration(doc, "team.ipynb")))

    async def offload(fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    def ask(path: str) -> Any:
        return notebooks.recover(path, hermes_core.journals, is_live=never_live, verdict_of=no_verdict, offload=offload)

    done = await asyncio.gather(*(ask("team.ipynb") for _ in range(3)))
    assert sorted(done) == [0, 0, 1]
    (output,) = outputs_of(doc, 0)
    assert output["data"][RUN_MIME]["status"] == "interrupted"
    assert await ask("other.ipynb") is None  # no room holds it: the caller writes the file
