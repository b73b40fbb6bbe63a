"""Reading run journals: one streaming pass, identity-checked rows, torn tails and foreign rows skipped."""

from __future__ import annotations

import bisect
import errno
import gc
import logging
import operator
import os
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterator

import msgspec
import orjson

from .. import events
from ..events import JournalRow
from ..fsio import DEFAULT_CAPS, ReadCaps
from .files import CorruptJournal, open_stream

log = logging.getLogger(__name__)
_seq = operator.attrgetter("seq")

_TAIL_CHUNK = 64 * 1024
#: Room for the envelope around the largest payload the writer keeps (`max_event_bytes`).
ENVELOPE_BYTES = 1024
#: Rows longer than this are skipped on read (and counted) unless the caller gives its own cap.
DEFAULT_MAX_ROW_BYTES = 256 * 1024 + ENVELOPE_BYTES
#: What one page of `read` returns at most (its rows' encoded size); at least one row always.
DEFAULT_PAGE_BYTES = 8 << 20


@dataclass(slots=True)
class ReadStats:
    """What a read skipped: `malformed` lines did not parse, `foreign` rows failed the identity check."""

    malformed: int = 0
    foreign: int = 0
    #: Lines over the row cap: skipped unparsed (a planted huge row costs neither memory nor an answer).
    oversized: int = 0
    #: Seq of the last valid row before a foreign row that claims to be terminal (None: no such row).
    foreign_terminal_after: int | None = None


@dataclass(slots=True)
class JournalRead:
    rows: list[JournalRow]
    next_seq: int
    last_seq: int
    terminal: JournalRow | None
    stats: ReadStats = field(default_factory=ReadStats)


