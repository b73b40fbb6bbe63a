"""Stored turns: settle keeps each turn as the fold's rows (docs/transcript.md, "Stored turns")."""

from __future__ import annotations

import asyncio

import json
import time
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from hermes_jupyter.agents.answered import AnsweredBy
from hermes_jupyter.agents.base import TurnResult
from hermes_jupyter.sessions.store import Session
from hermes_jupyter.transcript import TranscriptFold
from hermes_jupyter.transcript.old_turns import turns_from_messages
from hermes_jupyter.transcript.rows import Row, Transcript
from hermes_jupyter.transcript.turns import keep_turn, turn_of, user_row

from ..fakes.scripted_agent import Script
from ..fixtures.journals import generate
from ..hermes_fixtures import Engine, save_pending_session

FIXTURES = Path(generate.__file__).parent


def _fold_of_journal(engine: Engine, session_id: str, run_id: str) -> dict[str, Any]:
    fold = TranscriptFold(run_id, session_id)
    fold.feed_chunks(engine.core.journals.iter_row_chunks(session_id, run_id))
    return fold.snapshot().to_json()


def _reloaded(session: Session) -> Session:
    return Session.from_json(orjson.loads(orjson.dumps(session.to_json())))


@pytest.mark.parametrize("name", sorted(generate.SCENARIOS))
def test_every_golden_transcript_is_stored_and_read_back_unchanged(name: str) -> None:
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())["transcript"]
    rows = msgspec.convert(expected["rows"], list[Row])
    transcript = Transcript(run_id=expected["run_id"], session_id="s", status=expected["status"], rows=rows)
    session = Session("s", turns=[turn_of(transcript, None)])
    turn = _reloaded(session).to_json()["turns"][0]
    assert (turn["run_id"], turn["status"], turn["rows"]) == (expected["run_id"], expected["status"], expected["rows"])


PLAN = {"items": [{"text": "look", "status": "completed"}, {"text": "answer", "status": "in_progress"}]}
RICH = Script(steps=[
    ("plan", PLAN),
    ("reasoning", {"text": "thinking"}),
    ("token", {"text": "Here it is."}),
    ("tool", {"tid": "t1", "name": "read_notebook", "args": {}, "preview": "reading"}),
    ("tool_complete", {"tid": "t1", "name": "read_notebook", "preview": "3 cells", "duration": 0.1, "is_error": False}),
    ("status", {"text": "The provider retried once.", "level": "warning"}),
    ("proposal", {"proposal_id": "p1", "action": "insert_end", "cell_type": "code", "source": "print(1)"}),
    ("token", {"text": "Done."}),
], result=TurnResult(final_text="Here it is. Done.", usage={"input_tokens": 12, "output_tokens": 5}))


@pytest.mark.asyncio
async def test_a_settled_turn_is_the_fold_of_its_journal_with_plan_usage_and_notes(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["rich"] = RICH
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "rich")
    await run.done.wait()
    saved = _reloaded(hermes_engine.core.store.load(session.session_id, use_cache=False))
    [turn] = saved.to_json()["turns"]
    folded = _fold_of_journal(hermes_engine, session.session_id, run.run_id)
    assert turn["rows"] == folded["rows"] and turn["status"] == folded["status"] == "completed"
    kinds = [row["kind"] for row in turn["rows"]]
    assert {"plan", "reasoning", "assistant", "tool", "note", "proposal", "usage"} <= set(kinds)
    assert turn["user"]["text"] == "rich" and turn["last_seq"] == folded["last_seq"]


@pytest.mark.asyncio
async def test_a_failed_turn_stores_its_error_marker_as_the_journal_folds_it(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["boom"] = Script(steps=[("token", {"text": "half"})], raise_after=RuntimeError("gone"))
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "boom")
    await run.done.wait()
    [turn] = hermes_engine.core.store.load(session.session_id).to_json()["turns"]
    folded = _fold_of_journal(hermes_engine, session.session_id, run.run_id)
    assert turn["status"] == "errored" and turn["rows"] == folded["rows"]
    assert turn["rows"][-1]["kind"] == "marker" and turn["rows"][-1]["variant"] == "error"


