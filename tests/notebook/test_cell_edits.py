"""The editor's pure steps on both notebook forms (nbformat JSON and a room's YNotebook): apply, read back, undo."""

from __future__ import annotations

from typing import Any, Callable

import msgspec
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hermes_jupyter.notebook.cell_docs import Cells, FileCells, RoomCells
from hermes_jupyter.notebook.cell_edits import CellChange, Provenance, outputs_summary, source_sha256
from hermes_jupyter.notebook.cell_ops import apply_delete, apply_edit, apply_insert, apply_outputs, undo_cell, verify

ydoc = pytest.importorskip("jupyter_ydoc", reason="jupyter-collaboration (the test extra) is not installed")

PROV = Provenance(session_id="s1", run_id="r1", tool_call_id="t1", model="demo-model", approved_by={"kind": "person", "user": "ada"})


def notebook() -> dict[str, Any]:
    return new_notebook(cells=[new_code_cell("a = 1", id="c1"), new_markdown_cell("# Title", id="c2")])


def file_cells() -> FileCells:
    return FileCells(notebook())


def room_cells() -> RoomCells:
    doc = ydoc.YNotebook()
    doc.set(notebook())
    return RoomCells(doc)


FORMS: list[Callable[[], Cells]] = [file_cells, room_cells]


def sources(cells: Cells) -> list[str]:
    return [cells.read(i)["source"] for i in range(len(cells))]


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_insert_lands_below_the_named_cell_with_its_provenance(make: Callable[[], Cells]) -> None:
    cells = make()
    change = verify(apply_insert(cells, "nb.ipynb", "print(2)", "code", "c1", PROV), cells)
    assert change.applied and change.index == 1 and change.landed == cells.landed
    assert sources(cells) == ["a = 1", "print(2)", "# Title"]
    cell = cells.read(1)
    assert cell["id"] == change.cell_id and cell["outputs"] == [] and cell["execution_count"] is None
    hermes = cell["metadata"]["hermes"]
    assert hermes["run_id"] == "r1" and hermes["tool_call_id"] == "t1" and hermes["model"] == "demo-model"
    assert hermes["approved_by"] == {"kind": "person", "user": "ada"} and hermes["actions"] == ["insert"]
    assert hermes["source_sha256"] == change.source_sha256 == source_sha256("print(2)")


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_an_unknown_cell_is_not_applied_and_says_why(make: Callable[[], Cells]) -> None:
    cells = make()
    for change in (apply_insert(cells, "nb.ipynb", "x", "code", "nope", PROV), apply_edit(cells, "nb.ipynb", "nope", "x", PROV),
                   apply_delete(cells, "nb.ipynb", "nope", PROV), apply_outputs(cells, "nb.ipynb", "nope", [], 1, PROV)):
        assert not change.applied and "no cell with id nope" in (change.why or "")
    assert sources(cells) == ["a = 1", "# Title"]


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_edit_delete_and_outputs_read_back(make: Callable[[], Cells]) -> None:
    cells = make()
    edit = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 2", PROV), cells)
    assert edit.applied and edit.before_source == "a = 1" and edit.after_source == "a = 2"
    outputs = [{"output_type": "stream", "name": "stdout", "text": "2\n"},
               {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}, "metadata": {}}]
    run = verify(apply_outputs(cells, "nb.ipynb", "c1", outputs, 7, PROV), cells, expected_outputs=2)
    assert run.applied and run.execution_count == 7 and run.outputs_summary == "2; an image (image/png)"
    cell = cells.read(0)
    assert cell["execution_count"] == 7 and len(cell["outputs"]) == 2
    assert cell["metadata"]["hermes"]["actions"] == ["edit", "run"]
    deleted = verify(apply_delete(cells, "nb.ipynb", "c2", PROV), cells)
    assert deleted.applied and deleted.before_source == "# Title" and deleted.index == 1
    assert sources(cells) == ["a = 2"]


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_a_read_back_that_differs_is_reported_as_not_applied(make: Callable[[], Cells]) -> None:
    cells = make()
    change = apply_edit(cells, "nb.ipynb", "c1", "a = 2", PROV)
    cells.set_source(0, "a = 3  # a collaborator typed meanwhile")
    checked = verify(change, cells)
    assert not checked.applied and "could not be confirmed" in (checked.why or "")
    gone = apply_insert(cells, "nb.ipynb", "b", "code", None, PROV)
    cells.delete(gone.index or 0)
    assert not verify(gone, cells).applied


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_undo_restores_each_kind_of_change_exactly(make: Callable[[], Cells]) -> None:
    cells = make()
    before = sources(cells)
    inserted = verify(apply_insert(cells, "nb.ipynb", "b = 2", "code", "c1", PROV), cells)
    edited = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 10", PROV), cells)
    ran = verify(apply_outputs(cells, "nb.ipynb", "c1", [], 3, PROV), cells, expected_outputs=0)
    deleted = verify(apply_delete(cells, "nb.ipynb", "c2", PROV), cells)
    assert undo_cell(cells, [deleted]) == "restored"
    assert undo_cell(cells, [edited, ran]) == "restored"
    assert undo_cell(cells, [inserted]) == "restored"
    assert sources(cells) == before
    assert [cells.read(i)["id"] for i in range(len(cells))] == ["c1", "c2"]
    assert "hermes" not in cells.read(0)["metadata"]


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_a_cell_changed_since_is_a_conflict_and_stays(make: Callable[[], Cells]) -> None:
    cells = make()
    edited = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 10", PROV), cells)
    cells.set_source(0, "a = 10  # mine now")
    assert undo_cell(cells, [edited]) == "conflict"
    assert cells.read(0)["source"] == "a = 10  # mine now"
    inserted = verify(apply_insert(cells, "nb.ipynb", "b", "code", None, PROV), cells)
    cells.set_source(cells.find(inserted.cell_id) or 0, "b  # mine too")
    assert undo_cell(cells, [inserted]) == "conflict"
    assert sources(cells)[-1] == "b  # mine too"
    deleted = verify(apply_delete(cells, "nb.ipynb", "c2", PROV), cells)
    cells.insert(1, {"id": "c2", "cell_type": "markdown", "metadata": {}, "source": "# Someone else's"})
    assert undo_cell(cells, [deleted]) == "conflict"


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_undo_asked_again_or_already_done_by_hand_restores_without_a_change(make: Callable[[], Cells]) -> None:
    cells = make()
    inserted = verify(apply_insert(cells, "nb.ipynb", "b", "code", None, PROV), cells)
    edited = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 10", PROV), cells)
    deleted = verify(apply_delete(cells, "nb.ipynb", "c2", PROV), cells)
    for changes in ([inserted], [edited], [deleted]):
        assert undo_cell(cells, changes) == "restored"
    before = [cells.read(i) for i in range(len(cells))]
    for changes in ([inserted], [edited], [deleted]):
        assert undo_cell(cells, changes) == "restored"
    assert [cells.read(i) for i in range(len(cells))] == before
    again = verify(apply_insert(cells, "nb.ipynb", "c", "code", None, PROV), cells)
    cells.delete(cells.find(again.cell_id) or 0)  # a collaborator removed the agent's new cell: as before the run
    assert undo_cell(cells, [again]) == "restored" and sources(cells) == ["a = 1", "# Title"]


