"""Where a journal's bytes are: the live `<run_id>.jsonl` or the sealed `<run_id>.jsonl.gz`.

Every reader opens a journal here, so all of them accept both forms and none
follows a symbolic link (the session folder and the file are opened with
`O_NOFOLLOW`). A journal is sealed (compressed) only once nothing can append
to it: the sealer holds the writer's `flock` while it copies, writes the `.gz`
under a temp name, fsyncs it, renames it into place, fsyncs the folder, and
only then removes the `.jsonl`. A crash leaves either the `.jsonl` alone, or
both (the `.gz` complete); readers prefer the `.gz` whenever it exists, and a
writer refuses to reopen a sealed run, so both forms always hold the same lines.
"""

from __future__ import annotations

import errno
import fcntl
import gzip
import logging
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from ..fsio import DEFAULT_CAPS, NotAFile, SymlinkRefused, open_dir_nofollow, open_regular, remove_tree_at

log = logging.getLogger(__name__)

LIVE_SUFFIX = ".jsonl"
SEALED_SUFFIX = ".jsonl.gz"
_TMP_SUFFIX = ".tmp"
_COPY_CHUNK = 1 << 20
#: gzip level for sealing. Measured on a 2,000-token answer (400 KB live): 6 gives 26 KB in 8 ms,
#: 9 gives 25 KB in 17 ms, 1 gives 28 KB in 2 ms; 6 is the knee.
SEAL_LEVEL = 6


#: `is_settled(fd)`: is the run of this open (and flocked) live journal over?
Settled = Callable[[int], bool]


class RefusedJournal(FileNotFoundError):
    """A symbolic link (or not a regular file) where a journal should be: read as absent, never followed."""


class CorruptJournal(OSError):
    """A journal that cannot be read as one: a damaged compressed stream, one decompressing to more
    than its cap, a tail with no row within the line cap, or a FIFO, device, socket or folder in
    its place (opened without blocking and refused, never read)."""


def sealed_path(live: Path) -> Path:
    """The `.jsonl.gz` beside a live `.jsonl` path."""
    return live.with_name(live.name + ".gz")


def run_id_of(name: str) -> str | None:
    """The run id a journal file name stands for (either form), or None for anything else."""
    for suffix in (SEALED_SUFFIX, LIVE_SUFFIX):
        if name.endswith(suffix) and not name.startswith("."):
            return name[: -len(suffix)]
    return None


def open_folder(folder: Path) -> int:
    """A directory fd of a session's journal folder; a symlinked folder is refused (read as absent),
    a file in its place is `CorruptJournal`."""
    try:
        return open_dir_nofollow(folder)
    except SymlinkRefused:
        log.warning("journal folder %s is a symbolic link; refusing it", folder)
        raise RefusedJournal(errno.ENOENT, "journal folder is a symbolic link", str(folder)) from None
    except NotAFile:
        log.warning("journal folder %s is not a folder; refusing it", folder)
        raise CorruptJournal(errno.ENOTDIR, "the session's journal folder is not a folder") from None


