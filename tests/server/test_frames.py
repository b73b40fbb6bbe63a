"""Batched WebSocket frames are exactly what tornado would have sent, one message per journal line."""

from __future__ import annotations

from typing import Any

import pytest
from tornado.websocket import WebSocketProtocol13

from hermes_jupyter.server.frames import raw_stream, text_frames


class _Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data


def _tornado_frames(lines: list[bytes]) -> bytes:
    """Tornado's own framing of the same messages (server side: unmasked, no compression)."""
    protocol = WebSocketProtocol13.__new__(WebSocketProtocol13)
    protocol.mask_outgoing = False
    protocol._wire_bytes_out = 0
    protocol.stream = _Capture()  # type: ignore[assignment]
    for line in lines:
        protocol._write_frame(True, 0x1, line[:-1])
    return protocol.stream.data  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 300_000])
def test_frames_match_tornado_for_every_length_class(size: int) -> None:
    lines = [b'{"seq":1}\n', ("é" * (size // 2) + "x" * (size % 2)).encode() + b"\n", b"{}\n"]
    assert text_frames(lines) == _tornado_frames(lines)


def test_a_connection_with_compression_or_a_mask_is_not_written_directly() -> None:
    stream = _Capture()

    def conn(**attrs: Any) -> Any:
        return type("Conn", (), {"stream": stream, "_compressor": None, "mask_outgoing": False, **attrs})()

    assert raw_stream(conn()) is stream
    assert raw_stream(conn(_compressor=object())) is None
    assert raw_stream(conn(mask_outgoing=True)) is None
    assert raw_stream(object()) is None and raw_stream(None) is None
