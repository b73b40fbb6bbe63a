"""Session sidecars: one JSON file per session, replaced atomically, plus a listing index.

The sidecar is the settled transcript; the run journal holds what a live run
emitted. Writers hold the session's lock only for in-memory mutation and the
save, never across agent I/O. A sidecar that cannot be read is reported and
left in place: nothing here ever overwrites it with an empty session.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from .fsio import atomic_write, ensure_dir
from .ids import new_session_id, validate_id

log = logging.getLogger(__name__)

INDEX_NAME = "_index.json"
#: Seconds a changed index may wait before it is written (it is a cache, rebuilt from sidecars).
INDEX_WRITE_DELAY_S = 0.5


class UnknownSession(KeyError):
    """No sidecar for this session id (HTTP 404)."""


class CorruptSession(RuntimeError):
    """The sidecar exists but does not parse as a session; it is left untouched."""


@dataclass
class Session:
    """A session sidecar. Unknown keys found on disk are kept in `extra` and written back."""

    session_id: str
    title: str = "New session"
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    backend: str = "demo"
    model: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    context_messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    active_stream_id: str | None = None
    pending_user_message: str | None = None
    pending_attachments: list[dict[str, Any]] = field(default_factory=list)
    pending_started_at: float | None = None
    notebook_path: str | None = None
    cell_id: str | None = None
    kernel_id: str | None = None
    last_run_id: str | None = None
    backend_session_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated_cost: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A shallow mapping for serialization (no deep copy: sidecars can hold long transcripts)."""
        data = {f.name: getattr(self, f.name) for f in _FIELDS}
        data["message_count"] = len(self.messages)
        return {**self.extra, **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known and k != "message_count"}
        return cls(**values, extra=extra)

    def compact(self) -> dict[str, Any]:
        """The listing row: what the sidebar needs, no transcript."""
        return {
            "session_id": self.session_id, "title": self.title, "created_at": self.created_at,
            "updated_at": self.updated_at, "backend": self.backend, "model": self.model,
            "message_count": len(self.messages), "active_stream_id": self.active_stream_id,
            "last_run_id": self.last_run_id, "notebook_path": self.notebook_path,
            "kernel_id": self.kernel_id,
        }

    @property
    def is_pending(self) -> bool:
        return bool(self.pending_user_message and self.active_stream_id)

    # The sidecar's `active_stream_id` (the on-disk name, docs/journal.md) is the pending turn's run id;
    # code says "run" and reads it here, the one place the on-disk name is mapped.
    @property
    def active_run_id(self) -> str | None:
        return self.active_stream_id

    @active_run_id.setter
    def active_run_id(self, run_id: str | None) -> None:
        self.active_stream_id = run_id


_FIELDS = tuple(f for f in fields(Session) if f.name != "extra")


