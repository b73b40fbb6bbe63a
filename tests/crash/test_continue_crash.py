"""A continued run whose server is SIGKILLed: recovery keeps both parts of the answer, and it continues again."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_jupyter.sessions.store import Session

from ..hermes_fixtures import build_core, build_engine

CHILD = Path(__file__).with_name("continue_child.py")
N = 80


def numbers(session: Session) -> list[int]:
    text = " ".join(str(m["content"]) for m in session.messages if m["role"] == "assistant" and not m.get("_error"))
    return [int(n) for n in re.findall(r"\d+", text)]


async def stopped_turn(tmp_path: Path) -> tuple[str, str]:
    """A session whose `count to N` the user stopped after a few numbers."""
    core = build_core(tmp_path)
    engine = build_engine(core)
    session = engine.new_session()
    run = await engine.manager.start_run(session.session_id, f"count to {N}")
    while run.channel.last_seq < 8:
        await asyncio.sleep(0.002)
    await engine.manager.cancel(run.run_id)
    core.journals.close()
    core.store.close()
    return session.session_id, run.run_id


@pytest.mark.crash
def test_a_crashed_continuation_keeps_both_parts_and_continues_to_n(tmp_path: Path) -> None:
    sid, first = asyncio.run(stopped_turn(tmp_path))
    with subprocess.Popen(
        [sys.executable, str(CHILD), str(tmp_path / "state"), sid], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).parents[2],
    ) as proc:
        assert proc.stdout is not None
        second = proc.stdout.readline().strip()
        seen = 0
        while seen < 12:
            seen = max(seen, *map(int, proc.stdout.readline().split()))
        os.kill(proc.pid, signal.SIGKILL)
        proc.stdout.read()

    core = build_core(tmp_path, process_started_at=time.time())  # the next server
    session = core.recovery.get_session(sid)
    kinds = [m.get("type") if m.get("_error") else m["role"] for m in session.messages]
    assert kinds == ["user", "assistant", "cancelled", "assistant", "interrupted"]
    continued = session.messages[3]
    assert continued["_continues"] == first and continued["_recovered_stream_id"] == second
    assert session.messages[4]["interruption_cause"] == "server_restart"
    got = numbers(session)
    assert got == list(range(1, len(got) + 1)) and 12 <= len(got) < N  # both parts, nothing twice or missing

    async def finish() -> Session:
        engine = build_engine(core)
        run, continues = await engine.manager.continue_turn(sid)
        assert continues == second
        await run.done.wait()
        return core.recovery.get_session(sid)

    done = asyncio.run(finish())
    assert numbers(done) == list(range(1, N + 1))
    assert [m.get("type") for m in done.messages if m.get("_error")] == ["cancelled", "interrupted"]
