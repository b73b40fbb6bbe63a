"""All run journals of a state dir: `<root>/<sid>/<run_id>.jsonl`, their writers and the group committer."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .. import events
from ..events import JournalRow
from ..fsio import fsync_dir, remove_tree_nofollow
from ..ids import validate_id
from .reader import JournalRead, ReadStats, _scan_tail, _tail_rows, iter_rows, read, read_rows
from .writer import DEFAULT_MAX_EVENT_BYTES, DURABILITY_POLICIES, Appended, Durability, GroupCommitter, RunJournal

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What the tail of a journal says about its run, without reading the whole file."""

    exists: bool
    size: int
    last_seq: int
    terminal: JournalRow | None


class Journals:
    """All run journals under one directory: `<root>/<sid>/<run_id>.jsonl`.

    Owns the open writers and the process's group committer.
    """

    def __init__(
        self,
        root: Path,
        *,
        durability: Durability = "batch",
        window_s: float = 0.02,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        if durability not in DURABILITY_POLICIES:
            raise ValueError(f"unknown durability policy {durability!r}")
        self.root = root
        self.durability = durability
        self.max_event_bytes = max_event_bytes
        self.committer = GroupCommitter(window_s)
        self._writers: dict[tuple[str, str], RunJournal] = {}
        self._lock = threading.Lock()

    def path(self, session_id: str, run_id: str) -> Path:
        return self.root / validate_id(session_id, "session id") / f"{validate_id(run_id, 'run id')}.jsonl"

    def writer(self, session_id: str, run_id: str) -> RunJournal:
        """The open writer of a run (opened, and re-seeded from disk, on first use)."""
        key = (session_id, run_id)
        with self._lock:
            journal = self._writers.get(key)
            if journal is None or journal.closed:
                journal = RunJournal(
                    self.path(session_id, run_id), session_id, run_id, durability=self.durability,
                    committer=self.committer, max_event_bytes=self.max_event_bytes,
                )
                self._writers[key] = journal
            return journal

    def append(self, session_id: str, run_id: str, event: str, payload: dict[str, Any]) -> Appended:
        return self.writer(session_id, run_id).append(event, payload)

    def close_writer(self, session_id: str, run_id: str) -> None:
        with self._lock:
            journal = self._writers.pop((session_id, run_id), None)
        if journal is not None:
            journal.close()

    def read(self, session_id: str, run_id: str, *, after_seq: int = 0, limit: int | None = None) -> JournalRead:
        return read(self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, limit=limit)

    def read_rows(
        self, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
    ) -> list[JournalRow]:
        """Every identity-checked row, as a list; raises FileNotFoundError when the journal does not exist yet."""
        return read_rows(self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, stats=stats)

    def iter_rows(
        self, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
    ) -> Iterator[JournalRow]:
        """Rows in order; raises FileNotFoundError when the journal does not exist yet."""
        return iter_rows(self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, stats=stats)

    def summary(self, session_id: str, run_id: str) -> RunSummary:
        """Last seq and authoritative terminal row, from the file's tail."""
        path = self.path(session_id, run_id)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return RunSummary(False, 0, 0, None)
        try:
            size = os.fstat(fd).st_size
            tail = _tail_rows(fd, size, session_id, run_id)
            # The last chunk usually holds the last row; only a huge last row needs the wider scan.
            last_seq = tail[-1].seq if tail else _scan_tail(fd, session_id, run_id)[0]
        finally:
            os.close(fd)
        return RunSummary(True, size, last_seq, events.authoritative_terminal(tail))

    def writer_alive(self, session_id: str, run_id: str) -> bool:
        """True while some process (this one included) holds the run's journal open for writing."""
        try:
            fd = os.open(self.path(session_id, run_id), os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def run_ids(self, session_id: str) -> list[str]:
        folder = self.root / validate_id(session_id, "session id")
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return []
        return sorted(n[: -len(".jsonl")] for n in names if n.endswith(".jsonl"))

    def delete_session(self, session_id: str) -> None:
        """Remove every journal of a session (its writers are closed first); links are removed, not followed."""
        detached = self.detach_session(session_id)
        if detached is not None:
            self.purge_detached(detached)

    def detach_session(self, session_id: str) -> Path | None:
        """Close the session's writers and move `runs/<sid>` aside in one rename; None if it has none.

        Whatever `runs/<sid>` is (a folder, or a planted link) only the entry itself
        moves: a link is never followed. `reattach_session` undoes it.
        """
        folder = self.root / validate_id(session_id, "session id")
        with self._lock:
            for key in [k for k in self._writers if k[0] == session_id]:
                self._writers.pop(key).close()
        if not os.path.lexists(folder):
            return None
        detached = self.root / f".deleted-{session_id}-{uuid.uuid4().hex[:8]}"
        os.rename(folder, detached)
        fsync_dir(self.root)
        return detached

    def reattach_session(self, session_id: str, detached: Path) -> None:
        os.rename(detached, self.root / validate_id(session_id, "session id"))
        fsync_dir(self.root)

    def purge_leftovers(self) -> None:
        """Empty what deletes interrupted by a crash left moved aside (start-up)."""
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return
        for name in names:
            if name.startswith(".deleted-"):
                self.purge_detached(self.root / name)

    def purge_detached(self, detached: Path) -> None:
        """Remove a detached folder; what is left after a failure is invisible and removed on the next try."""
        try:
            remove_tree_nofollow(detached)
            fsync_dir(self.root)
        except OSError:
            log.exception("could not remove the deleted journals at %s", detached)

    def close(self) -> None:
        with self._lock:
            writers = list(self._writers.values())
            self._writers.clear()
        for journal in writers:
            journal.close()
        self.committer.stop()
