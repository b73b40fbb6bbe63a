"""Repair a session whose run died: turn its journal back into a settled, honest transcript.

A turn is stale when its session still says it is pending, but no worker or
stream of this process runs it. Repair re-checks that under the session lock
(taken non-blocking, so a caller that already holds it never deadlocks) and
then settles the turn one of four ways:

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
from typing import Any

import orjson

from . import markers
from .evidence import Evidence, TerminalError, read_evidence, recoverable_terminal_error
from .ids import is_valid_id
from .journal import Journals
from .journal.reader import gc_paused
from .liveness import LiveRuns
from .store import Session, SessionStore
from .transcript import Fold, append_to_context, context_projection

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
    if session.pending_user_message or session.active_stream_id or not session.messages:
        return False
    tail = session.messages[-1]
    if not markers.is_interrupted_marker(tail):
        return False
    for row in reversed(session.messages[:-1]):
        if row.get("role") == "user" and not row.get("_error"):
            return bool(row.get("content") == user_text)
    return False


class Recovery:
    def __init__(
        self,
        store: SessionStore,
        journals: Journals,
        live: LiveRuns,
        *,
        core_dir: Path | None = None,
        process_started_at: float | None = None,
        policy: RecoveryPolicy = RecoveryPolicy(),
    ) -> None:
        self.store = store
        self.journals = journals
        self.live = live
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
        return session.is_pending and not self.live.is_live(str(session.active_stream_id))

    def core_transcript_path(self, session: Session) -> Path | None:
        if self.core_dir is None:
            return None
        return self.core_dir / f"session_{session.session_id}.json"

    def classify_cause(self, session: Session, stream_id: str | None) -> str:
        started = _valid_ts(session.pending_started_at)
        if started is not None and started < self.process_started_at:
            return "server_restart"
        if stream_id and self.live.worker(stream_id) is not None:
            return "unknown"
        return "lost_worker" if stream_id else "unknown"

    def is_old_enough(self, session: Session) -> bool:
        """A turn from before this process started is stale at once; otherwise after the grace period."""
        started = _valid_ts(session.pending_started_at)
        if started is None or started < self.process_started_at:
            return True
        return time.time() - started >= self.policy.grace_s

    # -- repair -----------------------------------------------------------------------------
    def repair_stale_pending(self, session: Session, *, wait_s: float = 0.0) -> bool:
        """Settle a stale pending turn; False if it is not stale or the session lock stayed busy.

        `wait_s` > 0 waits that long for the lock (readers; never a holder of the lock),
        then repairs the session as the previous holder left it.
        """
        stream = session.active_stream_id
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
    ) -> bool:
        """Settle the pending turn (the caller holds the session lock). False if it must not be touched."""
        if not session.pending_user_message:
            return False
        if stream_id_for_recheck is not None:
            if session.active_stream_id != stream_id_for_recheck:
                return False  # the turn moved on (new run, or the id rotated)
            if require_stream_dead and self.live.is_live(stream_id_for_recheck):
                return False
        stream = stream_id_for_recheck or session.active_stream_id
        if stream is not None and not is_valid_id(stream):
            stream = None  # a garbled or planted id names no journal: settle with what the session holds
        cause = cause or self.classify_cause(session, stream)
        with gc_paused():  # one bounded pass over possibly many rows: no collection halfway
            evidence = read_evidence(self.journals, session.session_id, stream) if stream else Evidence()
            core = None if session.messages else _core_messages(core_path or self.core_transcript_path(session))
            if core is not None:
                self._settle_from_core(session, core, stream, evidence)
            elif evidence.completed:
                self._settle_completed(session, stream, evidence)
            else:
                self._settle_interrupted(session, stream, evidence, cause)
        clear_pending(session)
        self.store.save(session, touch=False)
        return True

    # -- the outcomes -----------------------------------------------------------------------
    def _settle_completed(self, session: Session, stream: str | None, evidence: Evidence) -> None:
        turn = self._current_user_turn(session, tail_only=False)
        if turn is None:
            turn = append_recovered_user_turn(session)
        if stream:
            Fold(session, stream, turn, dedupe=True).feed(evidence.rows)

    def _settle_interrupted(self, session: Session, stream: str | None, evidence: Evidence, cause: str) -> None:
        turn = append_recovered_user_turn(session)
        output, terminal = self._recover_output(session, stream, evidence, turn, dedupe=False)
        if terminal:
            return
        pending = bool(stream) and not output and not evidence.sealed_without_output
        marker = markers.interrupted_marker(cause, recovered_output=output, pending_retry=pending)
        if pending and stream:
            markers.arm_retry(marker, stream)
        session.messages.append(marker)

    def _settle_from_core(
        self, session: Session, core: dict[str, Any], stream: str | None, evidence: Evidence
    ) -> None:
        session.messages = [dict(m) for m in core["messages"] if isinstance(m, dict)]
        session.tool_calls = [dict(c) for c in core.get("tool_calls") or [] if isinstance(c, dict)]
        for key in ("input_tokens", "output_tokens", "estimated_cost"):
            if core.get(key) is not None:
                setattr(session, key, core[key])
        if not session.context_messages:
            session.context_messages = [p for p in map(context_projection, session.messages) if p]
        terminal_error = recoverable_terminal_error(evidence, session.session_id, stream) if stream else None
        turn = self._current_user_turn(session, tail_only=False)
        if turn is None:
            if not (evidence.has_visible_output or terminal_error):
                return
            turn = append_recovered_user_turn(session)
        output, terminal = self._recover_output(session, stream, evidence, turn, dedupe=True)
        if output and not terminal:
            session.messages.append(
                markers.interrupted_marker(self.classify_cause(session, stream), recovered_output=True)
            )

    def _recover_output(
        self, session: Session, stream: str | None, evidence: Evidence, turn: int, *, dedupe: bool
    ) -> tuple[bool, bool]:
        """Append the journal's output of this turn; returns (output recovered, terminal error recovered)."""
        if not stream:
            return False, False
        output = Fold(session, stream, turn, dedupe=dedupe).feed(evidence.rows)
        terminal_error = recoverable_terminal_error(evidence, session.session_id, stream)
        if terminal_error is None:
            return output, False
        materialize_terminal_error(session, terminal_error, turn)
        return output, True

    def _current_user_turn(self, session: Session, *, tail_only: bool = True) -> int | None:
        """Index of a user row already holding the pending prompt (tail row, or latest user row)."""
        text = session.pending_user_message
        messages = session.messages
        if tail_only:
            if messages and messages[-1].get("role") == "user" and messages[-1].get("content") == text:
                return len(messages) - 1
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if users and messages[users[-1]].get("content") == text:
            return users[-1]
        return None

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
        first_seen = _valid_ts(marker.get("_journal_retry_first_seen_ts")) or now
        if (not is_valid_id(stream) or attempts >= self.policy.retry_max_attempts
                or now - first_seen > self.policy.retry_giveup_s):
            markers.settle_marker(marker, "lost")
            self.store.save(session, touch=False)
            return False
        evidence = read_evidence(self.journals, session.session_id, str(stream))
        turn = next((i for i in range(idx - 1, -1, -1) if session.messages[i].get("role") == "user"), 0)
        output, terminal = self._recover_output(session, str(stream), evidence, turn, dedupe=True)
        if output or terminal:
            idx = move_recovered_rows_above(session, idx)
            if terminal:
                remove_message(session, idx)
            else:
                markers.settle_marker(marker, "recovered")
            self.store.save(session, touch=False)
            return True
        if evidence.still_arriving:
            return False
        attempts += 1
        if attempts >= self.policy.retry_max_attempts:
            markers.settle_marker(marker, "lost")
        else:
            marker["_journal_retry_attempts"] = attempts
        self.store.save(session, touch=False)
        return False


