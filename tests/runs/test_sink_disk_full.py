"""Held-back text and a journal that refuses rows (a full disk): the run still ends its stream.

The stream redactor holds a tail that may still become a secret (`sk-pr`) until its next delta or a flush point (docs/journal.md,
"Streamed text and redaction"). When the disk is full that flush is refused too; it must neither
stop the run from ending (its stream closed as cut by a full disk, its turn settled with the note)
nor journal the held word later after the gap its refused row left.
"""

from __future__ import annotations

import asyncio
import errno
from typing import Any

import pytest

from hermes_jupyter.journal.writer import RunJournal
from hermes_jupyter.runs.diskfull import DISK_FULL, DISK_FULL_NOTE
from hermes_jupyter.runs.fanout import RunChannel
from hermes_jupyter.runs.sink import RunSink

from ..fakes.scripted_agent import Script
from ..hermes_fixtures import Core, Engine

pytestmark = pytest.mark.asyncio


class Disk:
    """Takes `room` rows, then refuses every append with ENOSPC until `free()`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, room: int) -> None:
        self.room = room
        real = RunJournal.append

        def append(journal: RunJournal, event: str, payload: dict[str, Any], **kw: Any) -> Any:
            if self.room <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            self.room -= 1
            return real(journal, event, payload, **kw)

        monkeypatch.setattr(RunJournal, "append", append)

    def free(self) -> None:
        self.room = 1_000_000


def texts(core: Core, session_id: str, run_id: str) -> list[str]:
    return [r.payload.get("text", "") for r in core.journals.read(session_id, run_id).rows]


def sink_of(core: Core) -> tuple[RunSink, str, str]:
    session = core.store.create()
    run_id = "r" * 32
    writer = core.journals.writer(session.session_id, run_id)
    channel = RunChannel(session.session_id, run_id, core.journals)
    return RunSink(writer, channel, asyncio.get_running_loop()), session.session_id, run_id


async def test_a_refused_delta_takes_the_held_word_with_it(hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = Disk(monkeypatch, room=1)
    sink, sid, rid = sink_of(hermes_core)
    sink.emit("token", {"text": "one two sk-pr"})  # journals "one two ", holds "sk-pr" (it may become a key)
    with pytest.raises(OSError):
        sink.emit("token", {"text": "oj and sk-x"})  # "sk-proj and " refused; "sk-x" held after it
    disk.free()
    sink.flush()
    assert texts(hermes_core, sid, rid) == ["one two "], "nothing after the gap the refused row left"


async def test_closing_while_the_disk_refuses_the_held_word_still_closes(
    hermes_core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(monkeypatch, room=1)
    sink, sid, rid = sink_of(hermes_core)
    sink.emit("token", {"text": "one two sk-pr"})
    sink.close()  # the refusal is logged; the run's ending goes on
    disk.free()
    sink.emit("token", {"text": "late"})
    sink.flush()
    assert texts(hermes_core, sid, rid) == ["one two "]


async def test_a_refused_terminal_flush_still_closes_the_sink(hermes_core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = Disk(monkeypatch, room=1)
    sink, sid, rid = sink_of(hermes_core)
    sink.emit("token", {"text": "one two sk-pr"})
    with pytest.raises(OSError):
        sink.append_terminal("apperror", {"message": "x"})
    disk.free()
    sink.emit("token", {"text": "late "})
    assert texts(hermes_core, sid, rid) == ["one two "]


@pytest.mark.parametrize("script", [
    Script(steps=[("token", {"text": "one two sk-pr"}), ("token", {"text": "oj and sk-x"})]),
    Script(steps=[("token", {"text": "one two sk-pr"})], raise_after=OSError(errno.ENOSPC, "No space left on device")),
], ids=["a delta refused", "the backend's own write refused"])
async def test_a_run_cut_by_a_full_disk_with_a_word_held_ends_its_stream(
    hermes_engine: Engine, monkeypatch: pytest.MonkeyPatch, script: Script
) -> None:
    Disk(monkeypatch, room=1)
    hermes_engine.scripted.scripts["go"] = script
    session = hermes_engine.new_session(backend="scripted")
    run = await hermes_engine.manager.start_run(session.session_id, "go")
    await asyncio.wait_for(run.done.wait(), 10)
    assert run.channel.closed and run.channel.failure == DISK_FULL
    assert texts(hermes_engine.core, session.session_id, run.run_id) == ["one two "]
    saved = hermes_engine.core.store.load(session.session_id)
    assert saved.pending_user_message is None and saved.messages[-1]["content"] == DISK_FULL_NOTE
