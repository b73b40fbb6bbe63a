"""NotebookEditor on a real jupyter_server, with no room: changes land in the file, read back from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_core.utils import ensure_async
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hermes_jupyter.notebook.cell_edits import source_sha256
from hermes_jupyter.server.notebook_editor import NotebookEditor, Provenance

PROV = Provenance(session_id="s1", run_id="r1", tool_call_id="call-1", model="gpt-test",
                  approved_by={"kind": "person", "user": "ada"})


@pytest.fixture
def nb_path(jp_root_dir: Path) -> Path:
    path = jp_root_dir / "work" / "nb.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("a = 1", id="c1"), new_markdown_cell("# Notes", id="c2")]), path)
    return path


@pytest.fixture
def editor(hermes: Any) -> NotebookEditor:
    assert hermes.notebook_editor is not None, "the server wires one editor into its services"
    return hermes.notebook_editor  # type: ignore[no-any-return]


def saved(path: Path) -> Any:
    return nbformat.read(path, as_version=4)


async def test_insert_edit_run_delete_land_in_the_file_with_provenance(editor: NotebookEditor, nb_path: Path) -> None:
    inserted = await editor.insert("work/nb.ipynb", "print('hi')", "code", "c1", PROV)
    assert inserted.applied and inserted.landed == "file" and inserted.index == 1 and inserted.path == "work/nb.ipynb"
    cell = saved(nb_path).cells[1]
    assert cell.id == inserted.cell_id and cell.source == "print('hi')"
    assert cell.metadata.hermes == {
        "session_id": "s1", "run_id": "r1", "tool_call_id": "call-1", "model": "gpt-test",
        "approved_by": {"kind": "person", "user": "ada"}, "source_sha256": source_sha256("print('hi')"),
        "actions": ["insert"],
    }

    outputs = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    ran = await editor.set_outputs("work/nb.ipynb", inserted.cell_id, outputs, 4, PROV)
    assert ran.applied and ran.execution_count == 4 and ran.outputs_summary == "hi"
    cell = saved(nb_path).cells[1]
    assert cell.execution_count == 4 and cell.outputs[0]["text"] == "hi\n"

    edited = await editor.edit("work/nb.ipynb", "c1", "a = 2", PROV)
    assert edited.applied and edited.before_source == "a = 1" and edited.source_sha256 == source_sha256("a = 2")
    deleted = await editor.delete("work/nb.ipynb", "c2", PROV)
    assert deleted.applied and deleted.before_source == "# Notes"
    nb = saved(nb_path)
    assert [c.source for c in nb.cells] == ["a = 2", "print('hi')"]
    nbformat.validate(nb)
    assert await editor.read_cell("work/nb.ipynb", "c1") is not None
    assert await editor.read_cell("work/nb.ipynb", "c2") is None


async def test_what_cannot_be_done_is_not_applied_says_why_and_leaves_the_file(
    editor: NotebookEditor, nb_path: Path, jp_root_dir: Path,
) -> None:
    before = nb_path.read_bytes()
    unknown = await editor.edit("work/nb.ipynb", "nope", "x", PROV)
    assert not unknown.applied and unknown.why and "no cell with id nope" in unknown.why
    missing = await editor.insert("work/other.ipynb", "x", "code", None, PROV)
    assert not missing.applied and missing.why and "could not be read" in missing.why
    escape = await editor.insert("../outside.ipynb", "x", "code", None, PROV)
    assert not escape.applied and escape.why and escape.why.startswith("Refused")
    (jp_root_dir / "broken.ipynb").write_text("{not json", encoding="utf-8")
    broken = await editor.delete("broken.ipynb", "c1", PROV)
    assert not broken.applied and broken.why and "could not be read" in broken.why
    assert nb_path.read_bytes() == before


def race_saves(editor: NotebookEditor, nb_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    """Each save of the editor is followed at once by someone else's write of `source` into the first cell."""
    contents = editor.contents_manager
    real_save = contents.save

    async def racing_save(model: dict[str, Any], path: str) -> Any:
        result = await ensure_async(real_save(model, path))
        nb = saved(nb_path)
        nb.cells[0].source = source
        nbformat.write(nb, nb_path)
        return result

    monkeypatch.setattr(contents, "save", racing_save)


async def test_a_read_back_that_differs_from_what_was_written_is_not_applied(
    editor: NotebookEditor, nb_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # someone else's write lands right after ours
    race_saves(editor, nb_path, monkeypatch, "a = 'typed by a person'")
    change = await editor.edit("work/nb.ipynb", "c1", "a = 2", PROV)
    assert not change.applied and change.why and "could not be confirmed" in change.why


async def test_undo_restores_the_file_exactly_and_leaves_a_changed_cell(editor: NotebookEditor, nb_path: Path) -> None:
    original = saved(nb_path)
    changes = [
        await editor.insert("work/nb.ipynb", "b = 2", "code", "c1", PROV),
        await editor.edit("work/nb.ipynb", "c1", "a = 10", PROV),
        await editor.delete("work/nb.ipynb", "c2", PROV),
    ]
    restored, conflicts = await editor.undo("work/nb.ipynb", changes)
    assert sorted(restored) == sorted([changes[0].cell_id, "c1", "c2"]) and conflicts == []
    assert saved(nb_path) == original

    again = [await editor.edit("work/nb.ipynb", "c1", "a = 3", PROV), await editor.edit("work/nb.ipynb", "c2", "# Mine", PROV)]
    nb = saved(nb_path)
    nb.cells[0].source = "a = 3  # the person's edit"
    nbformat.write(nb, nb_path)
    restored, conflicts = await editor.undo("work/nb.ipynb", again)
    assert restored == ["c2"] and conflicts == ["c1"]
    nb = saved(nb_path)
    assert [c.source for c in nb.cells] == ["a = 3  # the person's edit", "# Notes"]
    only = await editor.undo("work/nb.ipynb", again, cell_ids=["c9"])
    assert only == ([], [])


async def test_a_room_that_cannot_be_reached_changes_nothing_and_says_so(editor: NotebookEditor, nb_path: Path) -> None:
    from hermes_jupyter.server.rooms import RoomUnavailable

    class UnreachableRooms:
        async def document(self, path: str) -> Any:
            raise RoomUnavailable(path)

    before = nb_path.read_bytes()
    cut_off = NotebookEditor(editor.contents_manager, editor.root_dir, UnreachableRooms())  # type: ignore[arg-type]
    change = await cut_off.edit("work/nb.ipynb", "c1", "a = 2", PROV)
    assert not change.applied and change.why and "real-time collaboration" in change.why and "nothing" in change.why
    assert nb_path.read_bytes() == before, "never the file a room may own"


async def test_an_undo_that_does_not_read_back_is_not_called_restored(
    editor: NotebookEditor, nb_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    edited = await editor.edit("work/nb.ipynb", "c1", "a = 2", PROV)
    # someone types right after the undo's write
    race_saves(editor, nb_path, monkeypatch, "a = 'typed at that moment'")
    assert await editor.undo("work/nb.ipynb", [edited]) == ([], ["c1"])
