"""`jupyter hermes audit NB.ipynb [--json]`: the agent-touched cells of a notebook, from its provenance alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hermes_jupyter.notebook.cell_docs import FileCells
from hermes_jupyter.notebook.cell_edits import Provenance
from hermes_jupyter.notebook.cell_ops import apply_edit, apply_insert, apply_outputs

ADA = {"kind": "person", "user": "ada"}


def agent_notebook(path: Path) -> str:
    """A notebook a run changed: c1 edited then run (approved by ada), a new cell inserted; the new cell is
    then edited by a person. Returns the inserted cell's id."""
    nb = new_notebook(cells=[new_code_cell("a = 1", id="c1"), new_markdown_cell("# Untouched", id="c2")])
    cells = FileCells(nb)
    prov = Provenance(session_id="s1", run_id="run-1", tool_call_id="t1", model="gpt-test")
    apply_edit(cells, "nb.ipynb", "c1", "a = 2", prov)
    approved = Provenance(session_id="s1", run_id="run-1", tool_call_id="t2", model="gpt-test", approved_by=ADA)
    apply_outputs(cells, "nb.ipynb", "c1", [], 1, approved)
    inserted = apply_insert(cells, "nb.ipynb", "plot()", "code", None, prov)
    nb.cells[2].source = "plot(kind='bar')  # a person's edit"
    nbformat.write(nb, path)
    return inserted.cell_id


def test_json_lists_each_agent_cell_with_what_was_done_and_edited_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from hermes_jupyter.cli import main

    new_id = agent_notebook(tmp_path / "nb.ipynb")
    main(["audit", str(tmp_path / "nb.ipynb"), "--json"])
    assert json.loads(capsys.readouterr().out) == [
        {"cell_id": "c1", "actions": ["edit", "run"], "run_id": "run-1", "model": "gpt-test", "approved_by": ADA,
         "edited_since": False},
        {"cell_id": new_id, "actions": ["insert"], "run_id": "run-1", "model": "gpt-test", "approved_by": None,
         "edited_since": True},
    ]


def test_the_shell_command_prints_a_table_and_a_notebook_without_agent_cells_says_so(tmp_path: Path) -> None:
    new_id = agent_notebook(tmp_path / "nb.ipynb")
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), tmp_path / "plain.ipynb")
    done = subprocess.run([sys.executable, "-m", "hermes_jupyter.cli", "audit", "nb.ipynb", "plain.ipynb"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["cell", "id", "done", "by", "the", "agent", "model", "approved", "by", "run",
                                "changed", "since"]
    assert lines[1].split()[:2] == ["0", "c1"] and "ada" in lines[1] and lines[1].endswith("no")
    assert lines[2].split()[:2] == ["2", new_id] and lines[2].endswith("yes, edited since")
    assert "2 agent cells in nb.ipynb; 1 edited since." in done.stdout
    assert "No cell of plain.ipynb was created or changed by an agent." in done.stdout


def test_an_unreadable_notebook_is_an_error_in_words(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "hermes_jupyter.cli", "audit", "broken.ipynb", "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "broken.ipynb cannot be read as a notebook" in done.stderr