def _scan_tail(fd: int, session_id: str, run_id: str, max_line: int = DEFAULT_CAPS.journal_line) -> tuple[int, bool]:
    """Return (last valid seq, whether the file ends in a torn line).

    The tail is read in growing windows up to `max_line` bytes (plus a chunk): a journal
    with no row of its run in that stretch (a planted endless line) is `CorruptJournal`,
    never loaded whole.
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, False
    torn = os.pread(fd, 1, size - 1) != b"\n"
    chunk = _TAIL_CHUNK
    widest = max_line + _TAIL_CHUNK
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
        if chunk >= widest:
            raise CorruptJournal(errno.EFBIG, f"no row of the run in the journal's last {widest} bytes")
        chunk = min(chunk * 4, widest)


#: Bytes decoded at a time. A block and the rows decoded from it stay in the CPU's caches: with
#: 128 KiB blocks recovery reads a journal 12-14 % faster than with 1 MiB ones (benchmarks/bench_core.py),
#: and a page near the start of a long journal decodes one small block, not the file.
_READ_CHUNK = 128 * 1024


def iter_rows(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None,
    max_row: int = DEFAULT_MAX_ROW_BYTES, caps: ReadCaps = DEFAULT_CAPS,
) -> Iterator[JournalRow]:
    """Yield the identity-checked rows of a journal file with `seq > after_seq`, in file order.

    Raises FileNotFoundError if the journal does not exist (callers tell "not yet
    written" from "empty"). A last line without its newline is a torn write and
    is skipped like any malformed line, a line over `max_row` bytes is skipped unread, and
    a line still without its newline after `caps.journal_line` bytes ends the read (a
    torn tail, counted malformed). Either form of the journal (`.jsonl`, sealed `.jsonl.gz`) is read, never through
    a symbolic link (`files.open_stream`). One streaming pass: the file is decoded a
    chunk at a time, a whole chunk in one C call when every line in it is a
    well-shaped row (typed by `JournalRow`), else line by line.
    """
    chunks = iter_row_chunks(path, session_id, run_id, after_seq=after_seq, stats=stats, max_row=max_row, caps=caps)
    for chunk in chunks:
        yield from chunk


def iter_row_chunks(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None,
    max_row: int = DEFAULT_MAX_ROW_BYTES, caps: ReadCaps = DEFAULT_CAPS,
) -> Iterator[list[JournalRow]]:
    """`iter_rows` a chunk at a time: lists of identity-checked rows, one per block read (a fold's fast path)."""
    check = _RowCheck(session_id, run_id, after_seq, stats if stats is not None else ReadStats())
    with open_stream(path, caps.sealed_journal) as fh:
        for parsed in _parsed_chunks(fh, check.stats, max_row, caps.journal_line):
            rows = check.valid_chunk(parsed)
            if rows:
                yield rows


def read_rows(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, stats: ReadStats | None = None,
    max_row: int = DEFAULT_MAX_ROW_BYTES, caps: ReadCaps = DEFAULT_CAPS,
) -> list[JournalRow]:
    """All identity-checked rows after `after_seq` as one list (recovery's single pass); see `iter_rows`."""
    check = _RowCheck(session_id, run_id, after_seq, stats if stats is not None else ReadStats())
    rows: list[JournalRow] = []
    with open_stream(path, caps.sealed_journal) as fh:
        for parsed in _parsed_chunks(fh, check.stats, max_row, caps.journal_line):
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
        """The rows that pass, in order, with seq > after_seq. The common chunk (every row is this
        run's next one) costs one comparison pass and is returned as it is, not copied."""
        kept: list[JournalRow] | None = None  # a copy, made once a row is dropped
        start = 0
        while (bad := self._passing_up_to(parsed, start)) < len(parsed):
            kept = kept if kept is not None else []
            kept.extend(parsed[start:bad])
            self._foreign(parsed[bad].terminal is True, self.last_valid)
            start = bad + 1
        if kept is not None:
            kept.extend(parsed[start:])
        rows = parsed if kept is None else kept
        if rows and rows[0].seq <= self.after_seq:  # seqs increase: the rows to keep are a tail
            return rows[bisect.bisect_right(rows, self.after_seq, key=_seq):]
        return rows

    def _passing_up_to(self, parsed: list[JournalRow], start: int) -> int:
        """The index of the first row from `start` that fails the check (len(parsed) if none does)."""
        prefix, run_id, session_id = self.prefix, self.run_id, self.session_id
        last_valid = self.last_valid
        for at in range(start, len(parsed)):  # by index: a chunk of many foreign rows stays one pass
            row = parsed[at]
            seq = row.seq
            if not (
                seq > last_valid and row.event_id == prefix + str(seq)
                and row.run_id == run_id and row.session_id == session_id
            ):
                self.last_valid = last_valid
                return at
            last_valid = seq
        self.last_valid = last_valid
        return len(parsed)

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


def _parsed_chunks(
    fh: Any, stats: ReadStats, max_row: int = DEFAULT_MAX_ROW_BYTES, max_line: int = DEFAULT_CAPS.journal_line,
) -> Iterator[_Chunk]:
    """Parse a JSONL stream in chunks of whole lines; malformed lines are counted and dropped.

    A line that grows past `max_row` is counted as oversized and skipped up to its
    newline without being kept, so memory stays bounded by the chunk and the cap. A
    line with no newline within `max_line` bytes is a torn (or planted) tail: counted
    malformed, and the read stops there instead of scanning on without end.
    """
    carry = b""
    skipped = -1  # bytes of the oversized line being skipped (-1: not skipping)
    while True:
        block = fh.read(_READ_CHUNK)
        if not block:
            break
        if skipped >= 0:
            end = block.find(b"\n")
            if end < 0:
                skipped += len(block)
                if skipped > max_line:
                    stats.malformed += 1
                    return
                continue
            block, skipped = block[end + 1:], -1
        if carry:
            block = carry + block
        cut = block.rfind(b"\n")
        carry = block[cut + 1:]
        if len(carry) > max_row:
            stats.oversized += 1
            carry, skipped = b"", len(carry)
        if cut >= 0:
            yield _parse_lines(block, cut + 1, stats, max_row)
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


def _lines_within(block: bytes, end: int, max_row: int) -> bool:
    """True if no line of `block[:end]` can be longer than `max_row`: every stretch of
    `max_row // 2` bytes holds a newline (a few `find` calls per chunk, not one per line)."""
    step = max(1, max_row // 2)
    for start in range(0, end - step + 1, step):
        if block.find(b"\n", start, start + step) < 0:
            return False
    return True


def _parse_lines(block: bytes, end: int, stats: ReadStats, max_row: int = DEFAULT_MAX_ROW_BYTES) -> _Chunk:
    """Decode `block[:end]` (whole lines): in one C pass when every line is a well-shaped row
    of at most `max_row` bytes, else line by line (oversized lines counted and dropped)."""
    with gc_paused():
        if _lines_within(block, end, max_row):
            try:
                return _Chunk(events.decode_lines(memoryview(block)[:end]))
            except msgspec.DecodeError:
                pass
        parsed = _Chunk([])
        for raw in block[:end].split(b"\n"):
            if not raw.strip():
                continue
            if len(raw) > max_row:
                stats.oversized += 1
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


def read(
    path: Path, session_id: str, run_id: str, *, after_seq: int = 0, limit: int | None = None,
    max_bytes: int = DEFAULT_PAGE_BYTES, max_row: int = DEFAULT_MAX_ROW_BYTES, caps: ReadCaps = DEFAULT_CAPS,
) -> JournalRead:
    """Read rows after a cursor, at most `limit` rows and about `max_bytes` of them (never
    fewer than one row). `next_seq` is the cursor to pass next time."""
    stats = ReadStats()
    rows: list[JournalRow] = []
    terminal: JournalRow | None = None
    last_seq = after_seq
    budget = max_bytes
    try:
        for row in iter_rows(path, session_id, run_id, after_seq=after_seq, stats=stats, max_row=max_row, caps=caps):
            if (limit is not None and len(rows) >= limit) or (budget <= 0 and rows):
                break
            budget -= _row_bytes(row)
            rows.append(row)
            last_seq = row.seq
            if row.terminal is True:
                terminal = row
    except FileNotFoundError:
        pass
    if stats.malformed or stats.foreign or stats.oversized:
        log.warning(
            "journal %s: skipped %d malformed, %d foreign and %d oversized rows",
            path, stats.malformed, stats.foreign, stats.oversized,
        )
    return JournalRead(rows=rows, next_seq=last_seq, last_seq=last_seq, terminal=terminal, stats=stats)


def _row_bytes(row: JournalRow) -> int:
    """About what a row costs in an answer: its payload's size plus the envelope (no full encode)."""
    payload = row.payload
    text = payload.get("text")
    if len(payload) == 1 and isinstance(text, str):
        return len(text) + 256  # a token: the common case, no encode at all
    return len(msgspec.json.encode(payload)) + 256


def _tail_rows(fd: int, size: int, session_id: str, run_id: str) -> list[JournalRow]:
    """The valid rows in the last chunk of a file (enough to find its terminal rows)."""
    start = max(0, size - _TAIL_CHUNK)
    return tail_rows_of(os.pread(fd, size - start, start), start > 0, session_id, run_id)


def sealed_tail(fh: Any) -> tuple[bytes, bool]:  # the stream's own cap bounds the pass (files._GzipLines)
    """The last `_TAIL_CHUNK` bytes of a stream that cannot seek (a sealed journal), and whether
    anything came before them. One pass, memory bounded by the chunk."""
    tail = b""
    cut = False
    while block := fh.read(_READ_CHUNK):
        tail += block
        if len(tail) > _TAIL_CHUNK:
            tail, cut = tail[-_TAIL_CHUNK:], True
    return tail, cut


def tail_rows_of(data: bytes, partial_first: bool, session_id: str, run_id: str) -> list[JournalRow]:
    """The valid rows among the whole lines of `data` (the first one dropped when it may be partial)."""
    lines = data.split(b"\n")[:-1]
    if partial_first:
        lines = lines[1:]
    rows: list[JournalRow] = []
    for raw in lines:
        row = events.parse_row(raw)
        if row is not None and events.row_owns_run(row, session_id, run_id):
            rows.append(row)
    return rows
