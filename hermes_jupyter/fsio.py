"""Durable file primitives. The only module that calls `os.fsync`.

A sidecar is replaced atomically: write a temp file in the same directory,
fsync it, rename it over the target, then fsync the directory so the rename
itself survives a power loss.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Persist the directory entry changes (create, rename, unlink) of `path`."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so a crash leaves either the old or the new file.

    On failure the temp file is removed and the error propagates; the old file
    is left intact.
    """
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
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
    """Create `path` (and parents). Returns True if it was created, fsyncing its parent."""
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
