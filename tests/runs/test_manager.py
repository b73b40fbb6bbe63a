"""The run engine: admission, settle, observers, cancel, failures, retry/undo, concurrency."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from hermes_jupyter.agents.base import TurnResult
from hermes_jupyter.runs.fanout import Heartbeat
from hermes_jupyter.runs.manager import NothingToRetry, RunActive

from ..fakes.scripted_agent import Script
from ..hermes_fixtures import Engine

pytestmark = pytest.mark.asyncio


async def collect(engine: Engine, run_id: str, after_seq: int = 0) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async for batch in engine.manager.attach(run_id, after_seq, heartbeat_s=5).batches():
        if not isinstance(batch, Heartbeat):
            rows.extend(a.row for a in batch)
    return rows


async def test_demo_run_completes_into_the_transcript(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 20")
    rows = await collect(hermes_engine, run.run_id)
    assert "".join(r.payload.get("text", "") for r in rows) == " ".join(str(i) for i in range(1, 21))
    assert rows[-1].event == "done" and [r.seq for r in rows] == list(range(1, 23))  # 20 tokens, usage, done
    await run.done.wait()
    saved = hermes_engine.core.recovery.get_session(session.session_id)
    assert [m["role"] for m in saved.messages] == ["user", "assistant"]
    assert saved.messages[1]["content"].endswith("19 20")
    assert saved.pending_user_message is None and saved.active_stream_id is None
    assert [m["role"] for m in saved.context_messages] == ["user", "assistant"]
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "completed"


async def test_pending_state_is_saved_before_the_worker_starts(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 200")
    on_disk = hermes_engine.core.store.load(session.session_id, use_cache=False)
    assert on_disk.active_stream_id == run.run_id
    assert on_disk.pending_user_message == "count to 200"
    assert on_disk.pending_started_at
    with pytest.raises(RunActive):
        await hermes_engine.manager.start_run(session.session_id, "again")
    await hermes_engine.manager.cancel(run.run_id)


async def test_concurrent_observers_receive_identical_ordered_streams(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 300")
    streams = await asyncio.gather(*(collect(hermes_engine, run.run_id) for _ in range(5)))
    seqs = [[r.seq for r in s] for s in streams]
    assert all(s == list(range(1, 303)) for s in seqs)
    assert all(s == streams[0] for s in streams)


async def test_observer_attached_mid_run_with_a_cursor_sees_no_gap(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 400")
    while run.channel.last_seq < 50:
        await asyncio.sleep(0.005)
    cursor = 37
    rows = await collect(hermes_engine, run.run_id, after_seq=cursor)
    assert [r.seq for r in rows] == list(range(cursor + 1, 403))


async def test_observer_far_behind_the_window_reads_back_from_the_journal(hermes_core: Any) -> None:
    from ..hermes_fixtures import build_engine

    engine = build_engine(hermes_core, token_delay=0)
    engine.manager.observers.window = 16
    session = engine.new_session()
    run = await engine.manager.start_run(session.session_id, "count to 2000")
    await run.done.wait()
    rows = await collect(engine, run.run_id, after_seq=3)
    assert [r.seq for r in rows] == list(range(4, 2003))


async def test_a_stalled_observer_does_not_grow_memory(hermes_core: Any) -> None:
    from ..hermes_fixtures import build_engine

    engine = build_engine(hermes_core, token_delay=0)
    engine.manager.observers.window = 64
    session = engine.new_session()
    run = await engine.manager.start_run(session.session_id, "count to 5000")
    stalled = engine.manager.attach(run.run_id, 0).batches()
    await stalled.__anext__()  # attached and then never read again
    peak = 0
    while not run.done.is_set():
        peak = max(peak, len(run.channel._rows))
        await asyncio.sleep(0)
    assert peak <= 2 * 64 + 1
    assert run.channel.last_seq == 5002


async def test_cancel_mid_stream_keeps_partial_output_and_frees_the_session(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 100000")
    while run.channel.last_seq < 20:
        await asyncio.sleep(0.005)
    assert await hermes_engine.manager.cancel(run.run_id) is True
    after = await hermes_engine.manager.start_run(session.session_id, "count to 2")  # free at once
    saved = hermes_engine.core.store.load(session.session_id)
    partial = [m for m in saved.messages if m.get("_partial")]
    assert partial and partial[0]["content"].startswith("1 2 3")
    assert [m.get("type") for m in saved.messages if m.get("_error")] == ["cancelled"]
    journal = hermes_engine.core.journals.read(session.session_id, run.run_id)
    assert journal.rows[-1].event == "cancel" and journal.rows[-1].terminal_state == "interrupted-by-user"
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "cancelled"
    await after.done.wait()


async def test_backend_that_raises_keeps_partial_output_and_journals_apperror(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["boom"] = Script(
        steps=[("token", {"text": "half an answer"})], raise_after=RuntimeError("model went away")
    )
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "boom")
    await run.done.wait()
    saved = hermes_engine.core.store.load(session.session_id)
    assert [m["content"] for m in saved.messages[:2]] == ["boom", "half an answer"]
    assert saved.messages[-1]["_error"] is True and "went wrong in the server" in saved.messages[-1]["content"]
    last = hermes_engine.core.journals.read(session.session_id, run.run_id).rows[-1]
    assert last.event == "apperror" and last.payload["terminal_session_persisted"] is True
    assert last.payload["type"] == "internal" and "model went away" in last.payload["detail"]
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "errored"


async def test_backend_that_ignores_interrupt_is_abandoned_and_the_turn_settled(hermes_engine: Engine) -> None:
    # the status row flushes the word the stream redactor holds (docs/journal.md), so seq 1 is seen while it runs
    hermes_engine.scripted.scripts["stubborn"] = Script(
        steps=[("token", {"text": "partial"}), ("status", {"text": "working", "level": "info"})], ignore_interrupt=True)
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "stubborn")
    while run.channel.last_seq < 1:
        await asyncio.sleep(0.005)
    started = time.monotonic()
    assert await hermes_engine.manager.cancel(run.run_id)
    assert time.monotonic() - started < 3 * hermes_engine.manager.cancel_grace_s + 1
    saved = hermes_engine.core.store.load(session.session_id)
    assert saved.pending_user_message is None
    assert any(m.get("_partial") and m["content"] == "partial" for m in saved.messages)
    await asyncio.sleep(0)
    assert run.task is not None and run.task.done()


async def test_backend_emitting_from_another_thread_is_delivered_in_order(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["threads"] = Script(
        steps=[("token", {"text": f"{i} "}) for i in range(500)], from_thread=True
    )
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "threads")
    rows = await collect(hermes_engine, run.run_id)
    assert [r.seq for r in rows] == list(range(1, 502))
    assert "".join(r.payload.get("text", "") for r in rows[:-1]) == "".join(f"{i} " for i in range(500))


async def test_fifty_concurrent_runs_in_one_process(hermes_engine: Engine) -> None:
    sessions = [hermes_engine.new_session() for _ in range(50)]
    runs = [await hermes_engine.manager.start_run(s.session_id, "count to 100") for s in sessions]
    streams = await asyncio.gather(*(collect(hermes_engine, r.run_id) for r in runs))
    assert all([r.seq for r in s] == list(range(1, 103)) for s in streams)
    await asyncio.gather(*(r.done.wait() for r in runs))
    for s in sessions:
        saved = hermes_engine.core.store.load(s.session_id)
        assert saved.messages[-1]["content"].endswith("99 100")


async def test_retry_reruns_the_last_turn_and_undo_drops_it(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    first = await hermes_engine.manager.start_run(session.session_id, "count to 3")
    await first.done.wait()
    retried = await hermes_engine.manager.retry(session.session_id)
    assert retried.message == "count to 3"
    await retried.done.wait()
    saved = hermes_engine.core.store.load(session.session_id)
    assert [m["content"] for m in saved.messages] == ["count to 3", "1 2 3"]
    assert [m["content"] for m in saved.context_messages] == ["count to 3", "1 2 3"]
    await hermes_engine.manager.undo(session.session_id)
    assert hermes_engine.core.store.load(session.session_id).messages == []
    with pytest.raises(NothingToRetry):
        await hermes_engine.manager.undo(session.session_id)


async def test_retry_and_undo_refuse_while_a_run_is_active(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 100000")
    with pytest.raises(RunActive):
        await hermes_engine.manager.retry(session.session_id)
    with pytest.raises(RunActive):
        await hermes_engine.manager.undo(session.session_id)
    await hermes_engine.manager.cancel(run.run_id)


async def test_kernel_bound_runs_are_interrupted_with_a_marker(hermes_engine: Engine) -> None:
    from hermes_jupyter.agents.base import NotebookBinding

    session = hermes_engine.new_session()
    binding = NotebookBinding(notebook_path="a.ipynb", cell_id="c1", kernel_id="k-1")
    run = await hermes_engine.manager.start_run(session.session_id, "count to 100000", notebook=binding)
    while run.channel.last_seq < 10:
        await asyncio.sleep(0.005)
    assert await hermes_engine.manager.interrupt_bound("k-other") == []
    assert await hermes_engine.manager.interrupt_bound("k-1") == [run.run_id]
    saved = hermes_engine.core.store.load(session.session_id)
    marker = saved.messages[-1]
    assert marker["type"] == "interrupted" and marker["interruption_cause"] == "kernel_restart"
    assert "partial output above was recovered" in marker["content"]
    assert saved.messages[-2]["content"].startswith("1 2 3")
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "interrupted"


async def test_drain_waits_then_interrupts_with_server_shutdown(hermes_engine: Engine) -> None:
    short = hermes_engine.new_session()
    long = hermes_engine.new_session()
    quick = await hermes_engine.manager.start_run(short.session_id, "count to 5")
    slow = await hermes_engine.manager.start_run(long.session_id, "count to 100000")
    left = await hermes_engine.manager.drain(0.3)
    assert left == [slow.run_id]
    assert hermes_engine.manager.run_status(quick.run_id)["status"] == "completed"
    marker = hermes_engine.core.store.load(long.session_id).messages[-1]
    assert marker["interruption_cause"] == "server_shutdown"
    from hermes_jupyter.runs.manager import Draining

    with pytest.raises(Draining):
        await hermes_engine.manager.start_run(short.session_id, "more")


async def test_failed_result_with_unsaved_session_still_settles(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["fail"] = Script(
        steps=[("token", {"text": "part"})], result=TurnResult.failure("quota", "quota exhausted")
    )
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "fail")
    await run.done.wait()
    saved = hermes_engine.core.store.load(session.session_id, use_cache=False)
    assert saved.messages[-1]["content"] == "**Error:** quota exhausted"
    assert saved.pending_user_message is None


async def test_idle_observer_gets_heartbeats_then_the_rows(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["slow"] = Script(steps=[("token", {"text": "late"})], delay_s=0.3)
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "slow")
    items = [b async for b in hermes_engine.manager.attach(run.run_id, 0, heartbeat_s=0.05).batches()]
    heartbeats = [b for b in items if isinstance(b, Heartbeat)]
    rows = [a.row for b in items if not isinstance(b, Heartbeat) for a in b]
    assert len(heartbeats) >= 3, "an idle stream must send keepalives"
    assert [r.event for r in rows] == ["token", "done"]


async def test_a_settling_run_still_reports_running_until_its_terminal_row(hermes_engine: Engine) -> None:
    import threading

    gate = threading.Event()
    real = hermes_engine.manager._settle_result_sync

    def slow_settle(run: Any, result: Any) -> str:
        gate.wait(5)
        return real(run, result)

    hermes_engine.manager._settle_result_sync = slow_settle  # type: ignore[method-assign]
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 3")
    while run.state != "settling":
        await asyncio.sleep(0.005)
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "running"
    gate.set()
    await run.done.wait()
    assert hermes_engine.manager.run_status(run.run_id)["status"] == "completed"