class SessionStore:
    """Sidecars under `root`, an in-memory cache, per-session locks and the listing index."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ensure_dir(root)
        self._cache: dict[str, Session] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._index: dict[str, dict[str, Any]] | None = None
        self._index_timer: threading.Timer | None = None
        self._reconciled = threading.Event()

    # -- locks and cache ------------------------------------------------------------
    def lock(self, session_id: str) -> threading.Lock:
        """The session's non-reentrant lock. Repair takes it non-blocking, so holders never deadlock."""
        with self._guard:
            lock = self._locks.get(session_id)
            if lock is None:
                lock = self._locks[session_id] = threading.Lock()
            return lock

    def cached(self, session_id: str) -> Session | None:
        return self._cache.get(session_id)

    def evict(self, session_id: str) -> None:
        self._cache.pop(session_id, None)

    def path(self, session_id: str) -> Path:
        return self.root / f"{validate_id(session_id, 'session id')}.json"

    # -- reading --------------------------------------------------------------------
    def exists(self, session_id: str) -> bool:
        return session_id in self._cache or self.path(session_id).is_file()

    def load(self, session_id: str, *, use_cache: bool = True) -> Session:
        """The session from the cache, or parsed from its sidecar (and cached)."""
        if use_cache:
            session = self._cache.get(session_id)
            if session is not None:
                return session
        session = self._read(self.path(session_id))
        self._cache[session_id] = session
        return session

    def _read(self, path: Path) -> Session:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise UnknownSession(path.stem) from None
        try:
            data = orjson.loads(raw)
            if not isinstance(data, dict) or data.get("session_id") != path.stem:
                raise ValueError("not a session object for this file")
            return Session.from_json(data)
        except (ValueError, TypeError) as exc:
            log.error("session sidecar %s is corrupt and was left in place: %s", path, exc)
            raise CorruptSession(f"session {path.stem} cannot be read: {exc}") from exc

    # -- writing --------------------------------------------------------------------
    def create(self, **values: Any) -> Session:
        session = Session(session_id=new_session_id(), **values)
        self.save(session)
        return session

    def save(self, session: Session, *, touch: bool = True) -> None:
        """Write the sidecar atomically (tmp + fsync + rename + dir fsync), then cache and index it.

        `touch=False` is for maintenance (repair, retries): it must not reorder the listing.
        """
        validate_id(session.session_id, "session id")
        if touch:
            session.updated_at = time.time()
        data = orjson.dumps(session.to_json(), option=orjson.OPT_INDENT_2, default=str)
        path = self.path(session.session_id)
        atomic_write(path, data)
        self._cache[session.session_id] = session
        row = session.compact()
        row["mtime_ns"] = _mtime_ns(path)
        self._index_put(session.session_id, row)

    def delete(self, session_id: str) -> None:
        path = self.path(session_id)
        self._cache.pop(session_id, None)
        try:
            os.unlink(path)
        except FileNotFoundError:
            raise UnknownSession(session_id) from None
        self._index_put(session_id, None)

    # -- listing --------------------------------------------------------------------
    def list(self) -> list[dict[str, Any]]:
        """Compact rows, newest first. Corrupt sidecars are listed with `corrupt: true`."""
        index = self._load_index()
        rows = [{k: v for k, v in row.items() if k != "mtime_ns"} for row in index.values()]
        rows.sort(key=lambda r: r.get("updated_at") or 0, reverse=True)
        return rows

    def _load_index(self) -> dict[str, dict[str, Any]]:
        """The in-memory index. A saved index is trusted at once and verified in the background.

        Verification re-reads sidecars whose mtime differs from the index row (a save
        whose index write a crash cut off); until it ends, such a row may be stale.
        Without a saved index the sidecars are scanned before answering.
        """
        with self._guard:
            if self._index is not None:
                return self._index
        saved = self._read_index_file()
        if not saved:
            fresh = self._apply_reconcile({}, self._reconcile_index({}))
            self._reconciled.set()
            return fresh
        with self._guard:
            if self._index is None:
                self._index = saved
                threading.Thread(target=self._verify_index, args=(dict(saved),), daemon=True,
                                 name="hermes-index-verify").start()
            return self._index

    def wait_reconciled(self, timeout_s: float = 10.0) -> bool:
        """Block until the index has been checked against the sidecars (tests, benchmarks)."""
        return self._reconciled.wait(timeout_s)

    def _verify_index(self, snapshot: dict[str, dict[str, Any]]) -> None:
        try:
            self._apply_reconcile(snapshot, self._reconcile_index(snapshot))
        except OSError:
            log.exception("could not verify the session index against the sidecars")
        finally:
            self._reconciled.set()

    def _apply_reconcile(
        self, snapshot: dict[str, dict[str, Any]], fresh: dict[str, dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """Merge a scan into the live index without undoing saves that happened meanwhile."""
        with self._guard:
            index = self._index if self._index is not None else {}
            for sid, row in fresh.items():
                if index.get(sid) is snapshot.get(sid):
                    index[sid] = row
            for sid, row in snapshot.items():
                if sid not in fresh and index.get(sid) is row:
                    del index[sid]
            self._index = index
            return index

    def _read_index_file(self) -> dict[str, dict[str, Any]]:
        try:
            data = orjson.loads((self.root / INDEX_NAME).read_bytes())
        except FileNotFoundError:
            return {}
        except orjson.JSONDecodeError:
            log.warning("session index is corrupt; rebuilding it from the sidecars")
            return {}
        return data if isinstance(data, dict) else {}

    def _reconcile_index(self, index: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Trust an index row only while its sidecar's mtime is unchanged; re-read the others."""
        fresh: dict[str, dict[str, Any]] = {}
        changed = False
        with os.scandir(self.root) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(("_", ".")) or not name.endswith(".json"):
                    continue
                sid = name[:-5]
                mtime = entry.stat().st_mtime_ns
                row = index.get(sid)
                if row is None or row.get("mtime_ns") != mtime:
                    row = self._index_row_from_disk(Path(entry.path), sid, mtime)
                    changed = True
                fresh[sid] = row
        if changed or len(fresh) != len(index):
            self._schedule_index_write()
        return fresh

    def _index_row_from_disk(self, path: Path, sid: str, mtime: int) -> dict[str, Any]:
        try:
            row = self._read(path).compact()
        except CorruptSession as exc:
            row = {"session_id": sid, "title": sid, "updated_at": 0, "corrupt": True, "error": str(exc)}
        row["mtime_ns"] = mtime
        return row

    def _index_put(self, session_id: str, row: dict[str, Any] | None) -> None:
        index = self._load_index()
        with self._guard:
            if row is None:
                index.pop(session_id, None)
            else:
                index[session_id] = row
        self._schedule_index_write()

    def _schedule_index_write(self) -> None:
        with self._guard:
            if self._index_timer is not None:
                return
            timer = threading.Timer(INDEX_WRITE_DELAY_S, self.flush_index)
            timer.daemon = True
            self._index_timer = timer
        timer.start()

    def flush_index(self) -> None:
        """Write the listing index now (it is also written shortly after every change)."""
        with self._guard:
            self._index_timer = None
            index = dict(self._index) if self._index is not None else None
        if index is None:
            return
        try:
            atomic_write(self.root / INDEX_NAME, orjson.dumps(index))
        except OSError:
            log.exception("could not write the session index (it will be rebuilt from the sidecars)")

    def close(self) -> None:
        with self._guard:
            timer, self._index_timer = self._index_timer, None
        if timer is not None:
            timer.cancel()
            self.flush_index()


def _mtime_ns(path: Path) -> int:
    return os.stat(path).st_mtime_ns
