"""The EventSink a backend writes to: journal first, then publish, in seq order from any thread."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ..events import TERMINAL_EVENTS
from ..journal import Appended, RunJournal
from ..redact import PATTERNS_ONLY, Redactor
from .fanout import RunChannel


class RunSink:
    """Thread-safe `emit`: the row is in the journal before any observer can see it.

    Rows appended from another thread are published through the loop's FIFO
    queue; while any of those are pending, rows from the loop thread queue
    behind them, so observers always see seq order. Once `close()`d (cancel,
    interrupt, abandon), a backend's late events are dropped. Every payload is redacted here,
    before it is written: this is the one door into a run's journal, so nothing a provider
    echoes (a key in an error, a token in a tool result) reaches the disk, a socket or a notebook.
    """

    def __init__(self, writer: RunJournal, channel: RunChannel, loop: asyncio.AbstractEventLoop,
                 redactor: Redactor = PATTERNS_ONLY) -> None:
        self._writer = writer
        self._redactor = redactor
        self._channel = channel
        self._loop = loop
        self._lock = threading.Lock()
        self._open = True
        self._queued = 0

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        if event in TERMINAL_EVENTS:
            raise ValueError(f"backends do not emit terminal events ({event}); return a TurnResult instead")
        clean = self._redactor.value(payload)
        with self._lock:
            if not self._open:
                return
            self._publish_locked(self._writer.append(event, clean))

    def close(self) -> None:
        """Drop whatever the backend emits from now on."""
        with self._lock:
            self._open = False

    def append_terminal(self, event: str, payload: dict[str, Any]) -> Appended:
        """The engine's own terminal row; also closes the sink."""
        clean = self._redactor.value(payload)
        with self._lock:
            self._open = False
            appended = self._writer.append(event, clean)
            self._publish_locked(appended)
            return appended

    def _publish_locked(self, appended: Appended) -> None:
        # On the loop itself (the common case: async backends) publish at once, no self-pipe wake-up.
        if self._queued == 0 and _running_loop() is self._loop:
            self._channel.publish(appended)
            return
        self._queued += 1
        self._loop.call_soon_threadsafe(self._publish_queued, appended)

    def _publish_queued(self, appended: Appended) -> None:
        with self._lock:
            self._queued -= 1
        self._channel.publish(appended)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any. (The sink is built off the loop, on the admission
    thread, so the loop's thread cannot be taken from where it is constructed.)"""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
