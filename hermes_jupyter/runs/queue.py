"""The turn queue: a message sent while a turn runs waits in the session's sidecar, then runs in order.

The engine owns the queue (`RunManager.queue`) and is its only caller: `POST sessions/{sid}/runs`
is `RunManager.send`, which goes through `TurnQueue.submit`: with the session idle the
turn starts at once; while a turn is live the message is saved in `session.queued`
(first in, first out, at most `MAX_QUEUED`) under the run id the client is given,
and started under that id when the running turn settles. The decision and the save
happen in one hold of the session lock, the lock admission takes, so a message is
never both started and queued. `mode: "steer"` hands the text to the live turn
instead (`steer`), where the backend can take it (Hermes' steer).

The queue sees the engine only through `QueueHost` (six members) and the session store;
reads and cancels of a run go through the engine, which asks the queue first (`status_of`,
`withdraw`, `queued_in`).

Reads never start a turn: a queued turn starts when the turn ahead of it settles, or when a
message is admitted to an idle session. After a server restart the queue is still in the
sidecar; the start-up scan settles the turn the old process left pending and then resumes
each idle session's queue (`resume`), as that settle would have.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Protocol, TypeVar

import msgspec

from ..agents.base import NotebookBinding, Steers
from ..events import STATUS
from ..ids import new_run_id, validate_id
from ..sessions.store import Session, SessionStore
from .run import Draining, Run

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Most messages one session may have waiting.
MAX_QUEUED = 8

Mode = Literal["queue", "steer"]


class QueueHost(Protocol):
    """What the queue needs of the engine (`RunManager`), and nothing more."""

    #: The engine is shutting down: the queue starts nothing, new or queued.
    draining: bool

    async def offload(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """The queue's store work (locks, fsyncs) runs on the engine's I/O pool, never on the loop."""

    def settle_stale(self, session_id: str) -> None:
        """A turn a dead worker left pending is settled before the queue decides (else it looks busy)."""

    def is_busy(self, session: Session) -> bool:
        """The session's turn is live in this process: a new message waits behind it."""

    def admit_locked(
        self, session: Session, message: str | None, attachments: list[dict[str, Any]] | None,
        notebook: NotebookBinding | None, prepare: None, loop: asyncio.AbstractEventLoop, *,
        run_id: str | None = None,
    ) -> Run:
        """The engine admits and saves the turn the queue chose, in the queue's hold of the session lock."""

    def launch(self, run: Run) -> None:
        """The engine starts the worker of a turn admitted under the lock (on the loop, after the lock)."""


class QueueFull(RuntimeError):
    """The session already has `MAX_QUEUED` messages waiting (HTTP 409)."""


class CannotSteer(RuntimeError):
    """The running turn's backend cannot take a message mid-turn (HTTP 409)."""


class QueuedTurn(msgspec.Struct, frozen=True):
    """One waiting message, as the sidecar keeps it."""

    run_id: str
    message: str
    attachments: list[dict[str, Any]] = []
    queued_at: float = 0.0
    notebook: dict[str, str | None] | None = None

    def binding(self) -> NotebookBinding | None:
        return NotebookBinding(**self.notebook) if self.notebook else None


@dataclass(frozen=True, slots=True)
class Submitted:
    """The answer to a sent message: started, queued, or handed to the running turn."""

    run_id: str
    session_id: str
    queued: bool = False
    steered: bool = False

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"run_id": self.run_id, "session_id": self.session_id}
        if self.queued:
            body["queued"] = True
        if self.steered:
            body["steered"] = True
        return body


def queued_turns(session: Session) -> list[QueuedTurn]:
    return msgspec.convert(session.queued, list[QueuedTurn])


def _binding_row(notebook: NotebookBinding | None) -> dict[str, str | None] | None:
    if notebook is None:
        return None
    return {"notebook_path": notebook.notebook_path, "cell_id": notebook.cell_id, "kernel_id": notebook.kernel_id}


async def steer(runs: Iterable[Run], session_id: str, message: str) -> Submitted | None:
    """Hand `message` to the session's live turn among `runs`; None when no turn is live (it is sent normally)."""
    run = next((r for r in runs if r.session_id == session_id and r.state == "running"), None)
    if run is None:
        return None
    if not isinstance(run.backend, Steers) or not await run.backend.steer(run.run_id, message):
        raise CannotSteer(f"backend {run.backend.name} cannot steer run {run.run_id}")
    run.sink.emit(STATUS, {"text": f"You added to this turn: {message}", "level": "info", "kind": "steer"})
    return Submitted(run.run_id, session_id, steered=True)


