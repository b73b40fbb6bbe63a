"""Repair a session whose run died: turn its journal back into a settled, honest transcript.

A turn is stale when its session still says it is pending, but no worker or
stream of this process runs it. Repair re-checks that under the session lock
(taken non-blocking, so a caller that already holds it never deadlocks) and
then judges it from the journal's evidence and hands the verdict to the settler
it was given (`runs/settle.py`, the one place that settles; passed in by the
composition root so recovery never imports the run engine above it), which ends
it one of these ways:

- the journal says the run completed: its output, no marker;
- the session has messages (or none and no core transcript): the recovered
  user turn, the journal's output, then an interrupted marker;
- the session is empty and Hermes Agent's core transcript has messages: sync
  from it, plus any journal output the core lacks.

Every full read also retries a pending-retry marker (lazy retry). Repair is
idempotent: running it twice changes nothing the second time.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from .. import markers
from .evidence import Evidence, RecoveryVerdict, read_evidence
from ..fsio import read_capped
from ..ids import is_valid_id
from ..journal import Journals
from ..journal.reader import gc_paused
from .liveness import LiveRuns
from ..sessions.store import CorruptSession, Session, SessionStore, UnknownSession, valid_ts
from ..transcript import Verdict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecoveryPolicy:
    #: Within one process lifetime, a pending turn younger than this is left alone.
    grace_s: float = 30.0
    #: How long a read waits for another thread's repair of the same session (the start-up scan).
    read_wait_s: float = 10.0
    retry_max_attempts: int = 12
    retry_giveup_s: float = 24 * 3600


def pending_marker_index(messages: list[dict[str, Any]]) -> int | None:
    """The pending-retry marker of the latest turn, scanning back until a normal assistant row."""
    for idx in range(len(messages) - 1, -1, -1):
        row = messages[idx]
        if row.get("_pending_journal_recovery") is True:
            return idx
        if row.get("role") == "assistant" and not row.get("_error"):
            return None
    return None


def has_pending_journal_retry(session: Session) -> bool:
    return pending_marker_index(session.messages) is not None


def can_supersede_recovery_marker(session: Session, user_text: str) -> bool:
    """May a worker that finished after its turn was repaired replace the marker?

    Only if nothing is pending, the tail is an interrupted marker, and the user
    turn right above it is the one this worker answered.
    """
    if session.pending_user_message or session.active_run_id or not session.messages:
        return False
    tail = session.messages[-1]
    if not markers.is_interrupted_marker(tail):
        return False
    for row in reversed(session.messages[:-1]):
        if row.get("role") == "user" and not row.get("_error"):
            return bool(row.get("content") == user_text)
    return False


class Settler(Protocol):
    """The endings recovery hands its verdicts to (the `runs.settle` module implements them)."""

    def settle_recovered(self, session: Session, run_id: str | None, verdict: RecoveryVerdict) -> None: ...

    def mark_turn(
        self, session: Session, run_id: str | None, marker: dict[str, Any], user_idx: int | None = None
    ) -> None: ...

    def promote_pending_marker(self, session: Session, idx: int, run_id: str, evidence: Evidence) -> bool: ...


class Recovery:
    def __init__(
        self,
        store: SessionStore,
        journals: Journals,
        live: LiveRuns,
        *,
        settler: Settler,
        core_dir: Path | None = None,
        process_started_at: float | None = None,
        policy: RecoveryPolicy = RecoveryPolicy(),
    ) -> None:
        self.store = store
        self.journals = journals
        self.live = live
        self.settler = settler
        self.core_dir = core_dir
        self.process_started_at = time.time() if process_started_at is None else process_started_at
        self.policy = policy

    # -- reading ----------------------------------------------------------------------------
    def get_session(self, session_id: str, *, metadata_only: bool = False) -> Session:
        """The session, repaired first if its turn is stale; a pending-retry marker is retried.

        A read waits (up to `read_wait_s`) for a repair another thread is doing,
        so the first read after a restart never shows the dead turn pending. A
        session whose repair still could not run is not kept in the cache, so the
        next read tries again. What is returned is what the store holds after the
        repair (a failed save leaves the sidecar as it was on disk).
        """
        session = self.store.cached(session_id) or self.store.load(session_id)
        if metadata_only:
            return session
        repaired = self.repair_stale_pending(session, wait_s=self.policy.read_wait_s)
        session = self.store.cached(session_id) or self.store.load(session_id)
        if not repaired and has_pending_journal_retry(session):
            self.retry_journal_recovery_in_place(session)
            session = self.store.cached(session_id) or self.store.load(session_id)
        if not repaired and self._looks_stale(session):
            self.store.evict(session_id)
        return session

    def _looks_stale(self, session: Session) -> bool:
        return session.is_pending and not self.live.is_live(str(session.active_run_id))

    def core_transcript_path(self, session: Session) -> Path | None:
        if self.core_dir is None:
            return None
        return self.core_dir / f"session_{session.session_id}.json"

    def verdict(self, session_id: str, run_id: str) -> Verdict:
        """The server's word on a run that is not live and whose journal has no terminal row.

        The session is repaired first (a stale turn gets its marker now), so the
        cause is the one the session shows: notebook recovery and the session agree.
        """
        try:
            session = self.get_session(session_id)
        except (UnknownSession, CorruptSession):
            return Verdict()
        return judge_dead_run(session, run_id, self.process_started_at)

    def classify_cause(self, session: Session, stream_id: str | None) -> str:
        started = valid_ts(session.pending_started_at)
        if started is not None and started < self.process_started_at:
            return "server_restart"
        if stream_id and self.live.worker(stream_id) is not None:
            return "unknown"
        return "lost_worker" if stream_id else "unknown"

    def is_old_enough(self, session: Session) -> bool:
        """A turn from before this process started is stale at once; otherwise after the grace period."""
        started = valid_ts(session.pending_started_at)
        if started is None or started < self.process_started_at:
            return True
        return time.time() - started >= self.policy.grace_s

    # -- repair -----------------------------------------------------------------------------
    def repair_stale_pending(self, session: Session, *, wait_s: float = 0.0) -> bool:
        """Settle a stale pending turn; False if it is not stale or the session lock stayed busy.

        `wait_s` > 0 waits that long for the lock (readers; never a holder of the lock),
        then repairs the session as the previous holder left it.
        """
        stream = session.active_run_id
        if not session.pending_user_message or not stream:
            return False
        if self.live.is_live(stream) or not is_valid_id(session.session_id) or not self.is_old_enough(session):
            return False
        lock = self.store.lock(session.session_id)
        waited = not lock.acquire(blocking=False)
        if waited and (wait_s <= 0 or lock.held_here() or not lock.acquire(timeout=wait_s)):
            return False
        try:
            if waited:
                session = self.store.load(session.session_id)  # as the other holder left it
            return self.apply_core_sync_or_error_marker(session, stream)
        except Exception:  # a repair must never break reading the session
            log.exception("repair of session %s failed; it stays pending", session.session_id)
            self.store.evict(session.session_id)
            return False
        finally:
            lock.release()

    def settle_last_resort(self, session: Session, run_id: str, *, cancelling: bool) -> bool:
        """The worker is exiting without having settled its turn: settle it now.

        A cancel in progress settles the turn itself (partial + cancel marker), so
        this does nothing then.
        """
        if cancelling:
            return False
        core_path = self.core_transcript_path(session)
        with self.store.lock(session.session_id):
            return self.apply_core_sync_or_error_marker(
                session, run_id, core_path=core_path, require_stream_dead=False
            )

    def apply_core_sync_or_error_marker(
        self,
        session: Session,
        stream_id_for_recheck: str | None = None,
        *,
        core_path: Path | None = None,
        require_stream_dead: bool = True,
        cause: str | None = None,
        disk_full: bool = False,
    ) -> bool:
        """Settle the pending turn (the caller holds the session lock). False if it must not be touched.

        `disk_full`: the run was cut off by a full disk; its settled turn ends with the note saying so.
        """
        if not session.pending_user_message:
            return False
        if stream_id_for_recheck is not None:
            if session.active_run_id != stream_id_for_recheck:
                return False  # the turn moved on (new run, or the id rotated)
            if require_stream_dead and self.live.is_live(stream_id_for_recheck):
                return False
        stream = stream_id_for_recheck or session.active_run_id
        if stream is not None and not is_valid_id(stream):
            stream = None  # a garbled or planted id names no journal: settle with what the session holds
        cause = cause or self.classify_cause(session, stream)
        with gc_paused():  # one bounded pass over possibly many rows: no collection halfway
            evidence = read_evidence(self.journals, session.session_id, stream) if stream else Evidence()
            core = None if session.messages else _core_messages(core_path or self.core_transcript_path(session))
            self.settler.settle_recovered(session, stream, RecoveryVerdict(evidence, cause, core, disk_full))
            del evidence, core  # the fold's rows are merged: free them before the save serializes the session
        self.store.save(session, touch=False)
        return True

    # -- lazy retry ---------------------------------------------------------------------------
    def retry_journal_recovery_in_place(self, session: Session) -> bool:
        """Retry a pending-retry marker: promote it if the journal now has output, else charge an attempt.

        Takes the session lock non-blocking: concurrent readers skip instead of
        racing, and holders of the lock never deadlock.
        """
        lock = self.store.lock(session.session_id)
        if not lock.acquire(blocking=False):
            return False
        try:
            return self._retry_locked(session)
        finally:
            lock.release()

    def _retry_locked(self, session: Session) -> bool:
        idx = pending_marker_index(session.messages)
        if idx is None:
            return False
        marker = session.messages[idx]
        stream = marker.get("_journal_retry_stream_id")
        now = time.time()
        attempts = _int(marker.get("_journal_retry_attempts"))
        first_seen = valid_ts(marker.get("_journal_retry_first_seen_ts")) or now
        if (not is_valid_id(stream) or attempts >= self.policy.retry_max_attempts
                or now - first_seen > self.policy.retry_giveup_s):
            markers.settle_marker(marker, "lost")
            self.settler.mark_turn(session, stream if isinstance(stream, str) else None, marker)
            self.store.save(session, touch=False)
            return False
        evidence = read_evidence(self.journals, session.session_id, str(stream))
        if self.settler.promote_pending_marker(session, idx, str(stream), evidence):
            self.store.save(session, touch=False)
            return True
        if evidence.still_arriving:
            return False
        attempts += 1
        if attempts >= self.policy.retry_max_attempts:
            markers.settle_marker(marker, "lost")
        else:
            marker["_journal_retry_attempts"] = attempts
        self.settler.mark_turn(session, str(stream), marker)
        self.store.save(session, touch=False)
        return False


def judge_dead_run(session: Session, run_id: str, process_started_at: float) -> Verdict:
    """What a session says about how a run without a terminal row ended (read-only).

    Its marker's cause when the session already settled that run; while the turn is
    still pending, the cause repair would give it (server_restart if it began before
    this process, else lost_worker).
    """
    for row in reversed(session.messages):
        if markers.is_interrupted_marker(row) and run_id in (row.get("_run_id"), row.get("_journal_retry_stream_id")):
            return Verdict(cause=markers.known_cause(row.get("interruption_cause")))
    if session.last_run_id == run_id and session.messages and markers.is_interrupted_marker(session.messages[-1]):
        return Verdict(cause=markers.known_cause(session.messages[-1].get("interruption_cause")))  # an untagged marker
    if session.active_run_id == run_id:
        started = valid_ts(session.pending_started_at)
        return Verdict(cause="server_restart" if started is not None and started < process_started_at else "lost_worker")
    return Verdict()


#: The largest Hermes core transcript recovery reads (a bigger one is left unread, with a warning).
CORE_TRANSCRIPT_CAP = 64 << 20


def _core_messages(path: Path | None) -> dict[str, Any] | None:
    """Hermes Agent's core transcript if it has messages (read only)."""
    if path is None:
        return None
    try:  # Hermes' own file: opened like ours (no link, no FIFO, a cap: docs/journal.md "Hostile files")
        data = orjson.loads(read_capped(path, CORE_TRANSCRIPT_CAP))
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:  # a link, a FIFO, over the cap, not JSON
        log.warning("core transcript %s is unreadable: %s", path, exc)
        return None
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and data["messages"]:
        return data
    return None


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
