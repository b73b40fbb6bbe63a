"""RunManager: server-owned runs. Admission, pending state, the worker, settle, cancel, retry, undo.

A run belongs to this process, never to a kernel or a browser tab. Its events
are journaled before anyone sees them; observers come and go. The session lock
is held only for in-memory edits and the save, never across agent I/O. Every
turn is settled exactly once: by the worker (completed, failed), by cancel or
interrupt, or, if the worker exits without settling, by last-resort recovery.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, TypeVar

from ..agents.base import AgentBackend, NotebookBinding, TurnRequest, TurnResult
from ..agents.answered import AnsweredBy
from ..agents.errors import failed_turn
from ..agents.usage import usage_payload
from ..events import USAGE
from ..sessions.deletion import delete_session as delete_session_now
from ..sessions.listing import Page, SessionListing, Visible
from ..fsio import is_disk_full
from ..ids import new_run_id, validate_id
from ..journal import Journals
from ..recovery.liveness import LiveRuns
from ..markers import known_cause
from ..notebook.recovery_service import NotebookPlaces, NotebookRecovery, Recovered
from ..redact import PATTERNS_ONLY, Redactor
from ..recovery.repair import Recovery
from ..sessions.store import RunActive as RunActive  # RunActive: handlers map it to 409
from ..sessions.store import Session, SessionStore
from ..sessions.titles import title_for_turn
from ..transcript import api_messages
from . import continuation, settle
from .continuation import NothingToContinue as NothingToContinue  # raised by continue_turn; handlers map it to 409
from .settle import NothingToRetry as NothingToRetry  # raised by retry/undo; handlers map it to 409
from .session_edits import EDITABLE as EDITABLE, checkpoint, edit_fields, session_binding as session_binding, undo_last_turn
from .diskfull import DISK_FULL, SpaceWaiter
from .first_turn import create_with_first_turn
from .ending import LIFECYCLE, RunEnding
from .fanout import Observer, RunObservers
from .queue import Mode, Submitted, TurnQueue, steer
from .run import Draining as Draining  # raised while draining; handlers map it to 409
from .run import Run, redacted_result, run_redactor
from .sink import RunSink
from .status import RunStatusIndex
from .views import RunViews

log = logging.getLogger(__name__)
T = TypeVar("T")

Lifecycle = Callable[[str, dict[str, Any]], None]
#: running → settling | cancelling | interrupting → settled




class RunManager:
    """The engine, and the one front door to it: handlers make one call here per verb. It owns the turn
    queue (`queue`, which it calls) and holds the read sides (`views` of runs, `listing` of sessions),
    composed, not mixed in."""

    def __init__(
        self,
        store: SessionStore,
        journals: Journals,
        recovery: Recovery,
        live: LiveRuns,
        backends: Mapping[str, AgentBackend],
        *,
        default_backend: str = "demo",
        cancel_grace_s: float = 5.0,
        checkpoint_interval_s: float = 15.0,
        heartbeat_s: float = 15.0,
        on_lifecycle: Lifecycle | None = None,
        io_workers: int = 2,
        seal_journals: bool = True,
        redactor: Redactor = PATTERNS_ONLY,
        notebooks: NotebookPlaces | None = None,
    ) -> None:
        self.store = store
        self.journals = journals
        self.recovery = recovery
        self.live = live
        self.backends = dict(backends)
        self.default_backend = default_backend
        self.cancel_grace_s = cancel_grace_s
        self.checkpoint_interval_s = checkpoint_interval_s
        self.observers = RunObservers(journals, heartbeat_s=heartbeat_s)
        self.status = RunStatusIndex(journals, store)
        self.on_lifecycle = on_lifecycle or (lambda name, data: None)
        self.draining = False
        self.seal_journals = seal_journals
        #: Masks secrets in every journaled payload (in the run sink) and in what a turn returns.
        self.redactor = redactor
        self.space = SpaceWaiter(store, recovery, live, self.offload)
        self._runs: dict[str, Run] = {}
        self._generations: dict[str, int] = {}
        self._generation_lock = threading.Lock()
        # Admission and settle I/O (fsyncs) run here: few threads, so a burst of them cannot crowd
        # the event loop out of the GIL while it delivers other runs' events.
        self.io = ThreadPoolExecutor(max_workers=io_workers, thread_name_prefix="hermes-io")
        #: Compressing settled journals is background work: its own thread, never ahead of an admission or settle.
        self.sealer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-seal")
        self.ending = RunEnding(store, journals, recovery, self.space, self.generation,
                                lambda name, data: self.on_lifecycle(name, data))
        self.listing = SessionListing(store, self.offload)
        self.views = RunViews(store, journals, recovery, self.observers, self.status, self._runs, self.offload)
        #: The turn queue sees this engine only as its `QueueHost` (runs/queue.py), and the store.
        self.queue = TurnQueue(store, self)
        #: Notebook recovery, where the server says where notebooks are (None: an engine without notebooks).
        self.notebooks = None if notebooks is None else NotebookRecovery(
            notebooks, journals, live.is_live, recovery.verdict, self.offload)

    async def offload(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run blocking store or journal work on the engine's small I/O pool."""
        return await asyncio.get_running_loop().run_in_executor(self.io, functools.partial(fn, *args, **kwargs))

    # -- the front door: sending, reading, cancelling (the queue and the views answer) ----------
    async def send(self, session_id: str, message: str, *, attachments: list[dict[str, Any]] | None = None,
                   notebook: NotebookBinding | None = None, mode: Mode = "queue") -> Submitted:
        """A message to a session: started now, queued behind its running turn, or (`steer`) handed to it."""
        if mode == "steer" and not self.draining:  # draining: the queue refuses it as it refuses any message
            steered = await steer(self.active_runs(), validate_id(session_id, "session id"), message)
            if steered is not None:
                return steered
        return await self.queue.submit(session_id, message, attachments=attachments, notebook=notebook)

    async def create_session(self, fields: dict[str, Any], message: str | None = None) -> tuple[Session, Run | None]:
        """A new session (`fields` as `SessionStore.create`); with `message`, its first turn in the same step,
        so a turn that cannot start leaves no empty session (runs/first_turn.py)."""
        if message is None:
            return await self.offload(self.store.create, **fields), None
        return await create_with_first_turn(self, message, **fields)

    async def list_sessions(self, notebook_path: str | None = None, *, visible: Visible | None = None) -> bytes:
        """`GET sessions`: every session (of one notebook), newest first, as a JSON array built off the loop;
        `visible` narrows it to what the caller may see (sessions/listing.py)."""
        return await self.listing.encoded(notebook_path, visible)

    async def sessions_page(self, limit: int, before: str | None = None, notebook_path: str | None = None, *,
                            visible: Visible | None = None) -> Page:
        """`GET sessions?limit=`: one page, newest first, and the cursor of the next (sessions/listing.py)."""
        return await self.listing.page(limit, before, notebook_path, visible)

    async def read_session(self, session_id: str) -> Session:
        """The session, a stale turn repaired first. A read never starts a turn."""
        return await self.offload(self.recovery.get_session, validate_id(session_id, "session id"))

    async def describe_run(self, run_id: str) -> dict[str, Any]:
        """`GET runs/{id}`: its status and closing marker; a queued run is `queued`."""
        queued = await self.queue.status_of(run_id)
        return queued if queued is not None else await self.offload(self.run_status, run_id, with_marker=True)

    async def cancel_run(self, run_id: str, cause: str | None = None) -> dict[str, Any]:
        """Take a queued turn off its queue, or cancel a live run (`cause`: interrupt it with that cause)."""
        withdrawn = await self.queue.withdraw(run_id)
        if withdrawn is not None:
            return withdrawn
        cancelled = await (self.cancel(run_id) if cause is None else self.interrupt(run_id, cause))
        return {"run_id": run_id, "cancelled": cancelled, **self.run_status(run_id)}

    async def session_of_run(self, run_id: str) -> str:
        """The session of a run, queued, live or journaled (`UnknownRun` when there is none): who may see it."""
        queued = await self.queue.queued_in(run_id)
        if queued is not None:
            return queued
        live = self._runs.get(run_id)
        if live is not None:
            return live.session_id
        return await self.offload(self.status.session_of, run_id)

    async def recover_notebook(self, path: str, full: Path, *, force: bool = False) -> Recovered:
        """Rebuild a notebook's unfinished hermes outputs, through its room or in its file (notebook/recovery_service.py)."""
        if self.notebooks is None:
            raise RuntimeError("this engine was built without notebooks")
        return await self.notebooks.recover(path, full, force=force)

    async def resume_queues(self) -> list[str]:
        """After the start-up scan settled what a previous process left: start each idle session's queue."""
        return await self.queue.resume()

    def run_status(self, run_id: str, *, with_marker: bool = False) -> dict[str, Any]:
        return self.views.run_status(run_id, with_marker=with_marker)

    def attach(self, run_id: str, after_seq: int = 0, *, heartbeat_s: float | None = None) -> Observer:
        return self.views.attach(run_id, after_seq, heartbeat_s=heartbeat_s)

    async def read_events(self, run_id: str, after_seq: int, limit: int) -> dict[str, Any]:
        return await self.views.read_events(run_id, after_seq, limit)

    async def run_bundle(self, run_id: str) -> dict[str, Any]:
        return await self.offload(self.views.run_bundle, run_id)

    async def decide_proposal(self, run_id: str, proposal_id: str, decision: str, by: AnsweredBy) -> dict[str, Any]:
        return await self.views.decide_proposal(run_id, proposal_id, decision, by)

    # -- admission --------------------------------------------------------------------------
    async def start_run(
        self,
        session_id: str,
        message: str | None,
        *,
        attachments: list[dict[str, Any]] | None = None,
        notebook: NotebookBinding | None = None,
        prepare: Callable[[Session], tuple[str, list[dict[str, Any]]]] | None = None,
    ) -> Run:
        """Admit a turn: pending state is saved before the worker starts (409 while a run is live).

        The locked part (repair, admission, save with its fsyncs) runs off the event
        loop, so admitting one run never stalls the delivery of others.
        """
        if self.draining:
            raise Draining("the server is shutting down; no new runs")
        validate_id(session_id, "session id")
        loop = asyncio.get_running_loop()
        run = await self.offload(self._admit_run, session_id, message, attachments, notebook, prepare, loop)
        self.launch(run)
        return run

    def launch(self, run: Run) -> None:
        """Start the worker of an admitted run (on the loop)."""
        run.task = asyncio.get_running_loop().create_task(self._worker(run), name=f"hermes-run-{run.run_id}")
        self.on_lifecycle("run.started", self._describe(run))

    def _admit_run(
        self,
        session_id: str,
        message: str | None,
        attachments: list[dict[str, Any]] | None,
        notebook: NotebookBinding | None,
        prepare: Callable[[Session], tuple[str, list[dict[str, Any]]]] | None,
        loop: asyncio.AbstractEventLoop,
    ) -> Run:
        self.settle_stale(session_id)
        with self.store.lock(session_id):
            return self.admit_locked(self.store.load(session_id), message, attachments, notebook, prepare, loop)

    def admit_locked(
        self,
        session: Session,
        message: str | None,
        attachments: list[dict[str, Any]] | None,
        notebook: NotebookBinding | None,
        prepare: Callable[[Session], tuple[str, list[dict[str, Any]]]] | None,
        loop: asyncio.AbstractEventLoop,
        *,
        run_id: str | None = None,
    ) -> Run:
        """Admit a turn of `session` and save it; the caller holds the session lock (queue.py starts a
        queued turn here under its promised `run_id`). The caller then `launch`es the run."""
        self._admit(session)
        if prepare is not None:
            message, attachments = prepare(session)
        if not message or not message.strip():
            raise ValueError("message must be a non-empty string")
        run = self._create_run(session, message, attachments or [], notebook, loop, run_id)
        try:
            self.store.save(session)
        except BaseException:
            self._forget(run, loop)
            raise
        return run

    def settle_stale(self, session_id: str) -> None:
        """Settle a turn a dead worker left pending (the queue asks before deciding; QueueHost)."""
        self.recovery.get_session(session_id)

    def is_busy(self, session: Session) -> bool:
        """The session's turn is live in this process (a new message must wait or steer)."""
        stream = session.active_run_id
        return bool(stream and self.live.is_live(stream))

    def _admit(self, session: Session) -> None:
        stream = session.active_run_id
        if self.is_busy(session):
            raise RunActive(f"session {session.session_id} already has a running turn ({stream})")
        if stream and session.pending_user_message:
            # Not live in this process: a dead turn inside the grace period. Settle it now.
            self.recovery.apply_core_sync_or_error_marker(session, stream)

    def _create_run(
        self,
        session: Session,
        message: str,
        attachments: list[dict[str, Any]],
        notebook: NotebookBinding | None,
        loop: asyncio.AbstractEventLoop,
        run_id: str | None = None,
    ) -> Run:
        run_id = run_id or new_run_id()
        backend_name = session.backend or self.default_backend
        backend = self.backends.get(backend_name) or self.backends[self.default_backend]
        writer = self.journals.writer(session.session_id, run_id)  # the journal exists before the turn is pending
        channel = self.observers.open(session.session_id, run_id)
        run = Run(
            run_id=run_id, session_id=session.session_id, message=message, backend=backend,
            generation=self.invalidate_generation(session.session_id), started_backend_id=session.backend_session_id,
            notebook=notebook if notebook is not None else session_binding(session), channel=channel,
            sink=RunSink(writer, channel, loop, run_redactor(self.redactor, backend)), model=session.model,
            autonomy=session.autonomy,
        )
        self.live.register_worker(run_id, session.session_id)
        self.live.register_stream(run_id)
        self._runs[run_id] = run
        session.active_run_id = run_id
        session.pending_user_message = message
        session.pending_attachments = list(attachments)
        session.pending_started_at = run.started_at
        session.last_run_id = run_id
        title = title_for_turn(session.title, session.messages, message)
        if title is not None:
            session.title = title
        if notebook is not None:
            session.notebook_path = notebook.notebook_path or session.notebook_path
            session.cell_id = notebook.cell_id
            session.kernel_id = notebook.kernel_id
        return run

    def invalidate_generation(self, session_id: str) -> int:
        """Start a new run generation for a session; older runs may no longer move its binding."""
        with self._generation_lock:
            self._generations[session_id] = self._generations.get(session_id, 0) + 1
            return self._generations[session_id]

    def generation(self, session_id: str) -> int:
        return self._generations.get(session_id, 0)

    # -- the worker -------------------------------------------------------------------------
    async def _worker(self, run: Run) -> None:
        checkpoint = asyncio.create_task(self._checkpoint_loop(run))
        try:
            result = await self._run_backend(run)
            if result is not None and run.state == "running":
                result = redacted_result(result, run.sink.redactor)
                self._emit_usage(run, result)
                run.state = "settling"
                if run.failure != DISK_FULL:  # a full disk is settled below, once it can be written
                    await self._settle_result(run, result)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            run.failure = DISK_FULL
            log.error("run %s could not be settled: the disk is full", run.run_id)
        finally:
            await self._stop_checkpoint(checkpoint)
            if run.state in ("running", "settling"):
                settled = await self.offload(self._settle_last_resort, run)
                self._finish(run, "run.interrupted")
                if not settled and run.failure == DISK_FULL:
                    self.space.wait_for_space(run.session_id, run.run_id)

    async def _run_backend(self, run: Run) -> TurnResult | None:
        session = self.store.load(run.session_id)
        request = TurnRequest(
            session_id=run.session_id, run_id=run.run_id, message=run.message,
            history=api_messages(session.context_messages),
            attachments=list(session.pending_attachments), backend_session_id=run.started_backend_id,
            model=session.model, notebook=run.notebook, continues=continuation.of_session(session),
            autonomy=session.autonomy,
        )
        try:
            if request.continues is not None:
                continuation.announce(run.sink, request.continues)
            return await run.backend.run_turn(request, run.sink)
        except asyncio.CancelledError:
            if run.state == "running":
                raise  # the server is cancelling the task itself: last resort settles
            return None  # abandoned by cancel/interrupt, which settle the turn
        except Exception as exc:  # any backend failure becomes a settled error turn
            log.exception("backend %s failed in run %s", run.backend.name, run.run_id)
            if is_disk_full(exc):
                run.failure = DISK_FULL
            return failed_turn("internal", f"{type(exc).__name__}: {exc}")

    def _emit_usage(self, run: Run, result: TurnResult) -> None:
        """The turn's `usage` event, once, before its terminal row (completed or errored turns that counted)."""
        if result.outcome not in ("completed", "errored") or not result.usage:
            return
        model = run.model or getattr(run.backend, "model", None)  # the session's choice, else the backend's
        run.sink.emit(USAGE, usage_payload(result.usage, duration_s=time.time() - run.started_at,
                                           model=str(model) if model else None))

    async def _settle_result(self, run: Run, result: TurnResult) -> None:
        lifecycle = await self.offload(self._settle_result_sync, run, result)
        self._finish(run, lifecycle)

    def _settle_result_sync(self, run: Run, result: TurnResult) -> str:
        """Fold the journal into the session, save, then journal the terminal event (off the loop)."""
        return self.ending.result(run, result)

    def _settle_last_resort(self, run: Run) -> bool:
        """The worker exits without having settled: recovery settles from the journal. True if it did."""
        return self.ending.last_resort(run)

    # -- checkpoint -------------------------------------------------------------------------
    async def _checkpoint_loop(self, run: Run) -> None:
        while True:
            await asyncio.sleep(self.checkpoint_interval_s)
            try:
                await self.offload(checkpoint, self.store, run)
            except OSError:  # a full disk: the journal holds the progress, the settle reports the failure
                log.warning("checkpoint of run %s failed", run.run_id, exc_info=True)

    async def _stop_checkpoint(self, task: asyncio.Task[None]) -> None:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    # -- cancel and interrupt -----------------------------------------------------------------
    async def cancel(self, run_id: str) -> bool:
        """Cancel a live run: keep its partial output, journal `cancel`, free the session at once."""
        return await self._stop(run_id, "cancel")

    async def interrupt(self, run_id: str, cause: str) -> bool:
        """Stop a live run on the server's behalf (kernel restart, shutdown): partial output + marker."""
        return await self._stop(run_id, "interrupt", cause)

    async def _stop(self, run_id: str, kind: Literal["cancel", "interrupt"], cause: str = "unknown") -> bool:
        validate_id(run_id, "run id")
        run = self._runs.get(run_id)
        if run is None:
            self.status.session_of(run_id)  # raises UnknownRun if there never was such a run
            return False
        if run.state != "running":
            return False
        run.state = "cancelling" if kind == "cancel" else "interrupting"
        worker = self.live.worker(run_id)
        if worker is not None:
            worker.phase = run.state
            worker.cancelling_since = time.time()
        self.invalidate_generation(run.session_id)
        await self._stop_backend(run)
        ending = settle.Ending("cancelled") if kind == "cancel" else settle.Ending("interrupted", known_cause(cause))
        try:
            await self.offload(self.ending.stopped, run, ending)
        finally:
            self._finish(run, LIFECYCLE[ending.outcome])
        return True

    async def _stop_backend(self, run: Run) -> None:
        """Interrupt the backend and give its turn `cancel_grace_s` to return; then abandon it."""
        try:
            await asyncio.wait_for(run.backend.interrupt(run.run_id), self.cancel_grace_s)
        except Exception:  # a backend that cannot even be interrupted is abandoned below
            log.exception("interrupt of run %s failed", run.run_id)
        if run.task is not None and not run.task.done():
            done, _ = await asyncio.wait({run.task}, timeout=self.cancel_grace_s)
            if not done:
                log.warning("run %s ignored interrupt for %.1fs; abandoning it", run.run_id, self.cancel_grace_s)
                run.task.cancel()
        run.sink.close()

    async def interrupt_bound(self, kernel_id: str, cause: str = "kernel_restart") -> list[str]:
        """Interrupt every live run bound to this kernel (whoever started it); returns their run ids."""
        bound = [r.run_id for r in list(self._runs.values()) if r.notebook and r.notebook.kernel_id == kernel_id and r.state == "running"]
        for run_id in bound:
            await self.interrupt(run_id, cause)
        return bound

    async def drain(self, timeout_s: float) -> list[str]:
        """Refuse new runs, wait up to `timeout_s` for active ones, interrupt the rest (`server_shutdown`)."""
        self.draining = True
        self.space.cancel_all()
        pending = [r.done.wait() for r in self._runs.values()]
        if pending:
            await asyncio.wait([asyncio.ensure_future(p) for p in pending], timeout=timeout_s)
        left = [r.run_id for r in list(self._runs.values()) if r.state == "running"]
        for run_id in left:
            await self.interrupt(run_id, "server_shutdown")
        return left

    # -- retry and undo ------------------------------------------------------------------------
    async def retry(self, session_id: str) -> Run:
        """Rerun the last user turn, dropping its previous answer or interrupted marker."""
        def prepare(session: Session) -> tuple[str, list[dict[str, Any]]]:
            idx = settle.last_user_index(session)
            user = session.messages[idx]
            settle.truncate_turn(session, idx)
            return str(user.get("content") or ""), list(user.get("attachments") or [])

        return await self.start_run(session_id, None, prepare=prepare)

    async def continue_turn(self, session_id: str, *, notebook: NotebookBinding | None = None) -> tuple[Run, str]:
        """Continue the last interrupted or cancelled turn as the rest of its answer (runs/continuation.py);
        returns the new run and the id of the run it continues."""
        prepare = continuation.Prepare()
        run = await self.start_run(session_id, None, notebook=notebook, prepare=prepare)
        return run, str(prepare.continues)

    async def undo(self, session_id: str) -> Session:
        """Remove the last turn (its user row and everything after it)."""
        validate_id(session_id, "session id")
        return await self.offload(undo_last_turn, self.store, self.recovery, self.live.is_live, session_id)

    # -- sessions: edits that must not race a run ---------------------------------------------
    async def rename_session(self, session_id: str, title: str) -> Session:
        """Rename under the session lock (save first: a failed save leaves the session as it was)."""
        return await self.edit_session(session_id, {"title": title})

    async def edit_session(self, session_id: str, changes: dict[str, str | None]) -> Session:
        """Change title, model or notebook binding under the session lock; the next turn uses them.

        `changes` names only fields of `EDITABLE`; a running turn keeps what it started with.
        """
        validate_id(session_id, "session id")
        unknown = set(changes) - EDITABLE
        if unknown:
            raise ValueError(f"not editable: {sorted(unknown)}")
        return await self.offload(edit_fields, self.store, session_id, changes)

    async def delete_session(self, session_id: str, *, corrupt: bool = False) -> None:
        """Delete a session and its journals, all or nothing; refused while it has a live run.

        The liveness check and the delete happen inside one hold of the session lock,
        the lock admission takes too: a run admitted meanwhile is seen, never deleted live
        (deletion.py). `corrupt=True` also deletes a sidecar that cannot be read.
        """
        validate_id(session_id, "session id")
        await self.offload(delete_session_now, self.store, self.journals, self.live.is_live, session_id, corrupt=corrupt)

    def active_runs(self) -> list[Run]:
        return list(self._runs.values())

    # -- bookkeeping ----------------------------------------------------------------------------
    def _finish(self, run: Run, lifecycle: str) -> None:
        run.state = "settled"
        loop = asyncio.get_running_loop()
        self._forget(run, loop)
        self.status.remember(run.run_id, run.session_id)
        if self.seal_journals:
            loop.run_in_executor(self.sealer, self._seal, run)
        run.done.set()
        self.on_lifecycle(lifecycle, self._describe(run))
        self.queue.on_settled(run.session_id)

    def _seal(self, run: Run) -> None:
        """Compress the settled run's journal: its terminal row is written and its writer closed."""
        try:
            self.journals.seal(run.session_id, run.run_id)
        except Exception:  # the live form stays readable; a later collection seals it
            log.exception("could not compress the journal of run %s", run.run_id)

    def _forget(self, run: Run, loop: asyncio.AbstractEventLoop) -> None:
        self.live.unregister_worker(run.run_id)
        self.live.unregister_stream(run.run_id)
        self._runs.pop(run.run_id, None)
        self.journals.close_writer(run.session_id, run.run_id)
        loop.call_soon_threadsafe(self.observers.release, run.run_id, 30.0, loop.call_later)

    def _describe(self, run: Run) -> dict[str, Any]:
        return {
            "run_id": run.run_id, "session_id": run.session_id, "backend": run.backend.name,
            "kernel_id": run.notebook.kernel_id if run.notebook else None,
            "duration_s": round(time.time() - run.started_at, 3),
        }
