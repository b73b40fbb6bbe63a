"""A JSON object encoded a piece at a time, so a long sidecar is never held encoded in memory.

`store.save` hands these pieces to `fsio.atomic_write`, which writes them to the temp file
as they come: a session's encoding costs one buffer (`FLUSH_BYTES`) of memory, not its size.
Items are encoded straight into that buffer (`msgspec` `encode_into`: no object per item).
The layout is one key of the object per line and one item of a top-level list per line,
each item compact: still readable. A string longer than `LONG_TEXT` chars in a list item
(a long answer) is encoded slice by slice, so it is never materialised a second time as JSON.
"""

from __future__ import annotations

from typing import Any, Final, Iterator

import msgspec

#: Encoded bytes gathered before a piece is handed on.
FLUSH_BYTES: Final = 256 * 1024
#: Strings longer than this (chars) inside a list item are encoded slice by slice.
LONG_TEXT: Final = 256 * 1024

#: Values JSON has no type for are written as their `str` (what sidecars always did).
_ENCODER: Final = msgspec.json.Encoder(enc_hook=str)


class _Buffer:
    """Encoded bytes waiting to be handed on."""

    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data = bytearray()

    def add(self, value: Any) -> None:
        _ENCODER.encode_into(value, self.data, -1)  # -1: append

    def key(self, sep: bytes, key: str, colon: bytes) -> None:
        """`sep`, the key as JSON, then `colon`: the start of one member of an object."""
        self.data += sep
        self.add(key)
        self.data += colon

    def full(self) -> bool:
        return len(self.data) >= FLUSH_BYTES

    def take(self) -> bytes:
        piece = bytes(self.data)
        self.data.clear()
        return piece


def iter_object(data: dict[str, Any]) -> Iterator[bytes]:
    """The JSON of `data`, in pieces of about `FLUSH_BYTES` (an encoding error is raised mid-way)."""
    out = _Buffer()
    sep = b"{\n  "
    for key, value in data.items():
        out.key(sep, key, b": ")
        sep = b",\n  "
        if isinstance(value, list) and value:
            yield from _list(out, value)
        else:
            out.add(value)
    out.data += b"{}" if not data else b"\n}"
    yield out.take()


def _list(out: _Buffer, items: list[Any]) -> Iterator[bytes]:
    sep = b"[\n    "
    for item in items:
        out.data += sep
        sep = b",\n    "
        if isinstance(item, dict) and _has_long_text(item):
            yield from _long_item(out, item)
        else:
            out.add(item)
        if out.full():
            yield out.take()
    out.data += b"\n  ]"


def _has_long_text(item: dict[str, Any]) -> bool:
    return any(v.__class__ is str and len(v) > LONG_TEXT for v in item.values())


def _long_item(out: _Buffer, item: dict[str, Any]) -> Iterator[bytes]:
    """A list item holding a long string: its other values whole, the string slice by slice."""
    sep = b"{"
    for key, value in item.items():
        out.key(sep, key, b":")
        sep = b","
        if value.__class__ is not str or len(value) <= LONG_TEXT:
            out.add(value)
            continue
        for start in range(0, len(value), LONG_TEXT):  # a str slice never splits a code point
            at = len(out.data)
            out.add(value[start:start + LONG_TEXT])  # '"<slice>"': one string made of all slices
            out.data.pop()  # its closing quote
            if start:
                del out.data[at]  # and, after the first slice, its opening quote
            if out.full():
                yield out.take()
        out.data += b'"'
    out.data += b"}"
