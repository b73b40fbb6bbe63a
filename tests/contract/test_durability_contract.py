"""What every journal durability policy owes (docs/journal.md, "Durability"), one suite run against each.

`batch`, `every` and `terminal` differ only in *when* rows reach stable storage; everything else is
the same promise: seq is gapless, every row `append` returned survives the writer's SIGKILL, the
terminal row is on stable storage before anyone is told the run settled, and recovery gives the
same verdicts. What survives a power cut is modelled with a spy on `os.fsync`: a file keeps the
bytes its last fsync covered, and only while its folder entry was fsynced too.

| policy | a row is power-safe once… |
|---|---|
| `every` | its `append` returns |
| `batch` | the group commit has run (`committer.flush()` forces it), or a terminal row followed |
| `terminal` | a terminal row followed it, or the writer closed |

A new policy joins by adding its line to `PROMISES`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter import events
from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.journal import DURABILITY_POLICIES, Durability, Journals
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.runs.fanout import Heartbeat
from hermes_jupyter.runs.manager import RunManager
from hermes_jupyter.runs.status import RunStatusIndex
from hermes_jupyter.sessions.store import SessionStore

SID, RUN = "sid_1", "run_1"
WRITER = Path(__file__).parents[1] / "crash" / "journal_child.py"
SERVER = Path(__file__).with_name("durability_child.py")
REPO = Path(__file__).parents[2]


@dataclass(frozen=True)
class Promise:
    """When a policy makes a row power-safe (beyond a terminal row and a close, which every policy does)."""

    each_append: bool
    after_flush: bool


PROMISES: dict[str, Promise] = {
    "every": Promise(each_append=True, after_flush=True),
    "batch": Promise(each_append=False, after_flush=True),
    "terminal": Promise(each_append=False, after_flush=False),
}


def test_every_policy_states_its_promise() -> None:
    assert set(PROMISES) == set(DURABILITY_POLICIES)


@pytest.fixture(params=DURABILITY_POLICIES)
def policy(request: pytest.FixtureRequest) -> Durability:
    return request.param  # type: ignore[no-any-return]


class PowerCut:
    """What a power cut would leave: per path, the bytes the last fsync covered (folders: fsynced at all)."""

    def __init__(self) -> None:
        self.synced: dict[str, int] = {}

    def fsync(self, real: object, fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        size = os.fstat(fd).st_size
        real(fd)  # type: ignore[operator]
        self.synced[path] = max(self.synced.get(path, 0), size)

    def seqs(self, journals: Journals, session_id: str, run_id: str) -> list[int]:
        """The seqs a reader would find after the cut: none if the file's folder entries were never made durable."""
        path = journals.path(session_id, run_id)
        if str(path.parent) not in self.synced or str(path.parent.parent) not in self.synced:
            return []
        kept = path.read_bytes()[: self.synced.get(str(path), 0)]
        return [events.decode_row(line).seq for line in kept.split(b"\n")[:-1]]


@pytest.fixture
def power(monkeypatch: pytest.MonkeyPatch) -> PowerCut:
    cut, real = PowerCut(), os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: cut.fsync(real, fd))
    return cut


# -- power-safe rows ------------------------------------------------------------------------------------

def test_rows_survive_a_power_cut_at_each_point_the_policy_promises(
    tmp_path: Path, policy: Durability, power: PowerCut
) -> None:
    promise = PROMISES[policy]
    journals = Journals(tmp_path / "runs", durability=policy, window_s=30.0)
    (tmp_path / "runs").mkdir()
    try:
        for seq in range(1, 6):
            assert journals.append(SID, RUN, events.TOKEN, {"text": f" {seq}"}).seq == seq
            if promise.each_append:
                assert power.seqs(journals, SID, RUN) == list(range(1, seq + 1)), f"row {seq} not power-safe"
        assert journals.committer.flush(10.0)
        if promise.after_flush:
            assert power.seqs(journals, SID, RUN) == [1, 2, 3, 4, 5]
        journals.append(SID, RUN, events.DONE, {})
        assert power.seqs(journals, SID, RUN) == [1, 2, 3, 4, 5, 6], "the terminal row is not power-safe"

        journals.append(SID, "run_2", events.TOKEN, {"text": "left open"})
        journals.close_writer(SID, "run_2")
        assert power.seqs(journals, SID, "run_2") == [1], "a closed journal's rows are not power-safe"
    finally:
        journals.close()


