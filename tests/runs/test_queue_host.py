"""The turn queue depends on the engine only through `QueueHost`: it runs over a real store and a host that has
nothing but the six members the protocol names (touching anything else of the engine would fail here)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import pytest

from hermes_jupyter.ids import new_run_id
from hermes_jupyter.runs.queue import QueueFull, TurnQueue
from hermes_jupyter.sessions.store import Session, SessionStore

pytestmark = pytest.mark.asyncio


class OnlyTheHost:
    """The six members of `QueueHost` and nothing else; `busy` stands in for the sessions with a live turn."""

    __slots__ = ("draining", "store", "busy", "admitted", "launched", "stale")

    def __init__(self, store: SessionStore) -> None:
        self.draining = False
        self.store = store
        self.busy: set[str] = set()
        self.admitted: list[tuple[str, str]] = []
        self.launched: list[str] = []
        self.stale: list[str] = []

    async def offload(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    def settle_stale(self, session_id: str) -> None:
        self.stale.append(session_id)

    def is_busy(self, session: Session) -> bool:
        return session.session_id in self.busy

    def admit_locked(self, session: Session, message: str | None, attachments: Any, notebook: Any, prepare: None,
                     loop: asyncio.AbstractEventLoop, *, run_id: str | None = None) -> Any:
        run_id = run_id or new_run_id()
        self.store.save(session)
        self.admitted.append((run_id, str(message)))
        return SimpleNamespace(run_id=run_id)

    def launch(self, run: Any) -> None:
        self.launched.append(run.run_id)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore(tmp_path / "sessions")
    yield store
    store.close()


async def test_the_queue_runs_on_its_host_alone_queueing_behind_a_busy_turn_and_starting_in_order(
    store: SessionStore,
) -> None:
    host = OnlyTheHost(store)
    queue = TurnQueue(store, host, limit=2)
    sid = store.create(backend="demo").session_id
    first = await queue.submit(sid, "one")
    assert not first.queued and host.launched == [first.run_id]
    host.busy.add(sid)  # its turn is live now
    second, third = await queue.submit(sid, "two"), await queue.submit(sid, "three")
    assert second.queued and third.queued and host.launched == [first.run_id]
    with pytest.raises(QueueFull):
        await queue.submit(sid, "four")
    assert await queue.status_of(second.run_id) == {"run_id": second.run_id, "session_id": sid,
                                                     "status": "queued", "last_seq": 0, "marker": None}
    assert await queue.start_next(sid) is None  # still busy: nothing starts
    host.busy.clear()
    assert await queue.start_next(sid) == second.run_id  # started under the id the sender was given
    assert host.admitted[-1] == (second.run_id, "two") and await queue.status_of(second.run_id) is None
    assert (await queue.withdraw(third.run_id) or {}).get("queued") is True
    assert store.load(sid).queued == [] and await queue.withdraw(third.run_id) is None
    assert set(host.stale) == {sid}  # a stale turn is settled before every decision


async def test_a_draining_host_starts_nothing_queued(store: SessionStore) -> None:
    host = OnlyTheHost(store)
    queue = TurnQueue(store, host)
    sid = store.create(backend="demo").session_id
    host.busy.add(sid)
    waiting = await queue.submit(sid, "later")
    host.busy.clear()
    host.draining = True
    assert await queue.start_next(sid) is None and await queue.resume() == []
    assert [q["run_id"] for q in store.load(sid).queued] == [waiting.run_id]
