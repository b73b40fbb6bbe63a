"""Writing a run journal: one `write(2)` per event, gapless seq, torn tails cut, fsync by policy."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from .. import events
from ..events import JournalRow
from ..fsio import ensure_dir, fsync_dir
from ..ids import validate_id
from . import files
from ..fsio import DEFAULT_CAPS
from .reader import _TAIL_CHUNK, _scan_tail

log = logging.getLogger(__name__)

Durability = Literal["batch", "every", "terminal"]
DURABILITY_POLICIES: tuple[Durability, ...] = ("batch", "every", "terminal")

DEFAULT_MAX_EVENT_BYTES = 256 * 1024
_EVENT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class JournalBusy(RuntimeError):
    """Another live process holds this run's journal for writing."""


class Appended(NamedTuple):
    """A row that is now in the journal: what fan-out needs of it, and the exact line written.

    A plain tuple, one per event: the typed row is decoded from `line` only by whoever asks.
    """

    seq: int
    terminal: bool
    created_at: float
    line: bytes

    @property
    def row(self) -> JournalRow:
        return events.decode_row(self.line)

    @classmethod
    def of(cls, row: JournalRow) -> Appended:
        """A row read back from the journal, with its line as the writer wrote it."""
        return cls(row.seq, row.terminal is True, row.created_at or 0.0, events.encode_row(row) + b"\n")


