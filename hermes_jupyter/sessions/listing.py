"""The session list: its order, newest first, kept sorted as sessions change, its page cursors, and
its read side (`SessionListing`, which the engine composes to answer `GET sessions`).

At 100k sessions sorting the whole index per request costs tens of milliseconds,
so the order is a sorted list of `(updated_at in µs, session_id)` maintained by
bisect on every save and delete; a page is one bisect and a slice. A cursor
names the last row a page returned (`<µs>.<session_id>`), so the next page
starts right after it even while newer sessions are added in front.
"""

from __future__ import annotations

import asyncio
import bisect
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

import msgspec

_CURSOR = re.compile(r"([0-9]{1,20})\.([A-Za-z0-9_-]{1,64})")

Key = tuple[int, str]
Rows = list[dict[str, Any]]
#: Narrows a listing to what one caller may see (a kernel: its own sessions; server/scope.py decides).
Visible = Callable[[Rows], Rows]


class BadCursor(ValueError):
    """A `before` cursor that no page of ours handed out (HTTP 400)."""


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[dict[str, Any]]
    next: str | None


def sort_key(session_id: str, row: dict[str, Any]) -> Key:
    updated = row.get("updated_at")
    micros = int(updated * 1_000_000) if isinstance(updated, (int, float)) and updated > 0 else 0
    return micros, session_id


def encode_cursor(key: Key) -> str:
    return f"{key[0]}.{key[1]}"


def decode_cursor(cursor: str) -> Key:
    match = _CURSOR.fullmatch(cursor)
    if match is None:
        raise BadCursor(f"cursor {cursor[:80]!r} is not one this server handed out")
    return int(match.group(1)), match.group(2)


class ListingOrder:
    """Session ids sorted by (updated_at, id); rebuilt lazily from the index after `reset()`.

    Not thread-safe on its own: the store calls it under its guard lock.
    """

    def __init__(self) -> None:
        self._keys: list[Key] | None = None
        self._key_of: dict[str, Key] = {}

    def reset(self) -> None:
        self._keys = None
        self._key_of = {}

    def _built(self, index: dict[str, dict[str, Any]]) -> list[Key]:
        if self._keys is None:
            self._key_of = {sid: sort_key(sid, row) for sid, row in index.items()}
            self._keys = sorted(self._key_of.values())
        return self._keys

    def add(self, session_id: str, row: dict[str, Any]) -> None:
        if self._keys is None:
            return  # built from the index on the next read
        key = sort_key(session_id, row)
        self._key_of[session_id] = key
        bisect.insort(self._keys, key)

    def discard(self, session_id: str, row: dict[str, Any] | None) -> None:
        if self._keys is None or row is None:
            return
        key = self._key_of.pop(session_id, None)
        if key is None:
            return
        at = bisect.bisect_left(self._keys, key)
        if at < len(self._keys) and self._keys[at] == key:
            del self._keys[at]

    def newest_first(self, index: dict[str, dict[str, Any]]) -> list[str]:
        return [sid for _, sid in reversed(self._built(index))]

    def page(self, index: dict[str, dict[str, Any]], limit: int, before: str | None) -> tuple[list[str], str | None]:
        """Up to `limit` ids older than `before`, newest first, and the cursor for the page after."""
        keys = self._built(index)
        end = len(keys) if before is None else bisect.bisect_left(keys, decode_cursor(before))
        start = max(0, end - limit)
        chosen = keys[start:end]
        chosen.reverse()
        next_cursor = encode_cursor(chosen[-1]) if start > 0 and chosen else None
        return [sid for _, sid in chosen], next_cursor


class ListingSource(Protocol):
    """What the read side reads: the store's whole list and its pages."""

    def list(self) -> Rows: ...

    def page(self, limit: int, before: str | None = None) -> Page: ...


class SessionListing:
    """`GET sessions`: the whole list, JSON-encoded, or one page, of one notebook's sessions or of all.

    The whole list is gathered and encoded on the default thread pool: at 100k sessions it is
    megabytes, which on the event loop would stall streams and on the engine's two I/O threads
    would delay run admission. A page is a bisect and a slice, so it takes the engine's `offload`.
    """

    def __init__(self, store: ListingSource, offload: Callable[..., Awaitable[Any]]) -> None:
        self.store = store
        self.offload = offload

    def rows(self, notebook_path: str | None = None, visible: Visible | None = None) -> Rows:
        """The whole list, newest first (blocking: call it off the loop)."""
        rows = _of_notebook(self.store.list(), notebook_path)
        return rows if visible is None else visible(rows)

    async def encoded(self, notebook_path: str | None = None, visible: Visible | None = None) -> bytes:
        """The whole list as a JSON array, built and encoded off the loop and off the engine's I/O pool."""
        return await asyncio.to_thread(lambda: msgspec.json.encode(self.rows(notebook_path, visible)))

    async def page(self, limit: int, before: str | None = None, notebook_path: str | None = None,
                   visible: Visible | None = None) -> Page:
        """Up to `limit` rows older than the cursor `before`; a narrowed caller (`visible`: a kernel, whose
        sessions are few) gets all of its own in one page."""
        if visible is not None:
            return Page(await asyncio.to_thread(self.rows, notebook_path, visible), None)
        page: Page = await self.offload(self.store.page, limit, before)
        # a notebook's sessions are few; filtering one page keeps the cursor honest
        return Page(_of_notebook(page.rows, notebook_path), page.next)


def _of_notebook(rows: Rows, notebook_path: str | None) -> Rows:
    """The rows of one notebook's sessions (all of them when no notebook is named)."""
    return rows if notebook_path is None else [r for r in rows if r.get("notebook_path") == notebook_path]
