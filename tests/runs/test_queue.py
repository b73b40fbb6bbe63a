"""The turn queue: messages sent while a turn runs wait in the sidecar and run in order, cancellable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hermes_jupyter.runs.queue import MAX_QUEUED, CannotSteer, QueueFull

from ..hermes_fixtures import Engine, build_core, build_engine

pytestmark = pytest.mark.asyncio


async def _wait_idle(engine: Engine, sid: str, timeout_s: float = 20.0) -> None:
    """Until the session has no live run and nothing queued."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        with engine.core.store.lock(sid):  # a consistent view: the queue's head moves under this lock
            session = engine.core.store.load(sid)
            if not session.queued and not engine.manager.is_busy(session) and not engine.manager.active_runs():
                return
        assert asyncio.get_running_loop().time() < deadline, "the queue did not drain"
        await asyncio.sleep(0.02)


async def test_a_message_sent_while_a_turn_runs_is_queued_and_answered_after_it_in_order(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    first = await engine.send(sid, "count to 30")
    second = await engine.send(sid, "count to 2")
    third = await engine.send(sid, "count to 3")
    assert not first.queued and second.queued and third.queued
    stored = hermes_engine.core.store.load(sid, use_cache=False)
    assert [q["run_id"] for q in stored.queued] == [second.run_id, third.run_id]
    assert stored.compact()["queued_count"] == 2
    assert (await engine.describe_run(second.run_id))["status"] == "queued"
    await _wait_idle(hermes_engine, sid)
    session = hermes_engine.core.store.load(sid, use_cache=False)
    users = [m["content"] for m in session.messages if m.get("role") == "user"]
    assert users == ["count to 30", "count to 2", "count to 3"]
    assert session.messages[-1]["content"] == "1 2 3"
    assert {second.run_id, third.run_id} <= set(hermes_engine.core.journals.run_ids(sid))  # the promised ids
    assert (await engine.describe_run(third.run_id))["status"] == "completed"


async def test_the_queue_holds_at_most_eight_then_refuses(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    running = await engine.send(sid, "count to 100000")
    for i in range(MAX_QUEUED):
        assert (await engine.send(sid, f"count to {i + 1}")).queued
    with pytest.raises(QueueFull):
        await engine.send(sid, "one too many")
    assert len(hermes_engine.core.store.load(sid).queued) == MAX_QUEUED
    await hermes_engine.manager.cancel(running.run_id)
    await _wait_idle(hermes_engine, sid)


async def test_cancel_of_a_queued_turn_takes_it_off_the_queue_and_it_never_runs(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    running = await engine.send(sid, "count to 40")
    dropped = await engine.send(sid, "count to 2")
    kept = await engine.send(sid, "count to 3")
    answer = await engine.cancel_run(dropped.run_id)
    assert answer["cancelled"] is True and answer["queued"] is True
    assert [q["run_id"] for q in hermes_engine.core.store.load(sid).queued] == [kept.run_id]
    await _wait_idle(hermes_engine, sid)
    assert dropped.run_id not in hermes_engine.core.journals.run_ids(sid)
    users = [m["content"] for m in hermes_engine.core.store.load(sid).messages if m.get("role") == "user"]
    assert users == ["count to 40", "count to 3"]
    assert running.run_id in hermes_engine.core.journals.run_ids(sid)


async def test_stopping_the_running_turn_starts_the_queued_one(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    running = await engine.send(sid, "count to 100000")
    waiting = await engine.send(sid, "count to 2")
    assert (await engine.cancel_run(running.run_id))["cancelled"] is True
    await _wait_idle(hermes_engine, sid)
    assert hermes_engine.core.store.load(sid).messages[-1]["content"] == "1 2"
    assert (await engine.describe_run(waiting.run_id))["status"] == "completed"


async def test_steer_on_a_backend_that_cannot_steer_is_refused_and_nothing_is_queued(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    running = await engine.send(sid, "count to 100000")
    with pytest.raises(CannotSteer):
        await engine.send(sid, "faster please", mode="steer")
    assert hermes_engine.core.store.load(sid).queued == []
    await hermes_engine.manager.cancel(running.run_id)


async def test_steer_hands_the_text_to_a_backend_that_can_and_notes_it_in_the_run(hermes_engine: Engine) -> None:
    steered: list[tuple[str, str]] = []

    async def steer(run_id: str, text: str) -> bool:
        steered.append((run_id, text))
        return True

    hermes_engine.demo.steer = steer  # the demo cannot steer; this one can
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    running = await engine.send(sid, "count to 100000")
    answer = await engine.send(sid, "stop at 50", mode="steer")
    assert answer.steered and answer.run_id == running.run_id and steered == [(running.run_id, "stop at 50")]
    await hermes_engine.manager.cancel(running.run_id)
    notes = [r for r in hermes_engine.manager.views.run_transcript(running.run_id).to_json()["rows"] if r["kind"] == "note"]
    assert any("stop at 50" in n["text"] for n in notes)


async def test_steer_with_no_running_turn_sends_the_message_normally(hermes_engine: Engine) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    answer = await engine.send(sid, "count to 2", mode="steer")
    assert not answer.queued and not answer.steered
    await _wait_idle(hermes_engine, sid)


async def test_a_queued_turn_survives_a_server_restart_reads_leave_it_queued_and_the_resume_starts_it(
    hermes_engine: Engine, tmp_path: Path
) -> None:
    engine = hermes_engine.manager  # the queue is reached through the engine's front door
    sid = hermes_engine.new_session().session_id
    await engine.send(sid, "count to 100000")
    waiting = await engine.send(sid, "count to 2")
    await hermes_engine.manager.drain(0.05)  # shutdown: the running turn is interrupted, the queue stays
    assert [q["run_id"] for q in hermes_engine.core.store.load(sid, use_cache=False).queued] == [waiting.run_id]
    restarted = build_engine(build_core(tmp_path))  # a new process over the same state directory
    try:
        manager = restarted.manager
        assert (await manager.describe_run(waiting.run_id))["status"] == "queued"  # reads start nothing
        assert [q["run_id"] for q in (await manager.read_session(sid)).queued] == [waiting.run_id]
        assert (await manager.describe_run(waiting.run_id))["status"] == "queued"
        assert not manager.active_runs()
        assert await manager.resume_queues() == [waiting.run_id]  # what the server's start-up scan does
        await _wait_idle(restarted, sid)
        assert restarted.core.store.load(sid).messages[-1]["content"] == "1 2"
    finally:
        restarted.core.journals.close()
        restarted.core.store.close()