class GroupCommitter:
    """Fsyncs dirty journals from one background thread, one fsync for many events.

    An append marks its journal dirty; this thread wakes, fsyncs every dirty
    file, then waits `window_s` before the next round, so an event is on stable
    storage within about `window_s` plus one round of fsyncs. `flush` cuts the
    wait short: whoever needs durability now never waits out a window.
    """

    def __init__(self, window_s: float = 0.02) -> None:
        self.window_s = window_s
        self._dirty: dict[int, RunJournal] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._urgent = False
        self._idle = threading.Event()
        self._idle.set()

    def mark(self, journal: RunJournal) -> None:
        with self._cond:
            self._dirty[id(journal)] = journal
            self._idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="hermes-journal-fsync", daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Fsync every journal marked so far now, and wait until that is done."""
        with self._cond:
            if self._dirty:
                self._urgent = True
                self._cond.notify_all()
        return self._idle.wait(timeout_s)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(5)
        self._sync_all(self._take())

    def _take(self) -> list[RunJournal]:
        with self._cond:
            batch = list(self._dirty.values())
            self._dirty.clear()
            return batch

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._dirty and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
            self._sync_all(self._take())
            with self._cond:
                if not self._dirty:
                    self._idle.set()
                # Marks do not end the window (that is the point of it); a flush or a stop does.
                self._cond.wait_for(lambda: self._urgent or self._stopping, timeout=self.window_s)
                self._urgent = False

    def _sync_all(self, batch: list[RunJournal]) -> None:
        for journal in batch:
            try:
                journal.sync()
            except OSError:
                log.exception("journal fsync failed: %s", journal.path)


class RunJournal:
    """The writer of one run's journal file (reads are module functions, they need no writer)."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        run_id: str,
        *,
        durability: Durability = "batch",
        committer: GroupCommitter | None = None,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_line: int = DEFAULT_CAPS.journal_line,
    ) -> None:
        if durability not in DURABILITY_POLICIES:
            raise ValueError(f"unknown durability policy {durability!r}")
        if durability == "batch" and committer is None:
            raise ValueError("durability 'batch' needs a GroupCommitter")
        self.path = path
        self.session_id = validate_id(session_id, "session id")
        self.run_id = validate_id(run_id, "run id")
        self.durability = durability
        self.max_event_bytes = max_event_bytes
        self._committer = committer
        #: Held by `sync` and `close` only. Appends take no lock: a run has one writer thread at a
        #: time by design (its sink serializes emits), and the dirty flag is set after the write and
        #: cleared before the fsync, so a write is always covered by a mark or by the fsync after it.
        self._sync_lock = threading.Lock()
        self._dirty = False
        #: The last seq an fsync covered (-1: unknown): closing after a terminal row's fsync needs no second one.
        self._synced_seq = -1
        self._prefix = f'{{"version":1,"event_id":"{run_id}:'.encode()
        self._mid = f',"run_id":"{run_id}","session_id":"{session_id}","event":"'.encode()
        #: Per event name: the checked name's bytes up to `created_at` (built once per name).
        self._event_parts: dict[str, bytes] = {}
        #: Folders whose new entries (this journal, its session's folder) still need an fsync. Under the
        #: batch policy it follows with the first rows' fsync instead of holding up a run's admission
        #: and so its first token (docs/journal.md, "Durability").
        self._unsynced_folders: list[Path] = []
        self._fd = self._open()
        try:
            self.last_seq, torn = _scan_tail(self._fd, session_id, run_id, max_line)
            if torn:
                _cut_torn_tail(self._fd, self.path)
        except BaseException:  # a journal with no row near its end (CorruptJournal): not written to
            os.close(self._fd)
            self._fd = -1
            raise

    def _open(self) -> int:
        """Open (creating) the live journal without following links, and take its writer lock.

        A sealed run is never reopened: its `.gz` is the record, and lines appended to a new
        `.jsonl` beside it would be read by nobody.
        """
        deferred = self.durability == "batch"
        folder = self.path.parent
        if not folder.is_symlink():  # a linked folder is refused (RefusedJournal) just below
            if deferred and folder.parent.is_dir() and not os.path.lexists(folder):
                os.mkdir(folder)  # a session's first run: its folder's entry is fsynced with the first rows
                self._unsynced_folders.append(folder.parent)
            else:
                ensure_dir(folder)
        dir_fd = files.open_folder(folder)
        try:
            existed = files.exists_in(dir_fd, self.path.name)
            fd = files.open_in(dir_fd, self.path.name, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise JournalBusy(f"journal {self.path} is being written by another process") from None
            if files.exists_in(dir_fd, self.path.name + ".gz"):
                os.close(fd)
                raise JournalBusy(f"journal {self.path} is sealed; a finished run takes no more events")
            if not existed and deferred:
                self._unsynced_folders.append(folder)
            elif not existed:
                os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return fd

    def _sync_folders_locked(self) -> None:
        """Fsync the folders whose new entries are not on stable storage yet (the caller holds `_sync_lock`)."""
        while self._unsynced_folders:
            fsync_dir(self._unsynced_folders[0])
            self._unsynced_folders.pop(0)

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def append(self, event: str, payload: dict[str, Any], *, created_at: float | None = None) -> Appended:
        """Append one event; returns the row and its line once they are written to the file.

        One encode (the payload, by orjson) and one bytes format build the line; the
        envelope around it is fixed per writer and per event name.
        """
        part = self._event_parts.get(event) or self._event_part(event)
        payload_bytes = orjson.dumps(payload, default=str)
        if len(payload_bytes) > self.max_event_bytes:
            payload = truncate_payload(payload, self.max_event_bytes, len(payload_bytes))
            payload_bytes = orjson.dumps(payload, default=str)
        state = events.terminal_state_for(event, payload) if event in events.TERMINAL_EVENTS else None
        ts = time.time() if created_at is None else float(created_at)
        fd = self._fd
        if fd < 0:
            raise ValueError(f"journal {self.path} is closed")
        seq = self.last_seq + 1
        if state is None:
            line = _LINE % (self._prefix, seq, seq, part, orjson.dumps(ts), payload_bytes)
        else:
            line = _TERMINAL_LINE % (self._prefix, seq, seq, part, orjson.dumps(ts), state.encode(), payload_bytes)
        try:
            written = os.write(fd, line)
            if written != len(line):
                _write_rest(fd, line, written)
        except OSError:
            _cut_torn_tail(fd, self.path)  # a failed write (a full disk) must not leave half a row
            raise
        self.last_seq = seq
        if state is not None or self.durability == "every":
            os.fsync(fd)
            self._synced_seq = seq
            if self._unsynced_folders:
                with self._sync_lock:
                    self._sync_folders_locked()
        elif not self._dirty and self.durability == "batch":
            self._dirty = True
            self._committer.mark(self)  # type: ignore[union-attr]  # checked in __init__
        return Appended(seq, state is not None, ts, line)

    def _event_part(self, event: str) -> bytes:
        """Check an event name once, and keep its piece of the envelope."""
        if not event or not _EVENT_NAME_CHARS.issuperset(event) or len(event) > 64:
            raise ValueError(f"invalid event name {event!r}")
        part = b"".join((self._mid, event.encode(), b'","type":"', event.encode(), b'","created_at":'))
        self._event_parts[event] = part
        return part

    def sync(self) -> None:
        """Fsync what was written so far (the group committer calls this)."""
        with self._sync_lock:
            self._dirty = False  # before the fsync: a write after this point marks again
            seq = self.last_seq
            self._sync_folders_locked()
            if self._fd >= 0 and seq != self._synced_seq:
                os.fsync(self._fd)
                self._synced_seq = seq

    def close(self) -> None:
        with self._sync_lock:
            if self._fd < 0:
                return
            try:
                if self._synced_seq != self.last_seq:
                    os.fsync(self._fd)
                self._sync_folders_locked()
            finally:
                os.close(self._fd)  # closing releases the flock
                self._fd = -1


def truncate_payload(payload: dict[str, Any], max_bytes: int, original_bytes: int) -> dict[str, Any]:
    """Shrink an oversized payload: cut long strings, replace large values, flag the cut."""
    budget = max(256, max_bytes // max(1, len(payload)) - 64)
    small: dict[str, Any] = {}
    for key, value in payload.items():
        if isinstance(value, str):
            small[key] = value if len(value) <= budget else value[: budget // 4] + "…"
        elif isinstance(value, (int, float, bool)) or value is None:
            small[key] = value
        else:
            encoded = orjson.dumps(value, default=str)
            small[key] = value if len(encoded) <= budget else encoded[: budget // 4].decode("utf-8", "ignore") + "…"
    small["_truncated"] = True
    small["_original_bytes"] = original_bytes
    if len(orjson.dumps(small, default=str)) > max_bytes:
        small = {"_truncated": True, "_original_bytes": original_bytes}
    return small


#: The line of a non-terminal event: prefix, seq, seq, event part, created_at, payload.
_LINE = b'%b%d","seq":%d%b%b,"terminal":false,"terminal_state":null,"payload":%b}\n'
_TERMINAL_LINE = b'%b%d","seq":%d%b%b,"terminal":true,"terminal_state":"%b","payload":%b}\n'


def _write_rest(fd: int, data: bytes, written: int) -> None:
    """Finish a short write: the line is whole before `append` returns."""
    view = memoryview(data)[written:]
    while view:
        view = view[os.write(fd, view):]


def _cut_torn_tail(fd: int, path: Path) -> None:
    """Drop a last line that was never finished, so the next append starts on a line of its own.

    The fragment is what a writer left when it died inside `write(2)`: its append
    never returned, so no one was told about it. Cutting it (instead of ending it
    with a newline) also keeps a fragment that happens to be complete JSON from
    reappearing with a seq the next append will reuse.
    """
    size = os.fstat(fd).st_size
    end, keep = size, 0
    while end > 0:  # one chunk at a time, backwards: a long fragment costs one pass, not one per chunk
        start = max(0, end - _TAIL_CHUNK)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            keep = start + cut + 1
            break
        end = start
    log.warning("journal %s: cutting a torn last line of %d bytes", path, size - keep)
    os.ftruncate(fd, keep)
    os.fsync(fd)