class TurnQueue:
    """Queued turns of every session, started in order as runs settle (owned by the engine, which calls it)."""

    def __init__(self, store: SessionStore, host: QueueHost, *, limit: int = MAX_QUEUED) -> None:
        self.store = store
        self.host = host
        self.limit = limit
        #: queued run id -> session id; filled from the listing on the first miss after a start.
        self._where: dict[str, str] = {}
        self._indexed = False

    # -- sending ------------------------------------------------------------------------------
    async def submit(
        self, session_id: str, message: str, *, attachments: list[dict[str, Any]] | None = None,
        notebook: NotebookBinding | None = None,
    ) -> Submitted:
        """Start the turn now, or queue it behind the running one."""
        validate_id(session_id, "session id")
        if self.host.draining:
            raise Draining("the server is shutting down; no new runs")
        loop = asyncio.get_running_loop()
        launch, submitted = await self.host.offload(
            self._admit_or_queue, session_id, message, attachments or [], notebook, loop)
        if launch is not None:
            self.host.launch(launch)
        return submitted

    def _admit_or_queue(
        self, session_id: str, message: str, attachments: list[dict[str, Any]],
        notebook: NotebookBinding | None, loop: asyncio.AbstractEventLoop,
    ) -> tuple[Run | None, Submitted]:
        """One hold of the session lock: start the turn, or queue it (and start the queue's head if idle)."""
        host = self.host
        host.settle_stale(session_id)
        with self.store.lock(session_id):
            session = self.store.load(session_id)
            if not host.is_busy(session) and not session.queued:
                run = host.admit_locked(session, message, attachments, notebook, None, loop)
                return run, Submitted(run.run_id, session_id)
            if len(session.queued) >= self.limit:
                raise QueueFull(f"session {session_id} has {len(session.queued)} queued turns")
            turn = QueuedTurn(new_run_id(), message, list(attachments), time.time(), _binding_row(notebook))
            session.queued.append(msgspec.to_builtins(turn))
            head = None if host.is_busy(session) else self._admit_head_locked(session, loop)
            if head is None:
                self.store.save(session)
            self._where[turn.run_id] = session_id
            return head, Submitted(turn.run_id, session_id, queued=True)

    # -- starting the next turn ---------------------------------------------------------------
    def on_settled(self, session_id: str) -> None:
        """A turn of the session settled (the engine calls this on the loop): start the next queued one."""
        if not self.host.draining:
            asyncio.get_running_loop().create_task(self.start_next(session_id))

    async def start_next(self, session_id: str) -> str | None:
        """Start the session's oldest queued turn if it is idle; its run id, or None."""
        loop = asyncio.get_running_loop()
        try:
            run = await self.host.offload(self._start_next_sync, session_id, loop)
        except Exception:  # a session deleted or unreadable meanwhile: its queue goes with it
            log.exception("could not start the queued turn of session %s", session_id)
            return None
        if run is None:
            return None
        self.host.launch(run)
        return run.run_id

    def _start_next_sync(self, session_id: str, loop: asyncio.AbstractEventLoop) -> Run | None:
        if self.host.draining:
            return None
        self.host.settle_stale(session_id)
        with self.store.lock(session_id):
            session = self.store.load(session_id)
            if self.host.is_busy(session) or not session.queued:
                return None
            return self._admit_head_locked(session, loop)

    def _admit_head_locked(self, session: Session, loop: asyncio.AbstractEventLoop) -> Run:
        """Take the oldest queued turn off the queue and admit it under its promised id (one save)."""
        head = queued_turns(session)[0]
        del session.queued[0]
        self._where.pop(head.run_id, None)
        return self.host.admit_locked(session, head.message, head.attachments, head.binding(), None, loop,
                                      run_id=head.run_id)

    async def resume(self) -> list[str]:
        """Start the head of every idle session's queue (after the start-up scan settled what a previous
        process left pending); the run ids started."""
        rows = await self.host.offload(self.store.list)
        started = []
        for row in rows:
            if row.get("queued") and not row.get("corrupt"):
                run_id = await self.start_next(str(row["session_id"]))
                if run_id is not None:
                    started.append(run_id)
        return started

    # -- reading and withdrawing (reads never start a turn) -----------------------------------
    async def queued_in(self, run_id: str) -> str | None:
        """The session a queued run waits in, or None (not queued: started, finished, or never was)."""
        return await self.host.offload(self._session_of, validate_id(run_id, "run id"))

    async def status_of(self, run_id: str) -> dict[str, Any] | None:
        """`GET runs/{id}` of a queued run (`status: "queued"`); None when it is not queued."""
        session_id = await self.queued_in(run_id)
        if session_id is None:
            return None
        return {"run_id": run_id, "session_id": session_id, "status": "queued", "last_seq": 0, "marker": None}

    async def withdraw(self, run_id: str) -> dict[str, Any] | None:
        """Take a queued turn off its queue (it never runs): the cancel answer; None when it is not queued."""
        session_id = await self.queued_in(run_id)
        if session_id is None or not await self.host.offload(self._drop, session_id, run_id):
            return None
        return {"run_id": run_id, "session_id": session_id, "cancelled": True, "status": "cancelled",
                "last_seq": 0, "queued": True}

    def _drop(self, session_id: str, run_id: str) -> bool:
        with self.store.lock(session_id):
            session = self.store.load(session_id)
            kept = [q for q in session.queued if q.get("run_id") != run_id]
            if len(kept) == len(session.queued):
                return False
            self.store.replace(session_id, queued=kept)
        self._where.pop(run_id, None)
        return True

    def _session_of(self, run_id: str) -> str | None:
        if run_id not in self._where and not self._indexed:
            self._indexed = True
            for row in self.store.list():
                for queued in row.get("queued") or ():
                    self._where.setdefault(str(queued.get("run_id")), str(row["session_id"]))
        return self._where.get(run_id)
