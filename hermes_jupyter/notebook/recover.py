"""Rewrite the unfinished hermes outputs of a notebook from the run journals.

Only outputs that carry `application/vnd.hermes.run+json` with a status that is
not final are touched; every other cell and output is left as it is. The
journal is the record: kernel output reaches a notebook only while a browser
tab listens, so a cell saved mid-stream is rebuilt from what the run wrote.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, MutableMapping

import nbformat

from ..fsio import atomic_write
from ..ids import is_valid_id
from ..journal import Journals
from .outputs import DEFAULT_DEAD_CAUSE, FINAL_STATUSES, RunOutput, final_bundle, run_ref_of

#: `is_live(session_id, run_id)`: is some process still running this run?
IsLive = Callable[[str, str], bool]


def recover_notebook(
    nb: MutableMapping[str, Any],
    journals: Journals,
    *,
    is_live: IsLive | None = None,
    cause: str = DEFAULT_DEAD_CAUSE,
) -> int:
    """Rebuild every hermes output whose status is not final; returns the number of cells changed.

    A run with a terminal row gets its final bundle (the full answer if it
    completed while no kernel listened). A run without one that is still live
    gets its text so far and stays `running`; one that is not live is dead and
    gets the interrupted marker with `cause`. By default a run is live while a
    process holds its journal open for writing (the server's writer lock).
    """
    live = is_live if is_live is not None else journals.writer_alive
    changed_cells = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        changed = False
        for output in cell.get("outputs", []):
            changed = _recover_output(output, journals, live, cause) or changed
        changed_cells += changed
    return changed_cells


def _recover_output(output: MutableMapping[str, Any], journals: Journals, is_live: IsLive, cause: str) -> bool:
    ref = run_ref_of(output)
    if ref is None or ref["status"] in FINAL_STATUSES:
        return False
    sid, run_id = ref["session_id"], ref["run_id"]
    if not (is_valid_id(sid) and is_valid_id(run_id)):
        return False  # a notebook is untrusted input: its ids never reach a path unchecked
    live = is_live(sid, run_id)  # checked before reading, so a run that just ended has its terminal row
    run = RunOutput(sid, run_id)
    try:
        run.feed(journals.read_rows(sid, run_id))
    except FileNotFoundError:
        return False  # no journal here (another state dir?): nothing to rebuild from
    snap = run.snapshot(None if live else "interrupted", cause=cause)
    if not snap.is_final and snap.last_seq <= ref["seq"]:
        return False
    output["data"] = nbformat.from_dict(final_bundle(snap))
    output.setdefault("metadata", nbformat.from_dict({}))
    return True


def recover_notebook_file(
    path: str | os.PathLike[str],
    state_dir: str | os.PathLike[str],
    *,
    is_live: IsLive | None = None,
    cause: str = DEFAULT_DEAD_CAUSE,
) -> int:
    """Recover a notebook file in place; returns cells_recovered (0: the file was not rewritten).

    The new file is validated before it replaces the old one atomically, and
    keeps the old file's permission bits.
    """
    target = Path(path)
    nb = nbformat.read(target, as_version=4)
    journals = Journals(Path(state_dir) / "runs")
    try:
        cells = recover_notebook(nb, journals, is_live=is_live, cause=cause)
    finally:
        journals.close()
    if cells == 0:
        return 0
    nbformat.validate(nb)
    text = nbformat.writes(nb)
    mode = target.stat().st_mode & 0o7777
    atomic_write(target, (text if text.endswith("\n") else text + "\n").encode("utf-8"))
    os.chmod(target, mode)
    return cells
