"""SIGKILL a journal writer at random points: the journal reads back gapless with every acknowledged event,
and recovering the session is idempotent.

Iterations: `HERMES_CRASH_ITERATIONS` (default 50); the benchmark runs more.
"""

from __future__ import annotations

import copy
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_jupyter.journal import Journals
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.sessions.store import Session, SessionStore

CHILD = Path(__file__).with_name("journal_child.py")
ITERATIONS = int(os.environ.get("HERMES_CRASH_ITERATIONS", "50"))


def kill_writer_at_random(state: Path, sid: str, run: str, rng: random.Random, durability: str = "batch") -> int:
    """Start the child, let it append for a random while, SIGKILL it; returns the highest acknowledged seq."""
    with subprocess.Popen(
        [sys.executable, str(CHILD), str(state), sid, run, durability],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2],
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        acked = [int(line) for line in proc.stdout.read().split() if line.isdigit()]
    return max(acked, default=0)


@pytest.mark.crash
def test_killed_writer_leaves_a_gapless_journal_and_idempotent_recovery(tmp_path: Path) -> None:
    rng = random.Random(1234)
    for i in range(ITERATIONS):
        state = tmp_path / f"it{i}"
        sid, run = f"crash_sid_{i}", f"crash_run_{i}"
        store = SessionStore(state / "sessions")
        store.save(Session(
            session_id=sid, messages=[{"role": "user", "content": "before"}],
            pending_user_message="count forever", active_stream_id=run, pending_started_at=time.time() - 60,
        ))
        acked = kill_writer_at_random(state, sid, run, rng, durability=rng.choice(["batch", "every", "terminal"]))

        journals = Journals(state / "runs")
        seqs = [row.seq for row in journals.read(sid, run).rows]
        assert seqs == list(range(1, len(seqs) + 1)), f"iteration {i}: gap in {seqs[-5:]}"
        assert len(seqs) >= acked, f"iteration {i}: acknowledged seq {acked} lost (journal has {len(seqs)})"

        recovery = Recovery(SessionStore(state / "sessions"), journals, LiveRuns(), settler=settle)
        first = recovery.get_session(sid)
        assert first.pending_user_message is None
        assert first.messages[-1]["type"] == "interrupted"
        snapshot = copy.deepcopy(first.to_json())
        again = Recovery(SessionStore(state / "sessions"), journals, LiveRuns(), settler=settle).get_session(sid)
        assert again.to_json() == snapshot, f"iteration {i}: second recovery changed the session"

        assert journals.append(sid, run, "token", {"text": "after"}).row.seq == len(seqs) + 1
        journals.close()