def test_what_a_power_cut_keeps_is_a_gapless_prefix(tmp_path: Path, policy: Durability, power: PowerCut) -> None:
    journals = Journals(tmp_path / "runs", durability=policy, window_s=0.001)
    seen: list[list[int]] = []
    try:
        for seq in range(1, 201):
            journals.append(SID, RUN, events.TOKEN, {"text": f" {seq}"})
            seen.append(power.seqs(journals, SID, RUN))
        journals.append(SID, RUN, events.DONE, {})
        seen.append(power.seqs(journals, SID, RUN))
    finally:
        journals.close()
    assert all(kept == list(range(1, len(kept) + 1)) for kept in seen)
    assert seen[-1] == list(range(1, 202))


# -- a killed writer ------------------------------------------------------------------------------------

def _kill_writer_after(state: Path, policy: str, acks: int) -> int:
    """Start tests/crash/journal_child.py, SIGKILL it once it acknowledged `acks` seqs; the highest acknowledged."""
    with subprocess.Popen([sys.executable, str(WRITER), str(state), SID, RUN, policy],
                          stdout=subprocess.PIPE, text=True, cwd=REPO) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        seen = 0
        while seen < acks:  # it flushes every 8 rows
            line = proc.stdout.readline()
            assert line, "the writer died on its own"
            seen = max(seen, int(line))
        os.kill(proc.pid, signal.SIGKILL)
        rest = [int(n) for n in proc.stdout.read().split() if n.isdigit()]
    return max([seen, *rest])


@pytest.mark.crash
@pytest.mark.parametrize("acks", [8, 200, 2000])
def test_a_killed_writer_leaves_every_acknowledged_row_gapless(tmp_path: Path, policy: Durability, acks: int) -> None:
    acked = _kill_writer_after(tmp_path, policy, acks)

    journals = Journals(tmp_path / "runs", durability=policy)
    try:
        seqs = [row.seq for row in journals.read(SID, RUN).rows]
        assert seqs == list(range(1, len(seqs) + 1))
        assert len(seqs) >= acked, f"acknowledged seq {acked} lost (the journal has {len(seqs)})"
        assert journals.append(SID, RUN, events.TOKEN, {"text": "after"}).seq == len(seqs) + 1
    finally:
        journals.close()


# -- the engine: terminal rows and recovery verdicts -----------------------------------------------------

@pytest.mark.asyncio
async def test_the_terminal_row_is_power_safe_before_anyone_sees_the_run_settled(
    tmp_path: Path, policy: Durability, power: PowerCut
) -> None:
    store, live = SessionStore(tmp_path / "sessions"), LiveRuns()
    journals = Journals(tmp_path / "runs", durability=policy, window_s=30.0)
    recovery = Recovery(store, journals, live, settler=settle)
    manager = RunManager(store, journals, recovery, live, {"demo": DemoAgent(token_delay=0)})
    # the settled journal is compressed on the engine's one sealer thread; held back until the plain
    # journal is read here (a seal that came first replaced it with its .gz, and the read raced it)
    hold = threading.Event()
    manager.sealer.submit(hold.wait, 60)
    try:
        session = store.create(title="durability")
        run = await manager.start_run(session.session_id, "count to 50")
        delivered: list[list[int]] = []
        async for batch in manager.attach(run.run_id).batches():
            if not isinstance(batch, Heartbeat) and any(a.terminal for a in batch):
                delivered.append(power.seqs(journals, session.session_id, run.run_id))  # as the client reads it
        await run.done.wait()
        on_done = power.seqs(journals, session.session_id, run.run_id)
        last = journals.read(session.session_id, run.run_id).rows[-1]
    finally:
        hold.set()
        manager.sealer.shutdown(wait=True)
        journals.close()
        store.close()
    assert last.event == events.DONE
    assert delivered == [list(range(1, last.seq + 1))], "a watcher saw the terminal row before it was power-safe"
    assert on_done == list(range(1, last.seq + 1))
    settled = SessionStore(tmp_path / "sessions").load(session.session_id, use_cache=False)
    assert settled.pending_user_message is None and settled.messages[-1]["content"].endswith("49 50")


