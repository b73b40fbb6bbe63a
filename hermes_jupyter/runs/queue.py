"""The turn queue: a message sent while a turn runs waits in the session's sidecar, then runs in order.

The engine owns the queue (`RunManager.queue`) and is its only caller: `POST sessions/{sid}/runs`
is `RunManager.send`, which goes through `TurnQueue.submit`: with the session idle the
turn starts at once; while a turn is live the message is saved in `session.queued`
(first in, first out, at most `MAX_QUEUED`) under the run id the client is given,
and started under that id when the running turn settles. The decision and the save
happen in one hold of the session lock, the lock admission takes, so a message is
never both started and queued. `mode: "steer"` hands the text to the live turn
instead, where the backend can take it (Hermes' steer).

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
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ..agents.base import NotebookBinding, Steers
from ..events import STATUS
from ..ids import new_run_id, validate_id
from ..sessions.store import Session
from .run import Draining, Run

if TYPE_CHECKING:
    from .manager import RunManager

log = logging.getLogger(__name__)

#: Most messages one session may have waiting.
MAX_QUEUED = 8

Mode = Literal["queue", "steer"]


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


class TurnQueue:
    """Queued turns of every session, started in order as runs settle (owned by the engine, which calls it)."""

    def __init__(self, manager: RunManager, *, limit: int = MAX_QUEUED) -> None:
        self.manager = manager
        self.limit = limit
        #: queued run id -> session id; filled from the listing on the first miss after a start.
        self._where: dict[str, str] = {}
        self._indexed = False
        manager.after_settle.append(self._on_settled)

    # -- sending ------------------------------------------------------------------------------
    async def submit(
        self, session_id: str, message: str, *, attachments: list[dict[str, Any]] | None = None,
        notebook: NotebookBinding | None = None, mode: Mode = "queue",
    ) -> Submitted:
        """Start the turn now, queue it behind the running one, or (`steer`) hand it to the running one."""
        validate_id(session_id, "session id")
        if self.manager.draining:
            raise Draining("the server is shutting down; no new runs")
        if mode == "steer":
            steered = await self._steer(session_id, message)
            if steered is not None:
                return steered
        loop = asyncio.get_running_loop()
        launch, submitted = await self.manager.offload(
            self._admit_or_queue, session_id, message, attachments or [], notebook, loop)
        if launch is not None:
            self.manager.launch(launch)
        return submitted

    def _admit_or_queue(
        self, session_id: str, message: str, attachments: list[dict[str, Any]],
        notebook: NotebookBinding | None, loop: asyncio.AbstractEventLoop,
    ) -> tuple[Run | None, Submitted]:
        """One hold of the session lock: start the turn, or queue it (and start the queue's head if idle)."""
        manager = self.manager
        manager.recovery.get_session(session_id)  # settle a stale turn first
        with manager.store.lock(session_id):
            session = manager.store.load(session_id)
            if not manager.is_busy(session) and not session.queued:
                run = manager.admit_locked(session, message, attachments, notebook, None, loop)
                return run, Submitted(run.run_id, session_id)
            if len(session.queued) >= self.limit:
                raise QueueFull(f"session {session_id} has {len(session.queued)} queued turns")
            turn = QueuedTurn(new_run_id(), message, list(attachments), time.time(), _binding_row(notebook))
            session.queued.append(msgspec.to_builtins(turn))
            head = None if manager.is_busy(session) else self._admit_head_locked(session, loop)
            if head is None:
                manager.store.save(session)
            self._where[turn.run_id] = session_id
            return head, Submitted(turn.run_id, session_id, queued=True)

    async def _steer(self, session_id: str, message: str) -> Submitted | None:
        """Hand `message` to the session's live turn; None when no turn is live (it is sent normally)."""
        run = next((r for r in self.manager.active_runs() if r.session_id == session_id and r.state == "running"), None)
        if run is None:
            return None
        if not isinstance(run.backend, Steers) or not await run.backend.steer(run.run_id, message):
            raise CannotSteer(f"backend {run.backend.name} cannot steer run {run.run_id}")
        run.sink.emit(STATUS, {"text": f"You added to this turn: {message}", "level": "info", "kind": "steer"})
        return Submitted(run.run_id, session_id, steered=True)

    # -- starting the next turn ---------------------------------------------------------------
    def _on_settled(self, session_id: str) -> None:
        if not self.manager.draining:
            asyncio.get_running_loop().create_task(self.start_next(session_id))

    async def start_next(self, session_id: str) -> str | None:
        """Start the session's oldest queued turn if it is idle; its run id, or None."""
        loop = asyncio.get_running_loop()
        try:
            run = await self.manager.offload(self._start_next_sync, session_id, loop)
        except Exception:  # a session deleted or unreadable meanwhile: its queue goes with it
            log.exception("could not start the queued turn of session %s", session_id)
            return None
        if run is None:
            return None
        self.manager.launch(run)
        return run.run_id

    def _start_next_sync(self, session_id: str, loop: asyncio.AbstractEventLoop) -> Run | None:
        manager = self.manager
        if manager.draining:
            return None
        manager.recovery.get_session(session_id)
        with manager.store.lock(session_id):
            session = manager.store.load(session_id)
            if manager.is_busy(session) or not session.queued:
                return None
            return self._admit_head_locked(session, loop)

    def _admit_head_locked(self, session: Session, loop: asyncio.AbstractEventLoop) -> Run:
        """Take the oldest queued turn off the queue and admit it under its promised id (one save)."""
        head = queued_turns(session)[0]
        del session.queued[0]
        self._where.pop(head.run_id, None)
        return self.manager.admit_locked(session, head.message, head.attachments, head.binding(), None, loop,
                                         run_id=head.run_id)

    async def resume(self) -> list[str]:
        """Start the head of every idle session's queue (after the start-up scan settled what a previous
        process left pending); the run ids started."""
        rows = await self.manager.offload(self.manager.store.list)
        started = []
        for row in rows:
            if row.get("queued") and not row.get("corrupt"):
                run_id = await self.start_next(str(row["session_id"]))
                if run_id is not None:
                    started.append(run_id)
        return started

    # -- reading and cancelling (reads never start a turn) ------------------------------------
    async def run_status(self, run_id: str) -> dict[str, Any]:
        """`GET runs/{id}`: a queued run answers `status: "queued"`."""
        validate_id(run_id, "run id")
        session_id = await self.manager.offload(self._session_of, run_id)
        if session_id is not None and self._where.get(run_id) == session_id:
            return {"run_id": run_id, "session_id": session_id, "status": "queued", "last_seq": 0, "marker": None}
        return await self.manager.offload(self.manager.run_status, run_id, with_marker=True)

    async def cancel(self, run_id: str, cause: str | None = None) -> dict[str, Any]:
        """`POST runs/{id}/cancel`: a queued turn leaves the queue; a live one is cancelled as always, or,
        with `cause` (its kernel restarting), interrupted with that cause."""
        validate_id(run_id, "run id")
        session_id = await self.manager.offload(self._session_of, run_id)
        if session_id is not None and await self.manager.offload(self._drop, session_id, run_id):
            return {"run_id": run_id, "session_id": session_id, "cancelled": True, "status": "cancelled",
                    "last_seq": 0, "queued": True}
        if cause is not None:
            cancelled = await self.manager.interrupt(run_id, cause)
        else:
            cancelled = await self.manager.cancel(run_id)
        return {"run_id": run_id, "cancelled": cancelled, **self.manager.run_status(run_id)}

    def _drop(self, session_id: str, run_id: str) -> bool:
        with self.manager.store.lock(session_id):
            session = self.manager.store.load(session_id)
            kept = [q for q in session.queued if q.get("run_id") != run_id]
            if len(kept) == len(session.queued):
                return False
            self.manager.store.replace(session_id, queued=kept)
        self._where.pop(run_id, None)
        return True

    async def session_of_run(self, run_id: str) -> str:
        """The session of a run, queued, live or journaled (`UnknownRun` when there is none): who may see it."""
        validate_id(run_id, "run id")
        queued = await self.manager.offload(self._session_of, run_id)
        if queued is not None:
            return queued
        live = next((r for r in self.manager.active_runs() if r.run_id == run_id), None)
        if live is not None:
            return live.session_id
        return await self.manager.offload(self.manager.status.session_of, run_id)

    def _session_of(self, run_id: str) -> str | None:
        """The session a queued run waits in, or None (not queued: started, finished, or never was)."""
        if run_id not in self._where and not self._indexed:
            self._indexed = True
            for row in self.manager.store.list():
                for queued in row.get("queued") or ():
                    self._where.setdefault(str(queued.get("run_id")), str(row["session_id"]))
        return self._where.get(run_id)
