"""An EventSink that keeps what a backend emits, so backend tests can assert on the event sequence."""

from __future__ import annotations

from typing import Any


class RecordingSink:
    """Stores `(event, payload)` pairs in emission order; thread-safe enough for one producer."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        self.events.append((event, payload))

    def names(self) -> list[str]:
        return [event for event, _ in self.events]

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [payload for name, payload in self.events if name == event]

    def text(self, event: str = "token") -> str:
        """The concatenated `text` of every `event` (tokens by default)."""
        return "".join(str(payload["text"]) for payload in self.payloads(event))
