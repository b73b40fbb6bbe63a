"""Journal retention: compress settled journals, prune old ones the sessions no longer need.

A run's journal is needed while its session may still have to read it: the
session is pending on the run (recovery will settle from it), a pending-retry
marker points at it (lazy retry reads it), a writer holds it, or the session
cannot be read at all (nothing is decided from a file we cannot read). Every
other journal belongs to a settled turn whose session sidecar already shows the
whole transcript, so it may be compressed, and pruned by age (`max_age_days`)
or, oldest first, until all journals fit `max_total_bytes`. The decision is
taken under the session's lock, and a live journal is removed only while this
holds its writer `flock`, so a turn cannot become pending on it meanwhile.
The last run of a session that ended interrupted or cancelled is kept as well:
continuing that turn may read it.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from . import markers
from .journal import Journals, files
from .sessions.store import CorruptSession, Session, SessionStore, UnknownSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetentionPolicy:
    #: Prune settled journals not written for this many days (0: never by age).
    max_age_days: float = 30.0
    #: Prune settled journals, oldest first, while all journals together exceed this (0: no cap).
    max_total_bytes: int = 1 << 30
    #: Compress settled journals that are still in their live form.
    compress: bool = True


@dataclass
class GcReport:
    """What a collection did (or, in a dry run, would do)."""

    dry_run: bool = False
    checked: int = 0
    pruned: int = 0
    compressed: int = 0
    kept_needed: int = 0
    freed_bytes: int = 0
    #: Dry run: the live bytes of the journals it would compress (their compressed size is not known yet).
    compressible_bytes: int = 0
    total_bytes_after: int = 0

    def sentence(self) -> str:
        """A plain summary for a person: what was freed, what was kept and why."""
        freed = _human(self.freed_bytes)
        kept = f" {self.kept_needed} still needed by their sessions were kept." if self.kept_needed else ""
        if self.dry_run:
            squeeze = (
                f" It would also compress {self.compressed} finished journals ({_human(self.compressible_bytes)} now)."
                if self.compressed else ""
            )
            return (
                f"Dry run: removing {self.pruned} of {self.checked} run journals would free {freed}.{squeeze}"
                f"{kept} Nothing was changed."
            )
        if not (self.pruned or self.compressed):
            return (
                f"Nothing to free: {self.checked} run journals checked, {_human(self.total_bytes_after)} in all.{kept}"
            )
        return (
            f"Freed {freed}: removed {self.pruned} and compressed {self.compressed} of {self.checked} run journals."
            f"{kept} Journals now take {_human(self.total_bytes_after)}."
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Journal:
    session_id: str
    run_id: str
    bytes: int
    mtime: float
    sealed: bool


@dataclass
class _Plan:
    prunable: list[_Journal] = field(default_factory=list)
    compressible: list[_Journal] = field(default_factory=list)
    total_bytes: int = 0


def collect(
    store: SessionStore, journals: Journals, policy: RetentionPolicy, *, dry_run: bool = False,
    now: float | None = None,
) -> GcReport:
    """Compress and prune the journals `policy` allows; see the module docstring for what is kept."""
    now = time.time() if now is None else now
    report = GcReport(dry_run=dry_run)
    plan = _Plan()
    for sid in journals.session_ids():
        _plan_session(store, journals, sid, plan, report)
    doomed = _choose(plan, policy, now)
    for entry in doomed:
        freed = entry.bytes if dry_run else _prune(store, journals, entry)
        if freed is not None:
            report.pruned += 1
            report.freed_bytes += freed
            plan.total_bytes -= freed
    if policy.compress:
        gone = {(e.session_id, e.run_id) for e in doomed}
        for entry in plan.compressible:
            if (entry.session_id, entry.run_id) in gone:
                continue
            freed = None if dry_run else _compress(store, journals, entry)
            if dry_run or freed is not None:
                report.compressed += 1
                report.compressible_bytes += entry.bytes
            if freed:
                report.freed_bytes += freed
                plan.total_bytes -= freed
    report.total_bytes_after = plan.total_bytes
    return report


def _plan_session(store: SessionStore, journals: Journals, sid: str, plan: _Plan, report: GcReport) -> None:
    for entry in _journals_of(journals, sid):
        report.checked += 1
        plan.total_bytes += entry.bytes
        if not _settled(store, journals, entry):
            report.kept_needed += 1
            continue
        plan.prunable.append(entry)
        if not entry.sealed:
            plan.compressible.append(entry)


def _journals_of(journals: Journals, sid: str) -> Iterator[_Journal]:
    for run_id in journals.run_ids(sid):
        live = journals.path(sid, run_id)
        for path, sealed in ((files.sealed_path(live), True), (live, False)):
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            yield _Journal(sid, run_id, info.st_size, info.st_mtime, sealed)
            break


def _choose(plan: _Plan, policy: RetentionPolicy, now: float) -> list[_Journal]:
    """Settled journals past the age limit, then the oldest others while the total is over the cap."""
    doomed: list[_Journal] = []
    left = plan.total_bytes
    rest = sorted(plan.prunable, key=lambda e: e.mtime)
    if policy.max_age_days > 0:
        cutoff = now - policy.max_age_days * 86400
        doomed = [e for e in rest if e.mtime < cutoff]
        rest = [e for e in rest if e.mtime >= cutoff]
        left -= sum(e.bytes for e in doomed)
    if policy.max_total_bytes > 0:
        for entry in rest:
            if left <= policy.max_total_bytes:
                break
            doomed.append(entry)
            left -= entry.bytes
    return doomed


def _settled(store: SessionStore, journals: Journals, entry: _Journal) -> bool:
    """True if no reader of the session can still need this run's journal (checked under its lock)."""
    lock = store.lock(entry.session_id)
    if not lock.acquire(blocking=False):
        return False  # someone is working on this session right now
    try:
        return _session_done_with(store, entry.session_id, entry.run_id) and not journals.writer_alive(
            entry.session_id, entry.run_id
        )
    finally:
        lock.release()


