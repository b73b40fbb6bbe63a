"""Recovery, notebook recovery and the CLI read a sealed (`.jsonl.gz`) journal as they read a live one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

from hermes_jupyter.journal import files
from hermes_jupyter.notebook.outputs import RUN_MIME
from hermes_jupyter.notebook.recover import recover_notebook_file

from .hermes_fixtures import Core, save_pending_session
from .notebook.journal_writer import DONE, KERNEL_RESTART, count_events, write_run
from .notebook.test_recover import hermes_cell, save

JUPYTER = str(Path(sys.executable).parent / "jupyter")


def _sealed_run(core: Core, sid: str, run_id: str, events: list) -> None:
    write_run(core.journals, sid, run_id, events)
    assert core.journals.seal(sid, run_id)
    assert not core.journals.path(sid, run_id).exists()


def test_recovery_settles_a_pending_turn_from_a_sealed_journal(hermes_core: Core) -> None:
    # The worker journaled `done` but its settle never reached the sidecar; the journal got sealed.
    _sealed_run(hermes_core, "s1", "r1", count_events(12) + [DONE])
    save_pending_session(hermes_core, "r1", "count to 12", started_at=time.time() - 600, session_id="s1")
    session = hermes_core.recovery.get_session("s1")
    assert not session.is_pending
    assert session.messages[-1]["content"] == " ".join(str(i) for i in range(1, 13))
    assert "Response interrupted" not in session.messages[-1]["content"]


def test_notebook_recovery_reads_a_sealed_journal(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(30) + [KERNEL_RESTART])
    nb = new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=3)])
    assert hermes_core.journals.seal("s1", "r1")
    path = save(nb, tmp_path / "nb.ipynb")

    assert recover_notebook_file(path, hermes_core.state_dir) == 1

    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert " 30" in data["text/markdown"] and data[RUN_MIME]["status"] == "interrupted"


def test_cli_recover_reads_a_sealed_journal(hermes_core: Core, tmp_path: Path) -> None:
    write_run(hermes_core.journals, "s1", "r1", count_events(3) + [DONE])
    nb = new_notebook(cells=[hermes_cell(hermes_core, "s1", "r1", seen=1)])
    assert hermes_core.journals.seal("s1", "r1")
    assert files.sealed_path(hermes_core.journals.path("s1", "r1")).exists()
    path = save(nb, tmp_path / "nb.ipynb")
    done = subprocess.run(
        [JUPYTER, "hermes", "recover", str(path), "--state-dir", str(hermes_core.state_dir)],
        capture_output=True, text=True, env={**os.environ, "HERMES_JUPYTER_STATE_DIR": "/nonexistent"}, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "1 cell recovered" in done.stdout
    data = nbformat.read(path, as_version=4).cells[0].outputs[0]["data"]
    assert data[RUN_MIME]["status"] == "completed" and "1 2 3" in data["text/markdown"]