@pytest.mark.asyncio
async def test_a_cancelled_turn_stores_its_partial_output_and_cancel_marker(hermes_engine: Engine) -> None:
    hermes_engine.scripted.scripts["slow"] = Script(steps=[("token", {"text": "one "})] * 200, delay_s=0.01)
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "slow")
    while run.channel.last_seq < 3:
        await hermes_engine.manager.offload(time.sleep, 0.01)
    await hermes_engine.manager.cancel(run.run_id)
    [turn] = hermes_engine.core.store.load(session.session_id).to_json()["turns"]
    assert turn["status"] == "cancelled" and turn["rows"][-1]["variant"] == "cancelled"
    assert turn["rows"] == _fold_of_journal(hermes_engine, session.session_id, run.run_id)["rows"]


@pytest.mark.asyncio
async def test_undo_drops_the_stored_turn_and_retry_stores_the_new_one(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    first = await hermes_engine.manager.start_run(session.session_id, "count to 3")
    await first.done.wait()
    second = await hermes_engine.manager.start_run(session.session_id, "count to 2")
    await second.done.wait()
    await hermes_engine.manager.undo(session.session_id)
    turns = hermes_engine.core.store.load(session.session_id).turns
    assert [t.run_id for t in turns] == [first.run_id]


def test_settling_a_turn_twice_keeps_one_copy() -> None:
    transcript = Transcript(run_id="r1", session_id="s", status="completed")
    turns: list[Any] = []
    keep_turn(turns, turn_of(transcript, user_row("r1", {"role": "user", "content": "hi"})))
    keep_turn(turns, turn_of(transcript, user_row("r1", {"role": "user", "content": "hi"})))
    assert len(turns) == 1 and turns[0].user.text == "hi"


def test_a_decided_proposal_is_stored_with_its_decision() -> None:
    rows = msgspec.convert([{"kind": "proposal", "id": "r1:proposal:p1", "proposal_id": "p1", "source": "x"}], list[Row])
    by = AnsweredBy(kind="person", user="alice").to_json()
    turn = turn_of(Transcript(run_id="r1", session_id="s", status="completed", rows=rows), None,
                   decisions={"r1:proposal:p1": "accepted"}, deciders={"r1:proposal:p1": by})
    row = msgspec.to_builtins(turn.rows[0])
    assert row["status"] == "accepted" and row["answered_by"] == by


def test_an_old_sidecar_is_read_into_turns_through_the_converter() -> None:
    messages = [
        {"role": "user", "content": "plan it", "timestamp": 1, "_run_id": "r1"},
        {"role": "assistant", "content": "Sure.", "reasoning": "hm", "timestamp": 2, "_run_id": "r1"},
        {"role": "user", "content": "again", "timestamp": 3, "_recovered": True},
        {"role": "assistant", "content": "**Response interrupted.** ...", "_error": True, "type": "interrupted",
         "interruption_cause": "server_restart", "_pending_journal_recovery": True,
         "_journal_retry_stream_id": "r2", "_journal_retry_attempts": 1, "_journal_retry_first_seen_ts": 5},
    ]
    cards = [
        {"kind": "plan", "name": "plan", "tid": "r1:plan", "assistant_msg_idx": 1, "done": True,
         "items": [{"text": "a", "status": "completed"}], "_run_id": "r1"},
        {"kind": "approval", "name": "approval", "tid": "ap1", "assistant_msg_idx": 1, "done": True, "choice": "deny",
         "preview": "rm", "args": {"command": "rm -rf x"}, "answered_by": {"kind": "person", "user": "bob"}},
        {"name": "read_notebook", "tid": "t1", "assistant_msg_idx": 1, "done": True, "is_error": False, "duration": 0.5},
    ]
    session = Session.from_json({"session_id": "old", "messages": messages, "tool_calls": cards})
    first, second = session.to_json()["turns"]
    assert first["run_id"] == "r1" and first["status"] == "completed" and first["user"]["text"] == "plan it"
    assert [r["kind"] for r in first["rows"]] == ["reasoning", "assistant", "plan", "approval", "tool"]
    assert first["rows"][3]["answered_by"] == {"kind": "person", "user": "bob"}
    assert first["rows"][3]["command"] == "rm -rf x" and first["rows"][4]["status"] == "done"
    assert second["run_id"] == "r2" and second["status"] == "interrupted" and second["user"]["recovered"] is True
    assert second["rows"][-1]["cause"] == "server_restart" and second["retry"]["attempts"] == 1
    assert turns_from_messages(["junk", {"role": "assistant", "content": 5}], [None]) is not None  # never fatal


def test_a_crashed_turn_is_stored_with_the_marker_recovery_wrote(hermes_core: Any) -> None:
    old = time.time() - 3600
    save_pending_session(hermes_core, "stream_1", "Hello", started_at=old)
    hermes_core.append("test_sid", "stream_1", "token", {"text": "partial words"})
    session = hermes_core.recovery.get_session("test_sid")
    [turn] = session.to_json()["turns"]
    marker = session.messages[-1]
    assert turn["status"] == "interrupted" and turn["user"]["recovered"] is True
    assert turn["rows"][0] == {"kind": "assistant", "id": "stream_1:a:0", "text": "partial words"}
    assert turn["rows"][-1]["text"] == marker["content"] and turn["rows"][-1]["cause"] == "server_restart"


def test_a_long_stored_turn_is_written_row_by_row_and_read_back_equal(tmp_path: Path) -> None:
    from hermes_jupyter import jsonstream
    from hermes_jupyter.sessions.store import LONG_TEXT_KEYS, NESTED_LIST_KEYS, SessionStore

    long_text = "word " * (jsonstream.LONG_TEXT // 4)  # longer than one slice
    rows = msgspec.convert([{"kind": "assistant", "id": f"r1:a:{n}", "text": f"part {n}"} for n in range(500)]
                           + [{"kind": "assistant", "id": "r1:a:500", "text": long_text}], list[Row])
    turn = turn_of(Transcript(run_id="r1", session_id="big", status="completed", rows=rows), None)
    session = Session("big", messages=[{"role": "user", "content": "x" * (jsonstream.WHOLE_BYTES + 1)}], turns=[turn])
    pieces = jsonstream.encode(session.to_json(typed=True), LONG_TEXT_KEYS, NESTED_LIST_KEYS)
    assert not isinstance(pieces, bytes)  # a long session is written in pieces
    written = b"".join(pieces)
    assert written[written.index(b'"turns"'):].count(b"\n") > 500 // jsonstream.BATCH  # rows a batch a line
    assert orjson.loads(written)["turns"] == session.to_json()["turns"]
    store = SessionStore(tmp_path / "sessions")
    try:
        store.save(session)
        assert store.load("big", use_cache=False).turns == [turn]
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_notebook_recovers_a_run_whose_journal_was_pruned_from_its_stored_turn(
    hermes_engine: Engine, tmp_path: Path
) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from hermes_jupyter.notebook.outputs import RUN_MIME
    from hermes_jupyter.notebook.recover import recover_notebook_file

    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "make a plan")
    await run.done.wait()
    # the settled journal is compressed on the engine's one sealer thread: wait for it (a task behind it)
    await asyncio.get_running_loop().run_in_executor(hermes_engine.manager.sealer, lambda: None)
    hermes_engine.core.journals.close()
    for journal in (hermes_engine.core.journals.root / session.session_id).iterdir():
        journal.unlink()  # what retention does to an old settled run
    ref = {"run_id": run.run_id, "session_id": session.session_id, "seq": 1, "status": "running"}
    path = tmp_path / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("%%hermes\nmake a plan", outputs=[
        new_output("display_data", data={RUN_MIME: ref, "text/plain": "…"})])]), path)
    assert recover_notebook_file(path, hermes_engine.core.state_dir) == 1
    (output,) = nbformat.read(path, as_version=4).cells[0].outputs
    assert output["data"][RUN_MIME]["status"] == "completed" and "tokens" in output["data"]["text/markdown"]


@pytest.mark.asyncio
async def test_a_continuation_is_a_turn_of_its_own_after_the_turn_it_continues(hermes_engine: Engine) -> None:
    session = hermes_engine.new_session()
    run = await hermes_engine.manager.start_run(session.session_id, "count to 60")
    while run.channel.last_seq < 8:
        await hermes_engine.manager.offload(time.sleep, 0.005)
    await hermes_engine.manager.cancel(run.run_id)
    cont, continues = await hermes_engine.manager.continue_turn(session.session_id)
    await cont.done.wait()
    stopped, rest = hermes_engine.core.store.load(session.session_id).to_json()["turns"]
    assert (stopped["run_id"], stopped["status"], stopped["user"]["text"]) == (run.run_id, "cancelled", "count to 60")
    assert (rest["run_id"], rest["status"], rest["user"], rest["continues"]) == (cont.run_id, "completed", None, run.run_id)
    assert rest["rows"] == _fold_of_journal(hermes_engine, session.session_id, cont.run_id)["rows"]