def _session_done_with(store: SessionStore, sid: str, run_id: str) -> bool:
    """The session is readable, not pending on the run, and nothing in it still points at its journal."""
    cached = store.cached(sid) is not None
    try:
        session = store.load(sid)
    except (UnknownSession, CorruptSession, OSError, ValueError):
        return False  # no sidecar to show the transcript, or one we cannot read: keep the journal
    finally:
        if not cached:
            store.evict(sid)  # a collection must not fill the cache with every session
    return not _needs(session, run_id)


def _needs(session: Session, run_id: str) -> bool:
    if session.active_stream_id == run_id:
        return True
    for row in session.messages:
        if row.get("_pending_journal_recovery") is True and row.get("_journal_retry_stream_id") == run_id:
            return True
    if session.last_run_id == run_id and session.messages:
        tail = session.messages[-1]
        if markers.is_interrupted_marker(tail) or tail.get("type") == "cancelled":
            return True  # a turn that can be continued
    return False


def _prune(store: SessionStore, journals: Journals, entry: _Journal) -> int | None:
    """Remove both forms, re-checking under the session lock and the journal's own lock."""
    lock = store.lock(entry.session_id)
    if not lock.acquire(blocking=False):
        return None
    try:
        if not _session_done_with(store, entry.session_id, entry.run_id):
            return None
        return files.remove_if_idle(journals.path(entry.session_id, entry.run_id))
    finally:
        lock.release()


def _compress(store: SessionStore, journals: Journals, entry: _Journal) -> int | None:
    lock = store.lock(entry.session_id)
    if not lock.acquire(blocking=False):
        return None
    try:
        return journals.seal_if(
            entry.session_id, entry.run_id, lambda fd: _session_done_with(store, entry.session_id, entry.run_id)
        )
    except OSError:
        log.exception("could not compress the journal of run %s", entry.run_id)
        return None
    finally:
        lock.release()


def _human(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} bytes"