def open_in(dir_fd: int, name: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """Open `name` inside `dir_fd` without following a link and without blocking (`fsio.open_regular`).

    A link is refused as absent (`RefusedJournal`); a FIFO, device, socket or folder is `CorruptJournal`.
    """
    try:
        return open_regular(name, flags, mode, dir_fd=dir_fd)
    except SymlinkRefused:
        log.warning("journal %s is a symbolic link; refusing it", name)
        raise RefusedJournal(errno.ENOENT, "journal is a symbolic link", name) from None
    except NotAFile:
        log.warning("journal %s is not a regular file; refusing it", name)
        raise CorruptJournal(errno.EINVAL, "the journal is not a regular file") from None


@dataclass(slots=True)
class OpenJournal:
    """An open journal: `fd` of the file on disk, `sealed` when it is the compressed form."""

    fd: int
    sealed: bool
    disk_bytes: int
    #: Most bytes a sealed journal may decompress to (`CorruptJournal` beyond: a gzip bomb).
    max_unpacked: int = DEFAULT_CAPS.sealed_journal

    def stream(self) -> BinaryIO:
        """The journal's lines (decompressed when sealed); closing it closes `fd`."""
        raw = os.fdopen(self.fd, "rb", buffering=0 if not self.sealed else _COPY_CHUNK)
        return _GzipLines(raw, self.max_unpacked) if self.sealed else raw  # type: ignore[return-value]


def open_journal(live: Path, max_unpacked: int = DEFAULT_CAPS.sealed_journal) -> OpenJournal:
    """Open a journal by its live path: the sealed form if it exists, else the live one.

    Raises FileNotFoundError (RefusedJournal for a link) when neither is there. The
    `.gz` is tried again after a missing `.jsonl`: a sealer may have finished in between.
    """
    dir_fd = open_folder(live.parent)
    try:
        for name, sealed in ((live.name + ".gz", True), (live.name, False), (live.name + ".gz", True)):
            try:
                fd = open_in(dir_fd, name)
            except RefusedJournal:
                raise
            except FileNotFoundError:
                continue
            return OpenJournal(fd, sealed, os.fstat(fd).st_size, max_unpacked)
        raise FileNotFoundError(errno.ENOENT, "no journal", str(live))
    finally:
        os.close(dir_fd)


def open_stream(live: Path, max_unpacked: int = DEFAULT_CAPS.sealed_journal) -> BinaryIO:
    """The lines of a journal, either form (see `open_journal`)."""
    return open_journal(live, max_unpacked).stream()


class _GzipLines(gzip.GzipFile):
    """gzip reading that reports a damaged stream, or one decompressing past `max_unpacked`
    bytes, as an OSError (`CorruptJournal`), like any read failure."""

    def __init__(self, raw: BinaryIO, max_unpacked: int = DEFAULT_CAPS.sealed_journal) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw
        self._left = max_unpacked

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self._left + 1:
            size = self._left + 1
        try:
            data = super().read(size)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise CorruptJournal(f"sealed journal is damaged: {exc}") from exc
        self._left -= len(data)
        if self._left < 0:
            raise CorruptJournal(errno.EFBIG, "the sealed journal decompresses to more than its cap")
        return data

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def journal_exists(live: Path) -> bool:
    """True if either form of the journal is a regular file on disk (links count as absent)."""
    try:
        if not stat.S_ISDIR(os.lstat(live.parent).st_mode):
            return False
    except FileNotFoundError:
        return False
    for path in (live, sealed_path(live)):
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                return True
        except FileNotFoundError:
            continue
    return False


def seal(live: Path, is_settled: Settled, max_unpacked: int = DEFAULT_CAPS.sealed_journal) -> int | None:
    """Compress a settled journal in place; returns the bytes freed, or None if it was left as it is.

    `is_settled(fd)` is asked while this holds the journal's `flock`, so no writer can
    hold or take it meanwhile; it says whether the run is over (its tail has a terminal row,
    or its session has moved on). A `.jsonl` already beside a `.gz` is a leftover of a crash
    between rename and unlink: it is removed. For the few milliseconds of a seal the journal
    looks written-to to `writer_alive` (its lock is held); the runs sealed are over, and a
    reader that asks then only waits for the next look. A journal over `max_unpacked` bytes stays
    live: sealed, its readers would refuse it as a gzip bomb.
    """
    dir_fd = open_folder(live.parent)
    try:
        try:
            fd = open_in(dir_fd, live.name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None  # a writer holds it
            size = os.fstat(fd).st_size
            if not exists_in(dir_fd, live.name + ".gz"):
                if size > max_unpacked or not is_settled(fd):
                    return None
                packed = _write_sealed(dir_fd, fd, live.name)
            else:
                packed = 0  # a crash left both: the .gz is complete (it was renamed only after its fsync)
            os.unlink(live.name, dir_fd=dir_fd)
            os.fsync(dir_fd)
            return size - packed
        finally:
            os.close(fd)  # releases the flock
    finally:
        os.close(dir_fd)


def _write_sealed(dir_fd: int, src_fd: int, name: str) -> int:
    """Write `<name>.gz` from `src_fd` atomically and durably; returns its size."""
    tmp = f".{name}.gz{_TMP_SUFFIX}"
    try:
        os.unlink(tmp, dir_fd=dir_fd)  # a crashed sealer's leftover (we hold the journal's flock)
    except FileNotFoundError:
        pass
    out_fd = open_in(dir_fd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(os.dup(out_fd), "wb") as out, gzip.GzipFile(
            filename="", fileobj=out, mode="wb", compresslevel=SEAL_LEVEL, mtime=0
        ) as gz:
            offset = 0
            while chunk := os.pread(src_fd, _COPY_CHUNK, offset):
                gz.write(chunk)
                offset += len(chunk)
        os.fsync(out_fd)
        packed = os.fstat(out_fd).st_size
    except BaseException:
        os.close(out_fd)
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(out_fd)
    os.rename(tmp, name + ".gz", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)
    return packed


def exists_in(dir_fd: int, name: str) -> bool:
    """Whether `name` is in the folder (a link counts: it is not followed)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def remove_if_idle(live: Path) -> int | None:
    """Delete both forms of a journal (never through a link) unless a writer holds it; returns the
    bytes freed, or None when a writer was found. The live form is removed while this holds its
    `flock`, so no writer can be appending to what is deleted."""
    dir_fd = open_folder(live.parent)
    try:
        try:
            fd: int | None = open_in(dir_fd, live.name)
        except (FileNotFoundError, CorruptJournal):  # absent, or a FIFO or folder no writer can hold
            fd = None
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return None
            freed = 0
            for name in (live.name + ".gz", live.name):
                try:
                    freed += os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_size
                    remove_tree_at(dir_fd, name)  # a planted folder goes too, a link is never followed
                except FileNotFoundError:
                    continue
            os.fsync(dir_fd)
            return freed
        finally:
            if fd is not None:
                os.close(fd)
    finally:
        os.close(dir_fd)
