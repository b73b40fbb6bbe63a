"""Reading run journals: one streaming pass, identity-checked rows, torn tails and foreign rows skipped."""

from __future__ import annotations

import gc
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator

import msgspec
import orjson

from .. import events
from ..events import JournalRow

log = logging.getLogger(__name__)

_TAIL_CHUNK = 64 * 1024


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
            row = events.parse_row(raw)
            if row is not None and events.row_owns_run(row, session_id, run_id):
                return row.seq, torn
        if start == 0:
            return 0, torn
        chunk *= 4


_READ_CHUNK = 1 << 20  # a page near the start of a long journal decodes one chunk, not the file


def iter_rows(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
) -> Iterator[JournalRow]:
    """Yield the identity-checked rows of a journal file with `seq > after_seq`, in file order.

    Raises FileNotFoundError if the journal does not exist (callers tell "not yet
    written" from "empty"). A last line without its newline is a torn write and
    is skipped like any malformed line. One streaming pass: the file is decoded a
    chunk at a time, a whole chunk in one C call when every line in it is a
    well-shaped row (typed by `JournalRow`), else line by line.
    """
    for chunk in iter_row_chunks(path, session_id, run_id, after_seq=after_seq, stats=stats):
        yield from chunk


def iter_row_chunks(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
) -> Iterator[list[JournalRow]]:
    """`iter_rows` a chunk at a time: lists of identity-checked rows, one per block read (a fold's fast path)."""
    check = _RowCheck(session_id, run_id, after_seq, stats if stats is not None else ReadStats())
    with open(path, "rb") as fh:
        for parsed in _parsed_chunks(fh, check.stats):
            rows = check.valid_chunk(parsed)
            if rows:
                yield rows


def read_rows(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None
) -> list[JournalRow]:
    """All identity-checked rows after `after_seq` as one list (recovery's single pass); see `iter_rows`."""
    check = _RowCheck(session_id, run_id, after_seq, stats if stats is not None else ReadStats())
    rows: list[JournalRow] = []
    with open(path, "rb") as fh:
        for parsed in _parsed_chunks(fh, check.stats):
            rows.extend(check.valid_chunk(parsed))
    return rows


class _RowCheck:
    """The identity check of decoded rows, in order: seq strictly increasing (so >= 1), and the
    envelope naming this session and run with `event_id == run_id:seq`. The decoder has
    already checked the types. Foreign rows are counted, never kept."""

    def __init__(self, session_id: str, run_id: str, after_seq: int, stats: ReadStats) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.prefix = f"{run_id}:"
        self.after_seq = after_seq
        self.stats = stats
        self.last_valid = 0

    def valid(self, parsed: list[JournalRow]) -> list[JournalRow]:
        out: list[JournalRow] = []
        keep = out.append
        prefix, run_id, session_id, after_seq = self.prefix, self.run_id, self.session_id, self.after_seq
        last_valid = self.last_valid
        for row in parsed:
            seq = row.seq
            if not (
                seq > last_valid and row.event_id == prefix + str(seq)
                and row.run_id == run_id and row.session_id == session_id
            ):
                self._foreign(row.terminal is True, last_valid)
                continue
            last_valid = seq
            if seq > after_seq:
                keep(row)
        self.last_valid = last_valid
        return out

    def _foreign(self, claims_terminal: bool, last_valid: int) -> None:
        self.stats.foreign += 1
        if claims_terminal:
            self.stats.foreign_terminal_after = last_valid

    def valid_chunk(self, chunk: _Chunk) -> list[JournalRow]:
        """Check a parsed chunk; its rows of the wrong shape count as foreign at their place in order."""
        if not chunk.shapeless:
            return self.valid(chunk.rows)
        out: list[JournalRow] = []
        start = 0
        for at, claims_terminal in chunk.shapeless:
            out.extend(self.valid(chunk.rows[start:at]))
            self._foreign(claims_terminal, self.last_valid)
            start = at
        out.extend(self.valid(chunk.rows[start:]))
        return out


@dataclass(slots=True)
class _Chunk:
    """Decoded rows of a block of lines, and where JSON of the wrong shape sat among them:
    `(index into rows, whether it claimed to be terminal)`."""

    rows: list[JournalRow]
    shapeless: list[tuple[int, bool]] = field(default_factory=list)


def _parsed_chunks(fh: Any, stats: ReadStats) -> Iterator[_Chunk]:
    """Parse a JSONL stream in chunks of whole lines; malformed lines are counted and dropped."""
    carry = b""
    while True:
        block = fh.read(_READ_CHUNK)
        if not block:
            break
        if carry:
            block = carry + block
        cut = block.rfind(b"\n")
        if cut < 0:
            carry = block
            continue
        carry = block[cut + 1:]
        yield _parse_lines(memoryview(block)[: cut + 1], stats)
    if carry.strip():
        stats.malformed += 1  # torn last line


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC around bounded work that allocates many acyclic objects (parsing, folding).

    Collections triggered halfway would rescan every row just parsed, for nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _parse_lines(chunk: memoryview, stats: ReadStats) -> _Chunk:
    """Decode a block of whole lines: in one C pass when every line is a well-shaped row, else line by line."""
    with gc_paused():
        try:
            return _Chunk(events.decode_lines(chunk))
        except msgspec.DecodeError:
            pass
        parsed = _Chunk([])
        for raw in bytes(chunk).split(b"\n"):
            if not raw.strip():
                continue
            try:
                parsed.rows.append(events.decode_row(raw))
            except msgspec.ValidationError:
                parsed.shapeless.append((len(parsed.rows), _claims_terminal(raw)))
            except msgspec.DecodeError:
                stats.malformed += 1
        return parsed


def _claims_terminal(raw: bytes) -> bool:
    """Whether JSON that is not a well-shaped row still says `"terminal": true` (so it may not be trusted)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("terminal") is True


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
            last_seq = row.seq
            if row.terminal is True:
                terminal = row
    except FileNotFoundError:
        pass
    if stats.malformed or stats.foreign:
        log.warning("journal %s: skipped %d malformed and %d foreign rows", path, stats.malformed, stats.foreign)
    return JournalRead(rows=rows, next_seq=last_seq, last_seq=last_seq, terminal=terminal, stats=stats)


def _tail_rows(fd: int, size: int, session_id: str, run_id: str) -> list[JournalRow]:
    """The valid rows in the last chunk of a file (enough to find its terminal rows)."""
    start = max(0, size - _TAIL_CHUNK)
    lines = os.pread(fd, size - start, start).split(b"\n")[:-1]
    if start > 0:
        lines = lines[1:]
    rows: list[JournalRow] = []
    for raw in lines:
        row = events.parse_row(raw)
        if row is not None and events.row_owns_run(row, session_id, run_id):
            rows.append(row)
    return rows