def test_a_change_round_trips_as_the_journal_payload() -> None:
    cells = file_cells()
    change = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 2", PROV), cells)
    payload = msgspec.to_builtins(change)
    assert msgspec.convert(payload, CellChange) == change
    assert set(payload) >= {"action", "cell_id", "applied", "why", "path", "index", "cell_type", "before_source",
                            "after_source", "source_sha256", "execution_count", "outputs_summary", "landed",
                            "tool_call_id", "at"}


def test_an_old_notebook_gets_cell_ids_so_cells_can_be_named() -> None:
    old = nbformat.v4.new_notebook(cells=[new_code_cell("x")])
    old["nbformat_minor"] = 4
    del old["cells"][0]["id"]
    cells = FileCells(old)
    assert old["nbformat_minor"] == 5 and cells.read(0)["id"]
    nbformat.validate(old)


def test_outputs_summary_names_errors_and_is_bounded() -> None:
    assert outputs_summary([{"output_type": "error", "ename": "KeyError", "evalue": "'x'", "traceback": []}]) == "KeyError: 'x'"
    assert outputs_summary([]) == "no output"
    assert len(outputs_summary([{"output_type": "stream", "name": "stdout", "text": "y" * 1000}])) == 300


def test_a_change_reads_as_a_sentence_in_the_cell_output() -> None:
    from hermes_jupyter.notebook.cell_edits import change_words
    from hermes_jupyter.transcript.rows import CellChangeRow

    ran = CellChangeRow(id="r:cell_change:3", run_id="r", action="run", cell_id="a1", execution_count=4,
                        outputs_summary="KeyError: 'revenue'", review="undone")
    assert change_words(ran) == "ran cell a1: [4] KeyError: 'revenue' · undone"
    refused = CellChangeRow(id="r:cell_change:4", run_id="r", action="insert", cell_id="", applied=False,
                            why="There is no cell with id x in nb.ipynb.")
    assert change_words(refused) == "could not insert a cell: There is no cell with id x in nb.ipynb."


@pytest.mark.parametrize("make", FORMS, ids=["file", "room"])
def test_undoing_a_later_run_gives_the_cell_back_its_earlier_runs_provenance(make: Callable[[], Cells]) -> None:
    cells = make()
    verify(apply_edit(cells, "nb.ipynb", "c1", "a = 2", PROV), cells)
    earlier = cells.read(0)["metadata"]["hermes"]
    later = Provenance(session_id="s1", run_id="r2", tool_call_id="t9")
    edited = verify(apply_edit(cells, "nb.ipynb", "c1", "a = 3", later), cells)
    ran = verify(apply_outputs(cells, "nb.ipynb", "c1", [], 2, later), cells, expected_outputs=0)
    deleted = verify(apply_delete(cells, "nb.ipynb", "c1", later), cells)
    assert undo_cell(cells, [edited, ran, deleted]) == "restored"
    cell = cells.read(cells.find("c1") or 0)
    assert cell["source"] == "a = 2" and cell["metadata"]["hermes"] == earlier


def test_a_proposed_delete_renders_in_the_cell_output() -> None:
    from hermes_jupyter.notebook.outputs import final_bundle
    from hermes_jupyter.transcript.rows import ProposalRow, Transcript

    row = ProposalRow(id="r:proposal:p1", proposal_id="p1", action="delete", cell_id="c1")
    bundle = final_bundle(Transcript(run_id="r", session_id="s", status="completed", rows=[row]))
    assert "**Proposed cell:** removing a cell" in bundle["text/markdown"]
    assert "[proposed cell, removing a cell:" in bundle["text/plain"]
