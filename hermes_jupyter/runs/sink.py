"""The EventSink a backend writes to: journal first, then publish, in seq order from any thread."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from ..events import APPERROR, STATUS, TERMINAL_EVENTS, TOOL_COMPLETE
from ..journal import Appended, RunJournal
from ..redact import PATTERNS_ONLY, Redactor, mask_error_value
from ..redact_run import RunRedactor
from ..redact_stream import TEXT_STREAMS, StreamRedactor
from .fanout import RunChannel

log = logging.getLogger(__name__)

class RunSink:
    """Thread-safe `emit`: the row is in the journal before any observer can see it.

    Rows appended from another thread are published through the loop's FIFO
    queue; while any of those are pending, rows from the loop thread queue
    behind them, so observers always see seq order. Once `close()`d (cancel,
    interrupt, abandon), a backend's late events are dropped. Every payload is redacted here,
    before it is written: this is the one door into a run's journal, so nothing a provider
    echoes (a key in an error, a token in a tool result) reaches the disk, a socket or a notebook.

    Text deltas pass the run's `StreamRedactor`: the tail that could still become a secret is
    held and journaled with the next delta, or at a flush point: any other event, `flush()` (the
    engine calls it before it folds the journal to settle), `close()` and the terminal row. There
    is no idle timer: it would release half a key whenever a slow model pauses mid-word.
    Error and status rows are also masked by shape; tool results teach the run's redactor the
    values they assign to secret names (docs/journal.md, "Streamed text and redaction").

    A row the journal refuses (a full disk) takes the held text with it: it was never shown and is
    never journaled after the gap. `emit`, `flush` and `append_terminal` raise the refusal (the
    engine marks the run cut by a full disk); `close` only logs it, because it sits on the paths
    that end a run and those must still end its stream.
    """

    def __init__(self, writer: RunJournal, channel: RunChannel, loop: asyncio.AbstractEventLoop,
                 redactor: Redactor | RunRedactor = PATTERNS_ONLY) -> None:
        self._writer = writer
        self._redactor = redactor if isinstance(redactor, RunRedactor) else RunRedactor(redactor)
        self._stream = StreamRedactor(self._redactor)
        self._channel = channel
        self._loop = loop
        self._lock = threading.Lock()
        self._open = True
        self._queued = 0

    @property
    def redactor(self) -> RunRedactor:
        """This run's redactor (the notebook tools share it, so what they learn masks the model's echo)."""
        return self._redactor

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        if event in TERMINAL_EVENTS:
            raise ValueError(f"backends do not emit terminal events ({event}); return a TurnResult instead")
        text = payload.get("text")
        if event in TEXT_STREAMS and text.__class__ is str and len(payload) == 1:
            with self._lock:
                if self._open:
                    try:
                        for name, piece in self._stream.feed(event, text):
                            self._append_locked(name, {"text": piece})
                    except BaseException:
                        self._stream.drop()  # the held tail continues the refused row: never after a gap
                        raise
            return
        clean = self._clean(event, payload)
        with self._lock:
            if not self._open:
                return
            self._flush_locked()
            self._append_locked(event, clean)

    def flush(self) -> None:
        """Journal the text held back so far (before the engine folds the journal)."""
        with self._lock:
            if self._open:
                self._flush_locked()

    def close(self) -> None:
        """Journal what is held if the journal takes it, then drop whatever the backend emits from now on.

        Never raises: a refused flush loses only the held text (never shown), and the caller goes on
        to end the run, whose terminal row meets the same refusal and ends the stream as cut."""
        with self._lock:
            try:
                if self._open:
                    self._flush_locked()
            except (OSError, ValueError):
                log.warning("the text held back at the end of a run could not be journaled", exc_info=True)
            finally:
                self._open = False

    def append_terminal(self, event: str, payload: dict[str, Any]) -> Appended:
        """The engine's own terminal row; also closes the sink (even when the journal refuses the row)."""
        clean = self._clean(event, payload)
        with self._lock:
            try:
                if self._open:
                    self._flush_locked()
            finally:
                self._open = False
            return self._append_locked(event, clean)

    def _clean(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        if event == TOOL_COMPLETE:
            self._redactor.learn_from(payload)
        if event == APPERROR or (event == STATUS and payload.get("kind") != "steer"):  # a steer quotes the user
            return mask_error_value(self._redactor.current, payload)  # type: ignore[no-any-return]
        return self._redactor.value(payload)  # type: ignore[no-any-return]

    def _flush_locked(self) -> None:
        held = self._stream.flush()
        if held is not None:
            self._append_locked(held[0], {"text": held[1]})

    def _append_locked(self, event: str, payload: dict[str, Any]) -> Appended:
        appended = self._writer.append(event, payload)
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
