"""SIGKILL a journal sealer at random points: readers always see every row, once, and the next seal finishes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_jupyter.journal import Journals

CHILD = Path(__file__).with_name("seal_child.py")
ITERATIONS = int(os.environ.get("HERMES_CRASH_ITERATIONS", "50")) // 2
ROWS = 10_000


@pytest.mark.crash
def test_a_killed_sealer_leaves_a_journal_that_reads_whole(tmp_path: Path) -> None:
    rng = random.Random(4321)
    journals = Journals(tmp_path / "runs", durability="terminal")
    kills_inside = 0
    for i in range(ITERATIONS):
        sid, run = f"seal_sid_{i}", f"seal_run_{i}"
        writer = journals.writer(sid, run)
        for n in range(ROWS):
            writer.append("token", {"text": f" {n}"})
        writer.append("done", {})
        journals.close_writer(sid, run)
        with subprocess.Popen(
            [sys.executable, str(CHILD), str(tmp_path), sid, run], stdout=subprocess.PIPE, text=True,
            cwd=Path(__file__).parents[2],
        ) as proc:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.05))
            os.kill(proc.pid, signal.SIGKILL)
            kills_inside += "sealed" not in proc.stdout.read()
        assert [r.seq for r in journals.read_rows(sid, run)] == list(range(1, ROWS + 2)), f"iteration {i}"
        journals.seal(sid, run)
        assert os.listdir(tmp_path / "runs" / sid) == [f"{run}.jsonl.gz"]  # no leftover .jsonl or temp file
        assert [r.seq for r in journals.read_rows(sid, run)] == list(range(1, ROWS + 2))
    journals.close()
    assert kills_inside > 0  # some kills landed mid-seal, or the test proved nothing
