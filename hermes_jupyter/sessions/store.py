"""Session sidecars: one JSON file per session, replaced atomically, plus a listing index.

The sidecar is the settled transcript; the run journal holds what a live run
emitted. Writers hold the session's lock only for in-memory mutation and the
save, never across agent I/O. A sidecar that cannot be read is reported and
left in place: nothing here ever overwrites it with an empty session.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import stat
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import msgspec
import orjson

from ..autonomy import DEFAULT_AUTONOMY, Autonomy
from ..fsio import DEFAULT_CAPS, ReadCaps, atomic_write, ensure_dir, open_dir_nofollow, read_capped, remove_tree_at
from ..ids import is_valid_id, new_session_id, validate_id
from ..jsonstream import encode
from .listing import ListingOrder, Page
from ..schemas import check_index
from .shared_text import TABLE, pack, unpack
from .titles import UNTITLED, subtitle

log = logging.getLogger(__name__)

INDEX_NAME = "_index.json"
#: Message keys whose text may be long (joined from many journal rows): the sidecar writes them in slices.
LONG_TEXT_KEYS = ("content", "reasoning", "text")
#: List keys of list items that may be long (a stored turn's rows, whose `text` may be long, and its
#: table of shared texts, shared_text.py) → their items' long keys: the sidecar writes them in pieces too.
NESTED_LIST_KEYS = {"rows": ("text",), TABLE: ()}
#: Seconds a changed index may wait before it is written (it is a cache, rebuilt from sidecars).
INDEX_WRITE_DELAY_S = 0.5


class UnknownSession(KeyError):
    """No sidecar for this session id (HTTP 404)."""


class CorruptSession(RuntimeError):
    """The sidecar exists but does not parse as a session; it is left untouched."""


class RunActive(RuntimeError):
    """The session already has a live run (HTTP 409)."""


#: What a listing row of an unreadable sidecar says (the technical reason goes to the log).
CORRUPT_ROW_ERROR = "This session's saved file cannot be read. It was left as it is: restore it, or delete it."


@dataclass
class Session:
    """A session sidecar. Unknown keys found on disk are kept in `extra` and written back."""

    session_id: str
    title: str = UNTITLED
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
    #: The run the pending turn continues (`POST sessions/{sid}/continue`), else None.
    pending_continues: str | None = None
    notebook_path: str | None = None
    cell_id: str | None = None
    kernel_id: str | None = None
    last_run_id: str | None = None
    backend_session_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated_cost: float | None = None
    #: Turns sent while one ran, oldest first: `{run_id, message, attachments, queued_at, notebook}` (runs/queue.py).
    queued: list[dict[str, Any]] = field(default_factory=list)
    #: The user's decision on each proposed cell, by its transcript row id (`<run>:proposal:<id>`):
    #: `accepted` or `rejected`. Kept here, not in the run's journal, which may be sealed (docs/proposals.md).
    proposal_decisions: dict[str, str] = field(default_factory=dict)
    #: Who made each of those decisions, by the same row id: `{kind, user?}` (agents/answered.py).
    proposal_answered_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: How much the agent may do in the notebook on its own (docs/autonomy.md); checked when read.
    autonomy: Autonomy = DEFAULT_AUTONOMY
    #: The person's Keep/Undo of each cell an agent run changed, by `<run>:<cell_id>`: "kept", or `{by, at}`
    #: once undone. Kept here, not in the run's journal, which may be sealed (docs/notebook-edits.md).
    cell_undo: dict[str, Any] = field(default_factory=dict)
    #: Each settled turn as the transcript's own rows, oldest first (transcript/turns.py, docs/transcript.md).
    turns: list[StoredTurn] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self, *, typed: bool = False) -> dict[str, Any]:
        """A shallow mapping for serialization (no deep copy: sidecars can hold long transcripts).

        `typed` leaves the stored turns as Structs (the sidecar writer encodes them row by row).
        """
        data = {f.name: getattr(self, f.name) for f in _FIELDS}
        if not typed:
            data["turns"] = msgspec.to_builtins(self.turns)
        data["message_count"] = len(self.messages)
        return {**self.extra, **data}

    @classmethod
    def from_json(cls, data: Any) -> Session:
        """A session from a parsed sidecar, every field type-checked (in C); ValueError saying what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"the file holds {type(data).__name__}, not a session object")
        try:
            unpack(data)  # a turn's long text, written once, is its message's (shared_text.py)
            session = msgspec.convert(data, cls)
        except msgspec.ValidationError as exc:
            raise ValueError(str(exc)) from None
        session.extra = {k: v for k, v in data.items() if k not in _KNOWN and k != "message_count"}
        if "turns" not in data and session.messages:  # written before turns were stored: the one converter
            from ..transcript.old_turns import turns_from_messages

            session.turns = turns_from_messages(session.messages, session.tool_calls)
        return session

    def compact(self) -> dict[str, Any]:
        """The listing row: what the sidebar needs, no transcript."""
        return {
            "session_id": self.session_id, "title": self.title, "created_at": self.created_at,
            "updated_at": self.updated_at, "backend": self.backend, "model": self.model,
            "message_count": len(self.messages), "active_stream_id": self.active_stream_id,
            "last_run_id": self.last_run_id, "notebook_path": self.notebook_path,
            "subtitle": subtitle(self.notebook_path), "kernel_id": self.kernel_id,
            "queued": queued_summary(self.queued), "queued_count": len(self.queued),
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


#: Characters of a queued message a listing row shows.
QUEUED_PREVIEW_CHARS = 200


def queued_summary(queued: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The queued turns as a listing row shows them: id, when, and the start of the message."""
    return [{"run_id": q.get("run_id"), "message": str(q.get("message") or "")[:QUEUED_PREVIEW_CHARS],
             "queued_at": q.get("queued_at")} for q in queued]


_FIELDS = tuple(f for f in fields(Session) if f.name != "extra")
_COMPACT_KEYS = frozenset(Session("x").compact())
_KNOWN = frozenset(f.name for f in _FIELDS)


class SessionLock:
    """A non-reentrant lock that knows its holder, so a reader can wait for it unless it holds it itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not self._lock.acquire(blocking, timeout):
            return False
        self._owner = threading.get_ident()
        return True

    def release(self) -> None:
        self._owner = None
        self._lock.release()

    def held_here(self) -> bool:
        """True if the calling thread holds the lock (acquiring it again would deadlock)."""
        return self._owner == threading.get_ident()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> SessionLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class SessionStore:
    """Sidecars under `root`, an in-memory cache, per-session locks and the listing index."""

    def __init__(self, root: Path, *, caps: ReadCaps = DEFAULT_CAPS) -> None:
        self.root = root
        self.caps = caps
        ensure_dir(root)
        self._cache: dict[str, Session] = {}
        self._locks: dict[str, SessionLock] = {}
        self._guard = threading.Lock()
        self._index: dict[str, dict[str, Any]] | None = None
        self._order = ListingOrder()
        self._index_timer: threading.Timer | None = None
        self._reconciled = threading.Event()
        self._closed = False
        self._flushing = threading.Lock()  # close() waits for a write the timer already began

    # -- locks and cache ------------------------------------------------------------
    def lock(self, session_id: str) -> SessionLock:
        """The session's non-reentrant lock. Repair never waits for it in a thread that holds it."""
        with self._guard:
            lock = self._locks.get(session_id)
            if lock is None:
                lock = self._locks[session_id] = SessionLock()
            return lock

    def cached(self, session_id: str) -> Session | None:
        return self._cache.get(session_id)

    def evict(self, session_id: str) -> None:
        self._cache.pop(session_id, None)

    def path(self, session_id: str) -> Path:
        return self.root / f"{validate_id(session_id, 'session id')}.json"

    # -- reading --------------------------------------------------------------------
    def exists(self, session_id: str) -> bool:
        return session_id in self._cache or os.path.lexists(self.path(session_id))

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
        return read_sidecar(path, self.caps.sidecar)

    # -- writing --------------------------------------------------------------------
    def create(self, **values: Any) -> Session:
        session = Session(session_id=new_session_id(), **values)
        self.save(session)
        return session

    def save(self, session: Session, *, touch: bool = True) -> None:
        """Write the sidecar atomically (tmp + fsync + rename + dir fsync), then cache and index it.

        A long transcript's JSON is encoded piece by piece into the temp file (`jsonstream`),
        so it costs no second copy of itself in memory; a short one's in one call.

        `touch=False` is for maintenance (repair, retries): it must not reorder the listing.
        A failed save changes nothing others can see: the session leaves the cache (so
        the next read is the sidecar as it still is on disk) and the error propagates.
        """
        validate_id(session.session_id, "session id")
        data = session.to_json(typed=True)
        data["turns"] = pack(session.turns, session.messages)  # a long text is written once (shared_text.py)
        if touch:
            data["updated_at"] = time.time()
        path = self.path(session.session_id)
        try:
            atomic_write(path, encode(data, LONG_TEXT_KEYS, NESTED_LIST_KEYS))  # a long one is encoded as it is written
        except BaseException:
            self._cache.pop(session.session_id, None)
            raise
        session.updated_at = data["updated_at"]
        self._cache[session.session_id] = session
        row = session.compact()
        row["mtime_ns"] = _mtime_ns(path)
        self._index_put(session.session_id, row)

    def replace(self, session_id: str, **changes: Any) -> Session:
        """Save a changed copy of the session, then cache it: a failed save leaves the cached one as it was.

        The caller holds the session lock.
        """
        session = dataclasses.replace(self.load(session_id), **changes)
        self.save(session)
        return session

    def delete(self, session_id: str, *, corrupt: bool = False) -> None:
        """Remove the sidecar (a link is removed, never followed). Unreadable ones only with `corrupt=True`."""
        path = self.path(session_id)
        if not corrupt:
            self.load(session_id)  # CorruptSession: deleting an unreadable file takes the explicit flag
        try:
            _remove_entry(path, tree=corrupt)
        except FileNotFoundError:
            raise UnknownSession(session_id) from None
        self._cache.pop(session_id, None)
        self._index_put(session_id, None)

    # -- listing --------------------------------------------------------------------
    def list(self) -> list[dict[str, Any]]:
        """Compact rows, newest first. Corrupt sidecars are listed with `corrupt: true`."""
        index = self._load_index()
        with self._guard:  # only the order is taken under the lock; rows are replaced, never changed, by saves
            rows = [index[sid] for sid in self._order.newest_first(index)]
        return [_listing_row(row) for row in rows]

    def page(self, limit: int, before: str | None = None) -> Page:
        """At most `limit` rows older than the cursor `before`, newest first, and the cursor after them.

        The order is kept sorted as sessions change, so a page costs a bisect and a
        slice however many sessions there are.
        """
        index = self._load_index()
        with self._guard:
            sids, next_cursor = self._order.page(index, limit, before)
            rows = [index[sid] for sid in sids]
        return Page([_listing_row(row) for row in rows], next_cursor)

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
                self._order.reset()
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
            self._order.reset()
            return index

    def _read_index_file(self) -> dict[str, dict[str, Any]]:
        """The saved index, if it parses and every row is well typed; else {} (rebuilt from the sidecars)."""
        try:
            data = check_index(orjson.loads(read_capped(self.root / INDEX_NAME, self.caps.index)))
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("session index cannot be read (%s); rebuilding it from the sidecars", exc)
            return {}
        if data is None:
            log.warning("session index has rows of the wrong shape; rebuilding it from the sidecars")
            return {}
        return data

    def _reconcile_index(self, index: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Trust an index row only while its sidecar's mtime is unchanged; re-read the others."""
        fresh: dict[str, dict[str, Any]] = {}
        changed = False
        with os.scandir(self.root) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(("_", ".")) or not name.endswith(".json") or not is_valid_id(name[:-5]):
                    continue
                sid = name[:-5]
                info = entry.stat(follow_symlinks=False)
                mtime = info.st_mtime_ns if stat.S_ISREG(info.st_mode) else -1  # links and dirs: always re-read
                row = index.get(sid)
                if row is None or row.get("mtime_ns") != mtime or _stale_shape(row):
                    row = self._index_row_from_disk(Path(entry.path), sid, mtime)
                    changed = True
                if row is not None:
                    fresh[sid] = row
        if changed or len(fresh) != len(index):
            self._schedule_index_write()
        return fresh

    def _index_row_from_disk(self, path: Path, sid: str, mtime: int) -> dict[str, Any] | None:
        try:
            row = self._read(path).compact()
        except CorruptSession:
            row = {"session_id": sid, "title": sid, "updated_at": 0, "corrupt": True, "error": CORRUPT_ROW_ERROR}
        except UnknownSession:  # removed between the directory scan and the read
            return None
        row["mtime_ns"] = mtime
        return row

    def _index_put(self, session_id: str, row: dict[str, Any] | None) -> None:
        index = self._load_index()
        with self._guard:
            self._order.discard(session_id, index.get(session_id))
            if row is None:
                index.pop(session_id, None)
            else:
                index[session_id] = row
                self._order.add(session_id, row)
        self._schedule_index_write()

    def _schedule_index_write(self) -> None:
        with self._guard:
            if self._index_timer is not None or self._closed:
                return
            timer = threading.Timer(INDEX_WRITE_DELAY_S, self.flush_index)
            timer.daemon = True
            self._index_timer = timer
        timer.start()

    def flush_index(self) -> None:
        """Write the listing index now (it is also written shortly after every change)."""
        with self._flushing:
            self._flush_index()

    def _flush_index(self) -> None:
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
        """Write a pending index change now and schedule no more (the index is a cache the next start checks)."""
        with self._guard:
            self._closed = True
            timer, self._index_timer = self._index_timer, None
        if timer is not None:
            timer.cancel()
        self.flush_index()  # also waits for a write already under way


def _stale_shape(row: dict[str, Any]) -> bool:
    """An index row written by an older version lacks fields a listing row has now: re-read its sidecar."""
    return not row.get("corrupt") and not _COMPACT_KEYS <= row.keys()


def _mtime_ns(path: Path) -> int:
    return os.stat(path, follow_symlinks=False).st_mtime_ns


def _listing_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "mtime_ns"}


def _remove_entry(path: Path, *, tree: bool) -> None:
    """Unlink `path` through its folder's fd (neither it nor its folder followed if a link);
    with `tree`, a folder planted in a sidecar's place goes too (an unreadable sidecar deleted on request)."""
    dir_fd = open_dir_nofollow(path.parent)
    try:
        if tree:
            os.lstat(path.name, dir_fd=dir_fd)  # FileNotFoundError: there is no such session
            remove_tree_at(dir_fd, path.name)
        else:
            os.unlink(path.name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


# Imported last: the transcript package reads `Session` from this module (the field's type is resolved when
# a sidecar is first converted, by then this name is bound).
def valid_ts(value: Any) -> float | None:
    """A positive timestamp, or None for anything else."""
    try:
        ts = float(value)
    except (TypeError, ValueError):
        return None
    return ts if ts > 0 else None


from ..transcript.turns import StoredTurn  # noqa: E402


def read_sidecar(path: Path, cap: int = DEFAULT_CAPS.sidecar) -> Session:
    """Parse and type-check a sidecar; never follows a link, never blocks, never reads more than `cap`
    bytes, never raises anything but the two below.

    The one way a sidecar is read: the store, and tools that read a state dir without a server.
    A FIFO, device, socket or folder in its place, or a file over `cap`, is corrupt.
    """
    try:
        raw = read_capped(path, cap)
    except FileNotFoundError:
        raise UnknownSession(path.stem) from None
    except OSError as exc:  # a planted link (SymlinkRefused), a FIFO or folder (NotAFile), too large, no permission
        log.error("session sidecar %s cannot be opened and was left in place: %s", path, exc)
        raise CorruptSession(f"session {path.stem} cannot be opened: {exc.strerror or exc}") from exc
    try:
        session = Session.from_json(orjson.loads(raw))
        if session.session_id != path.stem:
            raise ValueError(f"session_id {session.session_id!r} does not match the file name")
        return session
    except (ValueError, TypeError) as exc:
        log.error("session sidecar %s is corrupt and was left in place: %s", path, exc)
        raise CorruptSession(f"session {path.stem} cannot be read: {exc}") from exc

