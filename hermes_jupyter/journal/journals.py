"""All run journals of a state dir: `<root>/<sid>/<run_id>.jsonl` (sealed: `.jsonl.gz`), their writers
and the group committer."""

from __future__ import annotations

import dataclasses
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
from ..fsio import DEFAULT_CAPS, ReadCaps, open_dir_nofollow, remove_tree_at
from ..ids import is_valid_id, validate_id
from . import files
from .reader import (
    ENVELOPE_BYTES, JournalRead, ReadStats, _scan_tail, _tail_rows, iter_row_chunks, iter_rows, read, read_rows,
    sealed_tail, tail_rows_of,
)
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
        caps: ReadCaps = DEFAULT_CAPS,
    ) -> None:
        if durability not in DURABILITY_POLICIES:
            raise ValueError(f"unknown durability policy {durability!r}")
        self.root = root
        #: The line cap never falls below the longest row the writer writes.
        self.caps = dataclasses.replace(caps, journal_line=max(caps.journal_line, max_event_bytes + ENVELOPE_BYTES))
        self.durability = durability
        self.max_event_bytes = max_event_bytes
        self.committer = GroupCommitter(window_s)
        self._writers: dict[tuple[str, str], RunJournal] = {}
        self._lock = threading.Lock()
        #: Summaries of sealed journals (they never change), by (sid, run_id, inode, size).
        self._sealed: dict[tuple[str, str, int, int], RunSummary] = {}

    @property
    def max_row_bytes(self) -> int:
        """The row cap readers apply: the writer's payload cap plus its envelope."""
        return self.max_event_bytes + ENVELOPE_BYTES

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
                    committer=self.committer, max_event_bytes=self.max_event_bytes, max_line=self.caps.journal_line,
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

    def read(
        self, session_id: str, run_id: str, *, after_seq: int = 0, limit: int | None = None,
        max_bytes: int | None = None,
    ) -> JournalRead:
        """A page of rows after a cursor, capped in rows and bytes (see `reader.read`)."""
        extra = {} if max_bytes is None else {"max_bytes": max_bytes}
        return read(
            self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, limit=limit,
            max_row=self.max_row_bytes, caps=self.caps, **extra,
        )

    def read_rows(
        self, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
    ) -> list[JournalRow]:
        """Every identity-checked row, as a list; raises FileNotFoundError when the journal does not exist yet."""
        return read_rows(
            self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, stats=stats,
            max_row=self.max_row_bytes, caps=self.caps,
        )

    def iter_rows(
        self, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
    ) -> Iterator[JournalRow]:
        """Rows in order; raises FileNotFoundError when the journal does not exist yet."""
        return iter_rows(
            self.path(session_id, run_id), session_id, run_id, after_seq=after_seq, stats=stats,
            max_row=self.max_row_bytes, caps=self.caps,
        )

    def iter_row_chunks(
        self, session_id: str, run_id: str, *, stats: ReadStats | None = None
    ) -> Iterator[list[JournalRow]]:
        """Rows in order, a read chunk at a time; raises FileNotFoundError when the journal does not exist yet."""
        return iter_row_chunks(
            self.path(session_id, run_id), session_id, run_id, stats=stats, max_row=self.max_row_bytes, caps=self.caps,
        )

    def summary(self, session_id: str, run_id: str) -> RunSummary:
        """Last seq and authoritative terminal row, from the file's tail (either form)."""
        try:
            opened = files.open_journal(self.path(session_id, run_id), self.caps.sealed_journal)
        except FileNotFoundError:
            return RunSummary(False, 0, 0, None)
        if opened.sealed:
            return self._sealed_summary(session_id, run_id, opened)
        fd = opened.fd
        try:
            size = os.fstat(fd).st_size
            tail = _tail_rows(fd, size, session_id, run_id)
            # The last chunk usually holds the last row; only a huge last row needs the wider scan.
            last_seq = tail[-1].seq if tail else _scan_tail(fd, session_id, run_id, self.caps.journal_line)[0]
        finally:
            os.close(fd)
        return RunSummary(True, size, last_seq, events.authoritative_terminal(tail))

    def _sealed_summary(self, session_id: str, run_id: str, opened: files.OpenJournal) -> RunSummary:
        """A sealed journal's summary: one decompressing pass keeping only the tail, then cached."""
        info = os.fstat(opened.fd)
        key = (session_id, run_id, info.st_ino, info.st_size)
        cached = self._sealed.get(key)
        if cached is not None:
            os.close(opened.fd)
            return cached
        with opened.stream() as fh:
            data, cut = sealed_tail(fh)
        tail = tail_rows_of(data, cut, session_id, run_id)
        if tail:
            last_seq = tail[-1].seq
        else:  # a huge last row: the tail held no whole row
            last_seq = max((row.seq for row in self.iter_rows(session_id, run_id)), default=0)
        summary = RunSummary(True, info.st_size, last_seq, events.authoritative_terminal(tail))
        if len(self._sealed) >= 4096:
            self._sealed.pop(next(iter(self._sealed)))
        self._sealed[key] = summary
        return summary

    def writer_alive(self, session_id: str, run_id: str) -> bool:
        """True while some process (this one included) holds the run's journal open for writing.

        A sealed journal has no writer: only the live `.jsonl` is locked.
        """
        path = self.path(session_id, run_id)
        try:
            dir_fd = files.open_folder(path.parent)
        except (FileNotFoundError, files.CorruptJournal):
            return False
        try:
            fd = files.open_in(dir_fd, path.name)
        except (FileNotFoundError, files.CorruptJournal):  # a FIFO or folder: no writer holds it
            return False
        finally:
            os.close(dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def exists(self, session_id: str, run_id: str) -> bool:
        """Either form of the run's journal is on disk."""
        return files.journal_exists(self.path(session_id, run_id))

    def run_ids(self, session_id: str) -> list[str]:
        """Runs with a journal in this session's folder, either form (a symlinked folder has none)."""
        folder = self.root / validate_id(session_id, "session id")
        if folder.is_symlink():
            return []
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted({run for run in map(files.run_id_of, names) if run is not None})

    def session_ids(self) -> list[str]:
        """Session folders under the root (plain directories with a valid id only; a linked root has none)."""
        try:
            root_fd = open_dir_nofollow(self.root)
        except OSError:
            return []
        try:
            entries = list(os.scandir(root_fd))
        finally:
            os.close(root_fd)
        return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False) and is_valid_id(e.name))

    def seal(self, session_id: str, run_id: str) -> int | None:
        """Compress a finished run's journal (`.jsonl` → `.jsonl.gz`); returns bytes freed, None if left.

        Sealed only when no writer holds it and its tail has a terminal row; see `files.seal`.
        """
        def finished(fd: int) -> bool:
            size = os.fstat(fd).st_size
            return events.authoritative_terminal(_tail_rows(fd, size, session_id, run_id)) is not None

        return self.seal_if(session_id, run_id, finished)

    def seal_if(self, session_id: str, run_id: str, is_settled: files.Settled) -> int | None:
        """Seal when `is_settled(fd)` says so (asked under the journal's lock); see `files.seal`."""
        with self._lock:
            if (session_id, run_id) in self._writers:
                return None  # our own writer is still open
        try:
            return files.seal(self.path(session_id, run_id), is_settled, self.caps.sealed_journal)
        except FileNotFoundError:
            return None

    def delete_session(self, session_id: str) -> None:
        """Remove every journal of a session (its writers are closed first); links are removed, not followed."""
        detached = self.detach_session(session_id)
        if detached is not None:
            self.purge_detached(detached)

    def detach_session(self, session_id: str) -> Path | None:
        """Close the session's writers and move `runs/<sid>` aside in one rename; None if it has none.

        Whatever `runs/<sid>` is (a folder, a file, or a planted link) only the entry itself
        moves, inside `runs/` opened without following a link: nothing is renamed in a
        link's target. `reattach_session` undoes it.
        """
        name = validate_id(session_id, "session id")
        with self._lock:
            for key in [k for k in self._writers if k[0] == session_id]:
                self._writers.pop(key).close()
        try:
            root_fd = open_dir_nofollow(self.root)
        except FileNotFoundError:
            return None
        try:
            if not files.exists_in(root_fd, name):
                return None
            detached = f".deleted-{session_id}-{uuid.uuid4().hex[:8]}"
            os.rename(name, detached, src_dir_fd=root_fd, dst_dir_fd=root_fd)
            os.fsync(root_fd)
        finally:
            os.close(root_fd)
        return self.root / detached

    def reattach_session(self, session_id: str, detached: Path) -> None:
        root_fd = open_dir_nofollow(self.root)
        try:
            os.rename(detached.name, validate_id(session_id, "session id"), src_dir_fd=root_fd, dst_dir_fd=root_fd)
            os.fsync(root_fd)
        finally:
            os.close(root_fd)

    def purge_leftovers(self) -> None:
        """Empty what deletes interrupted by a crash left moved aside (start-up).

        `runs/` is listed through its own fd, opened without following a link: a linked
        `runs/` is refused (logged), never listed or emptied in its target.
        """
        try:
            root_fd = open_dir_nofollow(self.root)
        except FileNotFoundError:
            return
        except OSError as exc:
            log.error("the journals folder %s is not a plain folder (%s); nothing in it was removed", self.root, exc)
            return
        try:
            for name in os.listdir(root_fd):
                if name.startswith(".deleted-"):
                    self._purge_at(root_fd, name)
        finally:
            os.close(root_fd)

    def purge_detached(self, detached: Path) -> None:
        """Remove a detached folder; what is left after a failure is invisible and removed on the next try."""
        try:
            root_fd = open_dir_nofollow(self.root)
        except OSError:
            log.exception("could not remove the deleted journals at %s", detached)
            return
        try:
            self._purge_at(root_fd, detached.name)
        finally:
            os.close(root_fd)

    def _purge_at(self, root_fd: int, name: str) -> None:
        try:
            remove_tree_at(root_fd, name)
            os.fsync(root_fd)
        except OSError:
            log.exception("could not remove the deleted journals at %s", self.root / name)

    def close(self) -> None:
        with self._lock:
            writers = list(self._writers.values())
            self._writers.clear()
        for journal in writers:
            journal.close()
        self.committer.stop()
