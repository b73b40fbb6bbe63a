"""Append-only run journal: one JSONL file per run, gapless `seq`, a row on disk before anyone sees it.

Invariants:
- `seq` starts at 1 and grows by one per valid row, also across processes that
  reopen the file (the writer re-seeds from the last valid row and holds an
  exclusive `flock` while it owns the file, so two live writers cannot interleave).
- A torn last line (a crash mid-write) is skipped on read, and the next append
  starts on a fresh line instead of being glued onto the fragment.
- Every row read back is identity-checked; foreign or malformed rows are
  skipped and counted, never trusted.
- Each append is one `write(2)`: once `append` returns, the row survives a crash
  of this process. Power-loss durability follows the policy (`batch`, `every`,
  `terminal`); see `GroupCommitter`.
"""

from __future__ import annotations

import fcntl
import gc
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

import orjson

from . import events
from .events import JournalRow
from .fsio import ensure_dir, fsync_dir
from .ids import validate_id

log = logging.getLogger(__name__)

Durability = Literal["batch", "every", "terminal"]
DURABILITY_POLICIES: tuple[Durability, ...] = ("batch", "every", "terminal")

#: Default cap on one serialized payload; larger payloads are truncated with a flag.
DEFAULT_MAX_EVENT_BYTES = 256 * 1024
_TAIL_CHUNK = 64 * 1024
_EVENT_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class JournalBusy(RuntimeError):
    """Another live process holds this run's journal for writing."""


@dataclass(frozen=True, slots=True)
class Appended:
    """A row that is now in the journal, with the exact line written for it."""

    row: JournalRow
    line: bytes


@dataclass(slots=True)
class ReadStats:
    """What a read skipped: `malformed` lines did not parse, `foreign` rows failed the identity check."""

    malformed: int = 0
    foreign: int = 0
    #: Seq of the last valid row before a foreign row that claims to be terminal (None: no such row).
    foreign_terminal_after: int | None = None


@dataclass(slots=True)
class JournalRead:
    rows: list[JournalRow]
    next_seq: int
    last_seq: int
    terminal: JournalRow | None
    stats: ReadStats = field(default_factory=ReadStats)


class GroupCommitter:
    """Fsyncs dirty journals from one background thread, one fsync for many events.

    An append marks its journal dirty; this thread wakes, fsyncs every dirty
    file, then waits `window_s` before the next round, so an event is on stable
    storage within about `window_s` plus one round of fsyncs.
    """

    def __init__(self, window_s: float = 0.02) -> None:
        self.window_s = window_s
        self._dirty: dict[int, RunJournal] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
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
        """Wait until every journal marked so far has been fsynced."""
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
                    self._idle.set()
                    self._cond.wait()
                if self._stopping:
                    return
            self._sync_all(self._take())
            time.sleep(self.window_s)

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
            _write_all(self._fd, line)
            self.last_seq = seq
            if self.durability == "every" or state is not None:
                os.fsync(self._fd)
            elif self.durability == "batch" and not self._dirty:
                self._dirty = True
                assert self._committer is not None
                self._committer.mark(self)
        row: JournalRow = {
            "version": 1, "event_id": f"{self.run_id}:{seq}", "seq": seq, "run_id": self.run_id,
            "session_id": self.session_id, "event": event, "type": event, "created_at": ts,
            "terminal": state is not None, "terminal_state": state, "payload": payload,
        }
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


