"""How a run's turn ends: fold its journal once, store and save the turn, then journal the terminal row.

The engine (runs/manager.py) decides *when* a turn ends (the worker returned, a stop came in, the
worker died); this module does the ending itself, in the order docs/architecture.md gives: the
session is saved before the terminal row is journaled, so whoever sees the row finds the turn stored.
Everything here runs off the event loop (it fsyncs).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Final

from ..agents.base import TurnResult
from ..fsio import is_disk_full
from ..journal import Journals
from ..recovery.repair import Recovery
from ..sessions.store import Session, SessionStore
from ..transcript import Transcript, TranscriptFold, Verdict
from . import settle
from .binding import sync_session_split
from .diskfull import DISK_FULL, SpaceWaiter
from .run import Run

log = logging.getLogger(__name__)

#: The lifecycle event (jupyter_events) of each outcome.
LIFECYCLE: Final[dict[str, str]] = {
    "completed": "run.finished", "errored": "run.failed", "cancelled": "run.cancelled", "interrupted": "run.interrupted",
}


class RunEnding:
    """Settles runs: the one fold, the stored turn, the saved session, the terminal row."""

    def __init__(
        self, store: SessionStore, journals: Journals, recovery: Recovery, space: SpaceWaiter,
        generation: Callable[[str], int], on_lifecycle: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self.store = store
        self.journals = journals
        self.recovery = recovery
        self.space = space
        self._generation = generation
        self._on_lifecycle = on_lifecycle

    def result(self, run: Run, result: TurnResult) -> str:
        """Settle what the backend returned; the lifecycle event to announce."""
        ending = settle.ending_of(result)
        event, payload, transcript = self._ended(run, ending, result)
        extra: dict[str, Any] = {}
        if ending.outcome == "interrupted":
            self._stopped_locked(run, transcript, ending, result)
        elif ending.outcome == "errored":
            extra = self._failed(run, transcript, result, ending)
        else:
            self._completed(run, transcript, result)
        self.journal_terminal(run, event, {**payload, **extra})
        return LIFECYCLE[ending.outcome]

    def stopped(self, run: Run, ending: settle.Ending) -> None:
        """Settle a cancel or an interrupt (the backend has been stopped or abandoned)."""
        terminal: tuple[str, dict[str, Any]] | None = None
        try:
            event, payload, rows = self._ended(run, ending, None)
            terminal = event, payload
            self._stopped_locked(run, rows, ending, None)
        finally:
            if terminal is None:  # the journal could not even be folded: the row is worded without it
                self.journal_ending(run, ending, None)
            else:
                self.journal_terminal(run, *terminal)

    def last_resort(self, run: Run) -> bool:
        """The worker exits without having settled: recovery settles from the journal. True if it did.

        After a full disk the settle is retried once space returns (diskfull.py).
        """
        run.sink.close()  # the turn is over: held text first, and a refusal must not stop the ending
        if run.failure == DISK_FULL:
            settled = self.space.try_now(run.session_id, run.run_id)
            self.journal_ending(run, settle.DISK_FULL_ENDING, self.transcript_of(run, "unknown"))
            return settled
        settled = False
        try:
            session = self.store.load(run.session_id)
            settled = self.recovery.settle_last_resort(session, run.run_id, cancelling=run.state == "cancelling")
        except Exception:  # the next read repairs it; nothing more to do here
            log.exception("last-resort settle of run %s failed", run.run_id)
        ending = settle.Ending("interrupted", "lost_worker", message="the worker exited unexpectedly")
        self.journal_ending(run, ending, self.transcript_of(run, "lost_worker"))
        return settled

    def fold_of(self, run: Run) -> TranscriptFold:
        """The run's journal folded (streaming), still open: the settle closes it with its terminal row."""
        run.sink.flush()  # text the stream redactor still holds belongs to the transcript
        folder = TranscriptFold(run.run_id, run.session_id)
        try:
            folder.feed_chunks(self.journals.iter_row_chunks(run.session_id, run.run_id))
        except FileNotFoundError:
            pass
        return folder

    def transcript_of(self, run: Run, cause: str = "unknown") -> Transcript:
        """The run's journal folded and closed as if it ended now (the last-resort endings' wording)."""
        return self.fold_of(run).snapshot(Verdict(cause=cause))

    def journal_ending(self, run: Run, ending: settle.Ending, transcript: Transcript | None) -> None:
        """Journal the run's terminal row (worded by the settle module, marker included)."""
        event, payload = settle.terminal_row(run.session_id, ending, transcript, None)
        self.journal_terminal(run, event, {**payload, **_autonomy_of(run)})

    def journal_terminal(self, run: Run, event: str, payload: dict[str, Any]) -> None:
        try:
            run.sink.append_terminal(event, payload)
        except (OSError, ValueError) as exc:
            log.exception("could not journal the terminal event of run %s", run.run_id)
            run.channel.failure = DISK_FULL if is_disk_full(exc) else "unjournaled"

    # -- the three settles ------------------------------------------------------------------------
    def _ended(
        self, run: Run, ending: settle.Ending, result: TurnResult | None
    ) -> tuple[str, dict[str, Any], Transcript]:
        """The terminal row this ending journals, and the run's one fold closed by it (what settle stores)."""
        fold = self.fold_of(run)
        event, payload = settle.terminal_row(run.session_id, ending, fold, result)
        payload = {**payload, **_autonomy_of(run)}
        return event, payload, settle.ended(fold, event, dict(payload), run.channel.last_seq + 1)

    def _completed(self, run: Run, rows: Transcript, result: TurnResult) -> None:
        with self.store.lock(run.session_id):
            session = self.store.load(run.session_id)
            if session.active_run_id != run.run_id:
                return  # repaired or superseded meanwhile: the journal keeps this run's output
            self._sync_split(run, session, result)
            settle.settle_completed(session, run.run_id, rows, context=result.context, replace_context=result.replace_context)
            settle.add_usage(session, result.usage)
            self.store.save(session)

    def _failed(self, run: Run, rows: Transcript, result: TurnResult, ending: settle.Ending) -> dict[str, Any]:
        """The error settle; returns what its terminal row must carry (the turn's rows if the save failed)."""
        detail = {"detail": result.error.detail} if result.error and result.error.detail else {}
        with self.store.lock(run.session_id):
            session = self.store.load(run.session_id)
            if session.active_run_id != run.run_id:
                return detail
            self._sync_split(run, session, result)
            return {**settle.settle_error(
                self.store, session, run.run_id, rows, message=ending.message or "", error_type=ending.error_kind,
                replaced_context=result.context if result.replace_context else None,
            ), **detail}

    def _stopped_locked(
        self, run: Run, rows: Transcript, ending: settle.Ending, result: TurnResult | None
    ) -> None:
        with self.store.lock(run.session_id):
            session = self.store.load(run.session_id)
            if session.active_run_id != run.run_id:
                return
            if result is not None:
                self._sync_split(run, session, result)
            if ending.outcome == "cancelled":
                settle.settle_cancelled(session, run.run_id, rows)
            else:
                settle.settle_interrupted(session, run.run_id, rows, ending.cause)
            self.store.save(session)

    def _sync_split(self, run: Run, session: Session, result: TurnResult) -> None:
        split = sync_session_split(
            session, started_id=run.started_backend_id, reported_id=result.backend_session_id,
            run_generation=run.generation, current_generation=self._generation(run.session_id),
            history_len=len(session.context_messages), compacted=result.replace_context,
        )
        if split.persisted:
            self._on_lifecycle("session.binding_moved", {
                "session_id": run.session_id, "from": run.started_backend_id, "to": split.backend_session_id,
            })


def _autonomy_of(run: Run) -> dict[str, Any]:
    """`{autonomy}` for a notebook run's terminal row (its cell's header names it), else nothing."""
    return {"autonomy": run.autonomy} if run.notebook is not None and run.autonomy else {}
