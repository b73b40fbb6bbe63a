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
from pathlib import Path
from typing import Iterable

#: errno values that mean "no room left": the disk, or this user's quota.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class SymlinkRefused(OSError):
    """A path under state_dir is a symbolic link; it is not followed."""


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def read_bytes_nofollow(path: Path) -> bytes:
    """The file's bytes; `SymlinkRefused` if `path` itself is a symbolic link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(errno.ELOOP, "refusing to follow a symbolic link", str(path)) from None
        raise
    try:
        size = os.fstat(fd).st_size
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, max(size, 1 << 16))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
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

    `SymlinkRefused` if `path` is a symbolic link: files are never created through one.
    """
    if path.is_symlink():
        raise SymlinkRefused(errno.ELOOP, "refusing to write through a symbolic link", str(path))
    if path.is_dir():
        return False
    path.mkdir(parents=True, exist_ok=True)
    fsync_dir(path.parent)
    return True


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_tree_nofollow(path: Path) -> None:
    """Remove `path` and what it holds without following links: a link is removed, never its target."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        _empty_dir(fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def _empty_dir(dir_fd: int) -> None:
    for name in os.listdir(dir_fd):
        if stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                _empty_dir(sub)
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)
