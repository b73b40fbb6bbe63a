"""A JSON object encoded a piece at a time, so a long sidecar is never held encoded in memory.

`store.save` hands these pieces to `fsio.atomic_write`, which writes them to the temp file
as they come: a session's encoding costs one buffer (`FLUSH_BYTES`) of memory, not its size.
List items are encoded `BATCH` at a time (one orjson call, one line of the file: an orjson
result carries kilobytes of spare room, so one per item would cost more than the items); a small
result is kept as an exact-size copy (`_held`), and the pieces are joined once per flush. The
layout is one key of the object per line. A string longer than `LONG_TEXT` chars under one of the
`long_keys` of a list item (a long answer, joined from many journal rows; any single row's strings
are capped far below) is encoded slice by slice, so it is never materialised a second time as JSON.

A list item may itself hold a long list under one of the `nested_keys` (a stored turn's `rows`,
each key naming the long keys of its own items, so a row is checked for `text` alone and a list of
plain values for nothing): such an item is written key by key and that list like a top-level one,
its items' long texts sliced, so a turn of thousands of rows is never encoded in one call either.
Items may be msgspec Structs (stored turns and their rows): a batch of them is encoded by msgspec,
in C, so a session's typed rows never exist as a second, dict copy.

`encode` hands a small object's JSON over whole, in one call: pieces cost a few buffers'
worth of allocation and copying more, about 1 ms for a sidecar of a thousand messages
(benchmarks/bench_core.py, recovery at 10k events), and a small JSON costs little memory.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Final, Iterable, Iterator, Mapping

import msgspec
import orjson

#: Encoded bytes gathered before a piece is handed on.
FLUSH_BYTES: Final = 64 * 1024
#: A list key of list items → the keys of *its* items whose strings may be long (see `iter_object`).
Nested = Mapping[str, tuple[str, ...]]
NO_NESTED: Final[Nested] = MappingProxyType({})
#: orjson results at least this long are kept as views until the flush; shorter ones as exact copies.
HOLD_VIEW_BYTES: Final = 64 * 1024
#: List items encoded in one call (one line of the file).
BATCH: Final = 64
#: Strings longer than this (chars) inside a list item are encoded slice by slice,
#: `SLICE_CHARS` a slice (half a flush of plain text: a slice's JSON stays about a flush long).
SLICE_CHARS: Final = 32 * 1024
LONG_TEXT: Final = 256 * 1024
#: `encode` makes one piece of an object whose estimated JSON is at most this long.
WHOLE_BYTES: Final = 4 << 20
#: What the estimate counts for each list item besides its long texts.
ITEM_BYTES: Final = 1024


class _Buffer:
    """Encoded bytes waiting to be handed on: exact-size pieces, joined once per flush."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[bytes | memoryview] = []
        self.size = 0

    def raw(self, data: bytes | memoryview) -> None:
        self.parts.append(data)
        self.size += len(data)

    def add(self, value: Any) -> None:
        self.raw(_held(_dumps(value), 0, None))

    def key(self, sep: bytes, key: str, colon: bytes) -> None:
        """`sep`, the key as JSON, then `colon`: the start of one member of an object."""
        self.raw(sep + _dumps(key) + colon)

    def full(self) -> bool:
        return self.size >= FLUSH_BYTES

    def take(self) -> bytes:
        piece = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        return piece


def encode(
    data: dict[str, Any], long_keys: tuple[str, ...] = (), nested_keys: Nested = NO_NESTED
) -> bytes | Iterator[bytes]:
    """The JSON of `data`: whole if its estimate is within `WHOLE_BYTES`, else `iter_object`'s pieces."""
    if _estimate(data, long_keys, nested_keys) <= WHOLE_BYTES:
        return _dumps(data)
    return iter_object(data, long_keys, nested_keys)


def _estimate(data: dict[str, Any], long_keys: tuple[str, ...], nested_keys: Nested = NO_NESTED) -> int:
    """About how long the JSON of `data` is: its strings, the `long_keys` texts of its lists'
    items (and of their `nested_keys` lists' items) and `ITEM_BYTES` an item (one pass per key,
    as `_long_items`). Stops past `WHOLE_BYTES`."""
    size = 0
    for value in data.values():
        if value.__class__ is str:
            size += len(value)
        elif value.__class__ is list:
            size += ITEM_BYTES * len(value)
            for key in long_keys:
                size += sum(_text_lengths(value, key))
            for nested, inner_keys in _nested_lists(value, nested_keys):
                size += _estimate({"": nested}, inner_keys)
        if size > WHOLE_BYTES:
            break
    return size


def _nested_lists(items: list[Any], nested_keys: Nested) -> Iterator[tuple[list[Any], tuple[str, ...]]]:
    """The lists the items hold under `nested_keys`, each with its items' long keys (one lookup per item and key)."""
    for key, inner_keys in nested_keys.items():
        for item in items:
            if (inner := _get(item, key)).__class__ is list and inner:
                yield inner, inner_keys


def iter_object(
    data: dict[str, Any], long_keys: tuple[str, ...] = (), nested_keys: Nested = NO_NESTED
) -> Iterator[bytes]:
    """The JSON of `data`, in pieces of about `FLUSH_BYTES` (an encoding error is raised mid-way).

    `long_keys`: the keys of list items whose strings may be long (texts joined from many
    journal rows); they alone are checked, so the check costs two lookups an item, not a scan.
    """
    out = _Buffer()
    sep = b"{\n  "
    for key, value in data.items():
        out.key(sep, key, b": ")
        sep = b",\n  "
        if isinstance(value, list) and value:
            yield from _list(out, value, long_keys, nested_keys)
        else:
            out.add(value)
    out.raw(b"{}" if not data else b"\n}")
    yield out.take()


