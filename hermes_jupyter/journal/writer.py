"""Writing a run journal: one `write(2)` per event, gapless seq, torn tails cut, fsync by policy."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from .. import events
from ..events import JournalRow
from ..fsio import ensure_dir, fsync_dir
from ..ids import validate_id
from .reader import _TAIL_CHUNK, _scan_tail

log = logging.getLogger(__name__)

Durability = Literal["batch", "every", "terminal"]
DURABILITY_POLICIES: tuple[Durability, ...] = ("batch", "every", "terminal")

DEFAULT_MAX_EVENT_BYTES = 256 * 1024
_EVENT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class JournalBusy(RuntimeError):
    """Another live process holds this run's journal for writing."""


@dataclass(frozen=True, slots=True)
class Appended:
    """A row that is now in the journal, with the exact line written for it."""

    row: JournalRow
    line: bytes


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
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._dirty = False
        self._prefix = f'{{"version":1,"event_id":"{run_id}:'.encode()
        self._mid = f',"run_id":"{run_id}","session_id":"{session_id}","event":"'.encode()
        self._fd = self._open()
        self.last_seq, torn = _scan_tail(self._fd, session_id, run_id)
        if torn:
            _cut_torn_tail(self._fd, self.path)

    def _open(self) -> int:
        created = ensure_dir(self.path.parent)
        existed = self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalBusy(f"journal {self.path} is being written by another process") from None
        if created or not existed:
            fsync_dir(self.path.parent)
        return fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def append(self, event: str, payload: dict[str, Any], *, created_at: float | None = None) -> Appended:
        """Append one event; returns the row and its line once they are written to the file."""
        if not event or not _EVENT_NAME_CHARS.issuperset(event) or len(event) > 64:
            raise ValueError(f"invalid event name {event!r}")
        payload_bytes, payload = self._encode_payload(payload)
        state = events.terminal_state_for(event, payload)
        ts = time.time() if created_at is None else float(created_at)
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"journal {self.path} is closed")
            seq = self.last_seq + 1
            line = b"".join((
                self._prefix, str(seq).encode(), b'","seq":', str(seq).encode(), self._mid,
                event.encode(), b'","type":"', event.encode(), b'","created_at":', repr(ts).encode(),
                b',"terminal":', b"true" if state else b"false",
                b',"terminal_state":', f'"{state}"'.encode() if state else b"null",
                b',"payload":', payload_bytes, b"}\n",
            ))
            try:
                _write_all(self._fd, line)
            except OSError:
                _cut_torn_tail(self._fd, self.path)  # a short write (a full disk) must not leave half a row
                raise
            self.last_seq = seq
            if self.durability == "every" or state is not None:
                os.fsync(self._fd)
            elif self.durability == "batch" and not self._dirty:
                self._dirty = True
                assert self._committer is not None
                self._committer.mark(self)
        row = JournalRow(
            event_id=f"{self.run_id}:{seq}", seq=seq, run_id=self.run_id, session_id=self.session_id,
            event=event, type=event, created_at=ts, terminal=state is not None, terminal_state=state, payload=payload,
        )
        return Appended(row, line)

    def _encode_payload(self, payload: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
        data = orjson.dumps(payload, default=str)
        if len(data) <= self.max_event_bytes:
            return data, payload
        small = truncate_payload(payload, self.max_event_bytes, len(data))
        return orjson.dumps(small, default=str), small

    def sync(self) -> None:
        """Fsync what was written so far (the group committer calls this)."""
        with self._sync_lock:
            with self._lock:
                self._dirty = False
                fd = self._fd
            if fd >= 0:
                os.fsync(fd)

    def close(self) -> None:
        with self._sync_lock, self._lock:
            if self._fd < 0:
                return
            try:
                os.fsync(self._fd)
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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
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
    start = max(0, size - _TAIL_CHUNK)
    while True:
        cut = os.pread(fd, size - start, start).rfind(b"\n")
        if cut >= 0 or start == 0:
            break
        start = max(0, start - _TAIL_CHUNK)
    keep = start + cut + 1 if cut >= 0 else 0
    log.warning("journal %s: cutting a torn last line of %d bytes", path, size - keep)
    os.ftruncate(fd, keep)
    os.fsync(fd)