def _scan_tail(fd: int, session_id: str, run_id: str) -> tuple[int, bool]:
    """Return (last valid seq, whether the file ends in a torn line)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, False
    torn = os.pread(fd, 1, size - 1) != b"\n"
    chunk = _TAIL_CHUNK
    while True:
        start = max(0, size - chunk)
        data = os.pread(fd, size - start, start)
        lines = data.split(b"\n")[:-1]  # the piece after the last newline is empty or torn
        if start > 0:
            lines = lines[1:]  # the first piece may be a partial line
        for raw in reversed(lines):
            row = _parse(raw)
            if row is not None and events.row_owns_run(row, session_id, run_id):
                return int(row["seq"]), torn
        if start == 0:
            return 0, torn
        chunk *= 4


def _parse(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


_READ_CHUNK = 1 << 20


def iter_rows(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
) -> Iterator[JournalRow]:
    """Yield the identity-checked rows of a journal file with `seq > after_seq`, in file order.

    Raises FileNotFoundError if the journal does not exist (callers tell "not yet
    written" from "empty"). A last line without its newline is a torn write and
    is skipped like any malformed line. One streaming pass: the file is parsed a
    chunk at a time, whole chunks at once when every line in them is valid JSON.
    """
    stats = stats if stats is not None else ReadStats()
    prefix = f"{run_id}:"
    last_valid = 0
    with open(path, "rb") as fh:
        for parsed in _parsed_chunks(fh, stats):
            for row in parsed:
                try:
                    seq = row["seq"]
                    valid = (
                        type(seq) is int and seq > last_valid
                        and row["event_id"] == prefix + str(seq)
                        and row["run_id"] == run_id and row["session_id"] == session_id
                        and type(row["event"]) is str and type(row["payload"]) is dict
                    )
                except (KeyError, TypeError):
                    valid = False
                if not valid:
                    stats.foreign += 1
                    if type(row) is dict and row.get("terminal") is True:
                        stats.foreign_terminal_after = last_valid
                    continue
                last_valid = seq
                if seq > after_seq:
                    yield row


def _parsed_chunks(fh: Any, stats: ReadStats) -> Iterator[list[Any]]:
    """Parse a JSONL stream in chunks of whole lines; malformed lines are counted and dropped."""
    carry = b""
    while True:
        block = fh.read(_READ_CHUNK)
        if not block:
            break
        block = carry + block
        cut = block.rfind(b"\n")
        if cut < 0:
            carry = block
            continue
        carry = block[cut + 1:]
        yield _parse_lines(block[:cut], stats)
    if carry.strip():
        stats.malformed += 1  # torn last line


def _parse_lines(chunk: bytes, stats: ReadStats) -> list[Any]:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # parsing allocates many acyclic objects; collections would only slow it down
    try:
        try:
            return orjson.loads(b"[" + chunk.replace(b"\n", b",") + b"]")  # type: ignore[no-any-return]
        except orjson.JSONDecodeError:
            pass
        rows = []
        for raw in chunk.split(b"\n"):
            row = _parse(raw)
            if row is None:
                if raw.strip():
                    stats.malformed += 1
                continue
            rows.append(row)
        return rows
    finally:
        if gc_was_enabled:
            gc.enable()


def read(path: Path, session_id: str, run_id: str, *, after_seq: int = 0, limit: int | None = None) -> JournalRead:
    """Read rows after a cursor. `next_seq` is the cursor to pass next time."""
    stats = ReadStats()
    rows: list[JournalRow] = []
    terminal: JournalRow | None = None
    last_seq = after_seq
    try:
        for row in iter_rows(path, session_id, run_id, after_seq=after_seq, stats=stats):
            if limit is not None and len(rows) >= limit:
                break
            rows.append(row)
            last_seq = row["seq"]
            if row["terminal"] is True:
                terminal = row
    except FileNotFoundError:
        pass
    if stats.malformed or stats.foreign:
        log.warning("journal %s: skipped %d malformed and %d foreign rows", path, stats.malformed, stats.foreign)
    return JournalRead(rows=rows, next_seq=last_seq, last_seq=last_seq, terminal=terminal, stats=stats)


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
            last_seq, _ = _scan_tail(fd, session_id, run_id)
            tail = _tail_rows(fd, size, session_id, run_id)
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
        """Remove every journal of a session (its writers must be closed first)."""
        folder = self.root / validate_id(session_id, "session id")
        with self._lock:
            for key in [k for k in self._writers if k[0] == session_id]:
                self._writers.pop(key).close()
        if folder.is_dir():
            for name in os.listdir(folder):
                os.unlink(folder / name)
            folder.rmdir()
            fsync_dir(self.root)

    def close(self) -> None:
        with self._lock:
            writers = list(self._writers.values())
            self._writers.clear()
        for journal in writers:
            journal.close()
        self.committer.stop()


def _tail_rows(fd: int, size: int, session_id: str, run_id: str) -> list[JournalRow]:
    """The valid rows in the last chunk of a file (enough to find its terminal rows)."""
    start = max(0, size - _TAIL_CHUNK)
    lines = os.pread(fd, size - start, start).split(b"\n")[:-1]
    if start > 0:
        lines = lines[1:]
    rows: list[JournalRow] = []
    for raw in lines:
        row = _parse(raw)
        if row is not None and events.row_owns_run(row, session_id, run_id):
            rows.append(row)
    return rows
