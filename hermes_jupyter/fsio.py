"""Durable file primitives. The only module that calls `os.fsync`.

A sidecar is replaced atomically: write a temp file in the same directory,
fsync it, rename it over the target, then fsync the directory so the rename
itself survives a power loss. Nothing here follows a symbolic link: a link
planted under state_dir could otherwise point reads, writes or deletes at any
file the server's user can reach.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

#: errno values that mean "no room left": the disk, or this user's quota.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class SymlinkRefused(OSError):
    """A path under state_dir is a symbolic link; it is not followed."""


class NotAFile(OSError):
    """A FIFO, device, socket or folder where a file should be (or a file where a folder should be).

    Never read: opening a FIFO for reading blocks until someone writes, and a device
    may never end. Callers report it as damaged (`corrupt`), like a file that does not parse.
    """


class TooLarge(OSError):
    """A file over its read cap (`ReadCaps`): read as damaged, never loaded."""


@dataclass(frozen=True, slots=True)
class ReadCaps:
    """The most bytes read from one stored file of each kind (docs/journal.md, "Hostile files").

    A file over its cap is reported `corrupt` and left in place (deletable); nothing
    here ever allocates more than the cap for it.
    """

    #: One session sidecar. Recovery of the 1M-event benchmark run writes a ~114 MB one.
    sidecar: int = 256 << 20
    #: The listing index: ~330-510 bytes a session, so 100k sessions are 33-51 MB.
    index: int = 128 << 20
    #: One journal line; the writer's rows are at most `max_event_bytes` plus an envelope.
    journal_line: int = 8 << 20
    #: A sealed journal, decompressed (a gzip bomb stops here); larger live journals stay unsealed.
    sealed_journal: int = 1 << 30


DEFAULT_CAPS = ReadCaps()


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def open_regular(name: str | Path, flags: int = os.O_RDONLY, mode: int = 0o600, *, dir_fd: int | None = None) -> int:
    """Open a regular file without following a link and without ever blocking.

    `O_NONBLOCK` makes opening a FIFO return at once; the fd is then refused
    (`NotAFile`) unless `fstat` says it is a regular file, and only then is
    `O_NONBLOCK` cleared for the reads and writes that follow. `SymlinkRefused`
    for a link.
    """
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(errno.ELOOP, "refusing to follow a symbolic link", str(name)) from None
        if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
            raise NotAFile(exc.errno, "not a regular file", str(name)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFile(errno.EINVAL, "not a regular file (a folder, FIFO, device or socket)", str(name))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir_nofollow(path: Path) -> int:
    """A directory fd of `path` itself; `SymlinkRefused` for a link, `NotAFile` for anything but a folder."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        # Linux answers ENOTDIR, not ELOOP, for a link opened with O_DIRECTORY | O_NOFOLLOW.
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and os.path.islink(path)):
            raise SymlinkRefused(errno.ELOOP, "refusing to follow a symbolic link", str(path)) from None
        if exc.errno == errno.ENOTDIR:
            raise NotAFile(errno.ENOTDIR, "not a folder", str(path)) from None
        raise


def read_capped(path: Path, cap: int) -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them (`TooLarge` beyond).

    Neither `path` nor its folder is followed if it is a link (`SymlinkRefused`); a
    FIFO, device, socket or folder is `NotAFile`. The size is checked before reading
    and again while reading (a file may grow meanwhile), so no more than `cap` + 1
    bytes are ever held.
    """
    dir_fd = open_dir_nofollow(path.parent)
    try:
        fd = open_regular(path.name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            raise TooLarge(errno.EFBIG, f"file of {size} bytes is over its cap of {cap}", str(path))
        chunks: list[bytes] = []
        held = 0
        while chunk := os.read(fd, min(max(size, 1 << 16), cap + 1 - held)):
            chunks.append(chunk)
            held += len(chunk)
            if held > cap:
                raise TooLarge(errno.EFBIG, f"file grew over its cap of {cap} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Persist the directory entry changes (create, rename, unlink) of `path`."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Replace `path` with `data` so a crash leaves either the old or the new file.

    `data` may come in pieces (an encoder's output as it goes), so a large file is
    never held whole in memory. On failure (also an error raised by the pieces'
    producer) the temp file is removed and the error propagates; the old file is
    left intact.
    """
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}.{threading.get_ident()}")
    _unlink_quietly(tmp)  # a leftover of a crashed writer (or a planted link): never written through
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    fsync_dir(path.parent)


def fsync_fd(fd: int) -> None:
    os.fsync(fd)


def ensure_dir(path: Path) -> bool:
    """Create `path` (and parents). Returns True if it was created, fsyncing its parent.

    `SymlinkRefused` if `path` is a symbolic link, `NotAFile` if it is anything but a
    folder: files are never created through one, and a planted file is reported, not a crash.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True)
        fsync_dir(path.parent)
        return True
    if stat.S_ISLNK(info.st_mode):
        raise SymlinkRefused(errno.ELOOP, "refusing to write through a symbolic link", str(path))
    if not stat.S_ISDIR(info.st_mode):
        raise NotAFile(errno.ENOTDIR, "not a folder", str(path))
    return False


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_tree_nofollow(path: Path) -> None:
    """Remove `path` and what it holds without following links: a link is removed, never its target.

    The folder holding `path` is opened without following a link too, and every level
    below is reached through directory fds, so a link planted at any level (also one
    swapped in meanwhile) is removed as an entry and never entered.
    """
    try:
        parent = open_dir_nofollow(path.parent)
    except FileNotFoundError:
        return
    try:
        remove_tree_at(parent, path.name)
    finally:
        os.close(parent)


def remove_tree_at(dir_fd: int, name: str) -> None:
    """Remove the entry `name` of the folder `dir_fd` and, if it is a folder, all it holds; links are not followed."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        for child in os.listdir(sub):
            remove_tree_at(sub, child)
    finally:
        os.close(sub)
    os.rmdir(name, dir_fd=dir_fd)