# -- transcript edits shared by the outcomes ------------------------------------------------------

def clear_pending(session: Session) -> None:
    session.active_stream_id = None
    session.pending_user_message = None
    session.pending_attachments = []
    session.pending_started_at = None


def pending_user_row(session: Session, **tags: Any) -> dict[str, Any]:
    """The pending prompt as a user row: its text, the time it was sent, its attachments, and `tags`."""
    started = _valid_ts(session.pending_started_at)
    row: dict[str, Any] = {
        "role": "user",
        "content": session.pending_user_message or "",
        "timestamp": int(started if started is not None else time.time()),
        **tags,
    }
    if session.pending_attachments:
        row["attachments"] = list(session.pending_attachments)
    return row


def append_recovered_user_turn(session: Session) -> int:
    """Restore the pending prompt as a `_recovered` user row (also into the model's context).

    If the tail already is this prompt, only the context is mirrored.
    """
    row = pending_user_row(session, _recovered=True)
    messages = session.messages
    tail = messages[-1] if messages else None
    if not (tail and tail.get("role") == "user" and tail.get("content") == row["content"]):
        messages.append(row)
    append_to_context(session, row)
    return len(messages) - 1


def materialize_terminal_error(session: Session, error: TerminalError, turn: int) -> None:
    """Put the journaled terminal error into the transcript once (idempotent by event id)."""
    if any(m.get("_recovered_event_id") == error.event_id for m in session.messages):
        return
    tags = {
        "_recovered_from_run_journal": True,
        "_recovered_stream_id": error.stream_id,
        "_recovered_event_id": error.event_id,
    }
    for row in session.messages[turn:]:
        if row.get("_error") and row.get("content") == error.message.get("content") and "type" not in row:
            row.update(tags)  # adopt the same error already in this turn
            return
    session.messages.append({**error.message, **tags})


def move_recovered_rows_above(session: Session, marker_idx: int) -> int:
    """Move journal rows appended after a marker to just above it; returns the marker's new index.

    Tool cards follow their rows through an old → new index map.
    """
    messages = session.messages
    tail = list(range(marker_idx + 1, len(messages)))
    moved = [i for i in tail if messages[i].get("_recovered_from_run_journal")]
    stay = [i for i in tail if i not in set(moved)]
    order = list(range(marker_idx)) + moved + [marker_idx] + stay
    _reorder(session, order)
    return marker_idx + len(moved)


def remove_message(session: Session, idx: int) -> None:
    order = [i for i in range(len(session.messages)) if i != idx]
    _reorder(session, order)


def _reorder(session: Session, order: list[int]) -> None:
    new_index = {old: new for new, old in enumerate(order)}
    session.messages = [session.messages[i] for i in order]
    for card in session.tool_calls:
        anchor = card.get("assistant_msg_idx")
        if isinstance(anchor, int) and anchor in new_index:
            card["assistant_msg_idx"] = new_index[anchor]


def _core_messages(path: Path | None) -> dict[str, Any] | None:
    """Hermes Agent's core transcript if it has messages (read only)."""
    if path is None:
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        log.warning("core transcript %s is unreadable: %s", path, exc)
        return None
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and data["messages"]:
        return data
    return None


def _valid_ts(value: Any) -> float | None:
    try:
        ts = float(value)
    except (TypeError, ValueError):
        return None
    return ts if ts > 0 else None


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