def _kill_server(state: Path, policy: str, prompt: str, *, at_seq: int | None) -> tuple[str, str, int]:
    """Run the demo turn in durability_child.py, SIGKILL it at `at_seq` (None: once settled).

    Returns the session id, the run id and the last seq the stand-in reported.
    """
    with subprocess.Popen([sys.executable, str(SERVER), str(state), policy, prompt],
                          stdout=subprocess.PIPE, text=True, cwd=REPO) as proc:
        assert proc.stdout is not None
        sid, run = proc.stdout.readline().split()
        seen = 0
        while True:
            line = proc.stdout.readline()
            assert line, "the server stand-in died on its own"
            if line.strip() == "settled":
                break
            seen = max(seen, *map(int, line.split()))
            if at_seq is not None and seen >= at_seq:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.stdout.read()
    return sid, run, seen


@pytest.mark.crash
def test_recovery_after_a_kill_mid_run_keeps_the_partial_and_says_server_restart(
    tmp_path: Path, policy: Durability
) -> None:
    sid, run, seen = _kill_server(tmp_path, policy, "count to 100000", at_seq=40)

    journals = Journals(tmp_path / "runs", durability=policy)
    store = SessionStore(tmp_path / "sessions")
    recovery = Recovery(store, journals, LiveRuns(), settler=settle, process_started_at=time.time())
    try:
        rows = journals.read(sid, run).rows
        assert rows[-1].terminal is False and len(rows) >= seen
        partial = "".join(r.payload["text"] for r in rows if r.event == events.TOKEN)
        session = recovery.get_session(sid)
        user, answer, marker = session.messages
        assert user["content"] == "count to 100000" and answer["content"] == partial
        assert marker["interruption_cause"] == "server_restart" and session.pending_user_message is None
        assert recovery.verdict(sid, run).cause == "server_restart"
        again = Recovery(SessionStore(tmp_path / "sessions"), journals, LiveRuns(), settler=settle).get_session(sid)
        assert again.messages == session.messages
    finally:
        journals.close()
        store.close()


@pytest.mark.crash
def test_recovery_after_a_kill_once_settled_changes_nothing(tmp_path: Path, policy: Durability) -> None:
    sid, run, seen = _kill_server(tmp_path, policy, "count to 30", at_seq=None)

    journals = Journals(tmp_path / "runs", durability=policy)
    store = SessionStore(tmp_path / "sessions")
    before = store.load(sid, use_cache=False).messages
    try:
        rows = journals.read(sid, run).rows
        assert rows[-1].event == events.DONE and rows[-1].seq == seen
        session = Recovery(store, journals, LiveRuns(), settler=settle, process_started_at=time.time()).get_session(sid)
        assert session.messages == before and session.pending_user_message is None
        assert [m["role"] for m in session.messages] == ["user", "assistant"]
        assert session.messages[-1]["content"].endswith("29 30")
    finally:
        journals.close()
        store.close()


@pytest.mark.asyncio
async def test_a_crash_between_the_settled_save_and_the_terminal_row_leaves_one_verdict(
    tmp_path: Path, policy: Durability, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settle saves the session, then journals the terminal row (docs/architecture.md: save first, then
    change what others can see). A crash between the two leaves a saved turn and a journal without its end;
    the run's status then says what the saved turn says, not "interrupted" beside a completed answer."""
    store, live = SessionStore(tmp_path / "sessions"), LiveRuns()
    journals = Journals(tmp_path / "runs", durability=policy, window_s=30.0)
    recovery = Recovery(store, journals, live, settler=settle)
    manager = RunManager(store, journals, recovery, live, {"demo": DemoAgent(token_delay=0)})
    monkeypatch.setattr(manager.ending, "journal_terminal", lambda run, event, payload: None)  # the crash
    try:
        session = store.create(title="durability")
        run = await manager.start_run(session.session_id, "count to 5")
        await run.done.wait()
        rows = journals.read(session.session_id, run.run_id).rows
        stored = [turn.status for turn in store.load(session.session_id).turns if turn.run_id == run.run_id]
        after_restart = RunStatusIndex(journals, store).describe(run.run_id)["status"]
    finally:
        journals.close()
        store.close()
    assert not any(row.terminal for row in rows)
    assert stored == ["completed"] and after_restart == "completed"
