"""Kill the process that owns a run (SIGKILL), then recover as the next server process would."""

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
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.sessions.store import SessionStore

CHILD = Path(__file__).with_name("run_child.py")


@pytest.mark.crash
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_killed_run_recovers_partial_output_and_marker(tmp_path: Path, seed: int) -> None:
    with subprocess.Popen(
        [sys.executable, str(CHILD), str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2]
    ) as proc:
        assert proc.stdout is not None
        sid, run = proc.stdout.readline().split()
        seen = 0
        target = random.Random(seed).randint(5, 200)
        while seen < target:
            seen = max(seen, *map(int, proc.stdout.readline().split()))
        os.kill(proc.pid, signal.SIGKILL)
        proc.stdout.read()

    store, journals = SessionStore(tmp_path / "sessions"), Journals(tmp_path / "runs")
    recovery = Recovery(store, journals, LiveRuns(), settler=settle, process_started_at=time.time())
    session = recovery.get_session(sid)
    user, partial, marker = session.messages
    assert user == {**user, "role": "user", "content": "count to 100000", "_recovered": True}
    expected = " ".join(str(i) for i in range(1, 100001))
    assert expected.startswith(partial["content"])
    assert len(partial["content"].split()) >= seen, "the client saw more than was recovered"
    assert partial["_recovered_stream_id"] == run
    assert marker["interruption_cause"] == "server_restart"
    assert "partial output above was recovered" in marker["content"]
    assert session.pending_user_message is None
    again = Recovery(SessionStore(tmp_path / "sessions"), journals, LiveRuns(), settler=settle).get_session(sid)
    assert again.messages == session.messages
