"""Journal lines as WebSocket text frames, many per socket write.

Tornado's `write_message` frames one message per call, wraps each in a Task and
issues one `send(2)` each: at 100 streams that per-message cost, not the journal,
is what the server adds over the engine. A stream's rows are already JSON bytes
(the journal's own lines), so a batch is framed here (RFC 6455 §5.2: server
frames are unmasked) and handed to the connection's stream in one write. Where
the connection is not the plain case (per-message compression negotiated, a
client-side mask, an unknown protocol) the caller falls back to `write_message`.
"""

from __future__ import annotations

import struct
from typing import Any, Iterable

_TEXT_FIN = 0x81


def text_frames(lines: Iterable[bytes]) -> bytes:
    """Unmasked, uncompressed final text frames of newline-terminated lines (the newline dropped)."""
    parts: list[Any] = []
    add = parts.append
    for line in lines:
        size = len(line) - 1
        if size < 126:
            add(bytes((_TEXT_FIN, size)))
        elif size <= 0xFFFF:
            add(struct.pack("!BBH", _TEXT_FIN, 126, size))
        else:
            add(struct.pack("!BBQ", _TEXT_FIN, 127, size))
        add(memoryview(line)[:-1])
    return b"".join(parts)


def raw_stream(connection: Any) -> Any | None:
    """The IOStream under a server-side WebSocket connection when frames may be written to it
    directly (no compression, no mask), else None."""
    if connection is None or getattr(connection, "_compressor", True) is not None:
        return None
    if getattr(connection, "mask_outgoing", True):
        return None
    stream = getattr(connection, "stream", None)
    return stream if callable(getattr(stream, "write", None)) else None
