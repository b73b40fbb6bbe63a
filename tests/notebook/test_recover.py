"""Recovering a notebook from the journals: only unfinished hermes outputs change, the file stays valid."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from hermes_jupyter.notebook.outputs import OUTPUT_MAX_BYTES, RUN_MIME, SHORTENED_NOTE, WIDGET_MIME, fold_rows, live_bundle
from hermes_jupyter.notebook.recover import recover_notebook, recover_notebook_file

from ..hermes_fixtures import Core
from .journal_writer import DONE, KERNEL_RESTART, count_events, huge_answer_events, tool_events, write_run

JUPYTER = str(Path(sys.executable).parent / "jupyter")


def hermes_cell(core: Core, sid: str, run_id: str, seen: int, *, status: str = "running") -> nbformat.NotebookNode:
    """A `%%hermes` cell as a browser saved it after `seen` rows: the live bundle, widget view included."""
    rows = core.journals.read(sid, run_id, limit=seen).rows
    data = live_bundle(fold_rows(rows, sid, run_id), "widget-model-1")
    data[RUN_MIME]["status"] = status
    out = new_output("display_data", data=data, metadata={})
    return new_code_cell(f"%%hermes count\n# {run_id}", outputs=[out], execution_count=2)


def plain_cells() -> list[nbformat.NotebookNode]:
    return [
        new_markdown_cell("# Notes"),
        new_code_cell("print('hi')", outputs=[new_output("stream", name="stdout", text="hi\n")], execution_count=1),
    ]


def save(nb: nbformat.NotebookNode, path: Path) -> Path:
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def test_kernel_restart_cell_gets_partial_output_and_marker(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(30) + [KERNEL_RESTART])
    nb = new_notebook(cells=[*plain_cells(), hermes_cell(hermes_core, "s1", "r1", seen=3)])
    before = copy.deepcopy(nb.cells[:2])
    path = save(nb, tmp_path / "nb.ipynb")

    assert recover_notebook_file(path, hermes_core.state_dir) == 1

    after = nbformat.read(path, as_version=4)
    nbformat.validate(after)
    assert after.cells[:2] == before
    data = after.cells[2].outputs[0]["data"]
    assert WIDGET_MIME not in data
    assert data["text/markdown"].startswith("1 2 3")
    assert " 30" in data["text/markdown"]
    assert "partial output above was recovered from the run journal" in data["text/markdown"]
    assert data[RUN_MIME] == {"run_id": "r1", "session_id": "s1", "seq": 31, "status": "interrupted"}


def test_run_completed_while_no_kernel_listened_gets_full_answer(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", tool_events() + [DONE])
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=2)]), tmp_path / "nb.ipynb")
    assert recover_notebook_file(path, hermes_core.state_dir) == 1
    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert data[RUN_MIME]["status"] == "completed"
    assert "There are two files." in data["text/markdown"] and "**terminal**" in data["text/markdown"]
    assert "Response interrupted" not in data["text/markdown"]


def test_dead_run_without_terminal_row_is_interrupted(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(5))  # writer gone, no terminal row
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=2)]), tmp_path / "nb.ipynb")
    assert recover_notebook_file(path, hermes_core.state_dir) == 1
    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert data[RUN_MIME]["status"] == "interrupted"
    assert data["text/markdown"].startswith("1 2 3 4 5")
    assert "Response interrupted" in data["text/markdown"]


def test_live_run_is_brought_up_to_date_but_stays_running(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(8), keep_open=True)  # the writer lock = live
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=2)]), tmp_path / "nb.ipynb")
    assert recover_notebook_file(path, hermes_core.state_dir) == 1
    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert data[RUN_MIME] == {"run_id": "r1", "session_id": "s1", "seq": 8, "status": "running"}
    assert WIDGET_MIME not in data
    assert "Response interrupted" not in data["text/markdown"]
    assert recover_notebook_file(path, hermes_core.state_dir) == 0  # nothing new while it is live


def test_final_and_foreign_outputs_are_left_alone(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "done", count_events(3) + [DONE])
    write_run(hermes_core.journals, "s1", "r2", count_events(3) + [KERNEL_RESTART])
    final = hermes_cell(hermes_core, "s1", "done", seen=2, status="completed")
    unknown = hermes_cell(hermes_core, "s1", "r2", seen=2)
    unknown.outputs[0]["data"][RUN_MIME]["run_id"] = "no-such-run"
    hostile = hermes_cell(hermes_core, "s1", "r2", seen=2)
    hostile.outputs[0]["data"][RUN_MIME]["session_id"] = "../../etc"
    nb = new_notebook(cells=[*plain_cells(), final, unknown, hostile])
    before = copy.deepcopy(nb)
    assert recover_notebook(nb, hermes_core.journals) == 0
    assert nb == before
    path = save(nb, tmp_path / "nb.ipynb")
    mtime = path.stat().st_mtime_ns
    assert recover_notebook_file(path, hermes_core.state_dir) == 0
    assert path.stat().st_mtime_ns == mtime  # not rewritten


def test_recover_is_idempotent_and_keeps_file_mode(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(3) + [KERNEL_RESTART])
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=1)]), tmp_path / "nb.ipynb")
    os.chmod(path, 0o644)
    assert recover_notebook_file(path, hermes_core.state_dir) == 1
    text = path.read_text()
    assert recover_notebook_file(path, hermes_core.state_dir) == 0
    assert path.read_text() == text
    assert path.stat().st_mode & 0o777 == 0o644


def test_many_outputs_in_many_cells(hermes_core: Core) -> None:
    cells: list[Any] = []
    for i in range(20):
        write_run(hermes_core.journals, "s1", f"r{i}", count_events(4) + ([DONE] if i % 2 else []))
        cells.append(hermes_cell(hermes_core, "s1", f"r{i}", seen=1))
    nb = new_notebook(cells=cells)
    assert recover_notebook(nb, hermes_core.journals) == 20
    statuses = [c.outputs[0]["data"][RUN_MIME]["status"] for c in nb.cells]
    assert statuses == ["interrupted", "completed"] * 10
    nbformat.validate(nb)


def test_cli_recover_and_sessions(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(3) + [KERNEL_RESTART])
    hermes_core.store.create(title="older")
    hermes_core.store.create(title="newer", notebook_path="work/a.ipynb")
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=1)]), tmp_path / "nb.ipynb")
    env = {**os.environ, "HERMES_JUPYTER_STATE_DIR": "/nonexistent"}
    done = subprocess.run(
        [JUPYTER, "hermes", "recover", str(path), "--state-dir", str(hermes_core.state_dir)],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "1 cell recovered" in done.stdout
    assert "Response interrupted" in path.read_text()

    listing = subprocess.run(
        [JUPYTER, "hermes", "sessions", f"--state-dir={hermes_core.state_dir}"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert "newer" in lines[0] and "[work/a.ipynb]" in lines[0] and "older" in lines[1]


def test_cli_recover_of_a_huge_answer_writes_a_bounded_notebook(hermes_core: Core, tmp_path: Path) -> None:
    events = huge_answer_events(3 * OUTPUT_MAX_BYTES)
    write_run(hermes_core.journals, "s1", "r1", events + [DONE])
    path = save(new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=1)]), tmp_path / "nb.ipynb")
    done = subprocess.run(
        [JUPYTER, "hermes", "recover", str(path), "--state-dir", str(hermes_core.state_dir)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert path.stat().st_size < 2.5 * OUTPUT_MAX_BYTES  # markdown and plain text, each capped, plus JSON
    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert data[RUN_MIME]["status"] == "completed"
    assert SHORTENED_NOTE in data["text/markdown"] and SHORTENED_NOTE in data["text/plain"]


def test_cli_recover_reports_a_broken_notebook(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    done = subprocess.run(
        [JUPYTER, "hermes", "recover", str(bad), "--state-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert "bad.ipynb" in done.stderr
    assert bad.read_text() == "{not json"


def test_sidecar_verdicts_treat_a_wrong_typed_or_linked_sidecar_as_unknown(tmp_path: Path) -> None:
    """`jupyter hermes recover` reads sidecars as the store does: typed, never through a link."""
    from hermes_jupyter.notebook.recover import sidecar_verdicts
    from hermes_jupyter.transcript import Verdict

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "typed.json").write_text('{"session_id": "typed", "messages": 5}')
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"session_id": "linked"}')
    (sessions / "linked.json").symlink_to(secret)
    verdict_of = sidecar_verdicts(tmp_path)
    assert verdict_of("typed", "run-1") == Verdict()
    assert verdict_of("linked", "run-1") == Verdict()
    assert verdict_of("missing", "run-1") == Verdict()