def _list(out: _Buffer, items: list[Any], long_keys: tuple[str, ...], nested_keys: Nested = NO_NESTED) -> Iterator[bytes]:
    """`BATCH` items a line, each batch in one orjson call; an item with a long text (or a long nested
    list) alone, in pieces."""
    sep = b"[\n    "
    start = 0
    for at in (*_long_items(items, long_keys, nested_keys), len(items)):
        for low in range(start, at, BATCH):  # the items before the next long one
            out.raw(sep)
            out.raw(_held(_dumps_batch(items[low:min(low + BATCH, at)]), 1, -1))
            sep = b",\n    "
            if out.full():
                yield out.take()
        if at < len(items):
            out.raw(sep)
            sep = b",\n    "
            yield from _long_item(out, items[at], long_keys, nested_keys)
        start = at + 1
    out.raw(b"\n  ]")


def _long_items(items: list[Any], long_keys: tuple[str, ...], nested_keys: Nested = NO_NESTED) -> list[int]:
    """Where the items holding a long string under one of `long_keys`, or a list of more than `BATCH`
    items (or with a long string) under one of `nested_keys`, are (one pass per key)."""
    found: set[int] = set()
    for key in long_keys:
        found.update(at for at, length in enumerate(_text_lengths(items, key)) if length > LONG_TEXT)
    for key, inner_keys in nested_keys.items():
        for at, item in enumerate(items):
            inner = _get(item, key)
            if inner.__class__ is list and (len(inner) > BATCH or _long_items(inner, inner_keys)):
                found.add(at)
    return sorted(found)


def _text_lengths(items: list[Any], key: str) -> list[int]:
    """The length of each item's string under `key`, in order (0 for an item without one). One
    comprehension, no call an item: a turn of thousands of rows is scanned on every save."""
    return [
        len(text) if (text := item.get(key) if item.__class__ is dict else getattr(item, key, None)).__class__ is str
        else 0
        for item in items
    ]


def _get(item: Any, key: str) -> Any:
    """`item[key]` of a dict, the field of a Struct, else None."""
    if item.__class__ is dict:
        return item.get(key)
    return getattr(item, key, None) if isinstance(item, msgspec.Struct) else None


def _members(item: Any) -> Iterable[tuple[str, Any]]:
    """A dict's items, or a Struct's fields as its JSON has them (its tag first)."""
    if not isinstance(item, msgspec.Struct):
        return item.items()  # type: ignore[no-any-return]
    config = item.__struct_config__
    fields = [(name, getattr(item, name)) for name in item.__struct_fields__]
    return [(str(config.tag_field), config.tag), *fields] if config.tag_field is not None else fields


def _default(value: Any) -> Any:
    """What orjson cannot encode itself: a Struct as builtins (row by row), anything else as its `str`."""
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    return str(value)


def _dumps_batch(batch: list[Any]) -> bytes:
    """A batch of list items: one of Structs (a stored turn's rows) by msgspec's encoder, in C, with
    no dict made of each row on the way (4× faster); any other by orjson (`_dumps`)."""
    if isinstance(batch[0], msgspec.Struct):
        return _STRUCTS.encode(batch)
    return _dumps(batch)


#: Encodes Structs and what they hold; what JSON has no type for is written as its `str`, as `_default`.
_STRUCTS: Final = msgspec.json.Encoder(enc_hook=str)


def _held(encoded: bytes, start: int, stop: int | None) -> bytes | memoryview:
    """What the buffer keeps of an orjson result until the flush. orjson's bytes keep the allocation
    it wrote into (16 kB for a batch of 64 small numbers), so a small result is kept as an
    exact-size copy and the original freed at once: a flush of small rows held ~50× their size.
    A large result is kept as a view of itself, copied once, by the flush."""
    view = memoryview(encoded)[start:stop]
    # bytes(view), not encoded[start:stop]: a slice of the whole is the same object, spare room and all
    return bytes(view) if len(encoded) < HOLD_VIEW_BYTES else view


def _dumps(value: Any) -> bytes:
    """Compact JSON; values JSON has no type for are written as their `str` (what sidecars always did)."""
    return orjson.dumps(value, default=_default)


def _is_long(value: Any) -> bool:
    return value.__class__ is str and len(value) > LONG_TEXT


def _long_item(
    out: _Buffer, item: dict[str, Any], long_keys: tuple[str, ...] = (), nested_keys: Nested = NO_NESTED
) -> Iterator[bytes]:
    """A list item holding a long string: its other values whole, the string slice by slice; a list
    under one of `nested_keys` as `_list` writes one."""
    sep = b"{"
    for key, value in _members(item):
        out.key(sep, key, b":")
        sep = b","
        if key in nested_keys and value.__class__ is list and value:
            yield from _list(out, value, nested_keys[key])
            continue
        if not _is_long(value):
            out.add(value)
            continue
        out.raw(b'"')
        for start in range(0, len(value), SLICE_CHARS):  # a str slice never splits a code point
            out.raw(_dumps(value[start:start + SLICE_CHARS])[1:-1])  # one string made of all slices
            if out.full():
                yield out.take()
        out.raw(b'"')
    out.raw(b"}")
