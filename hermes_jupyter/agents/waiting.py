"""One note per wait for the model's first data, updated while the wait lasts (docs/transcript.md "Waiting notes").

A provider can be silent for minutes before a reply begins. The user should see that we are waiting, and
for how long, without a pile of notes: every row of one wait carries the same `wait_id`, and both folds
show them as one note with the latest words. When the model starts answering, a note that was shown ends
as "The model took N s to start answering."; a wait shorter than the first note shows nothing.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType

from ..events import STATUS
from .base import EventSink
from .errors import waited_text, waiting_note, waiting_text


class WaitingNote:
    """`async with WaitingNote(sink, wait_id, every) as wait:` — call `wait.answered()` on the reply's first data.

    Until then a `status` row every `every` seconds (none when `every <= 0`). `stop()` ends the wait without
    an answer (an error reply): the note, if shown, stays as it last read, and the run's marker says the rest.
    """

    def __init__(self, sink: EventSink, wait_id: str, every: float) -> None:
        self.heard = False  # read on every chunk: a plain attribute, no call
        self._sink, self._id, self._every = sink, wait_id, every
        self._event = asyncio.Event()
        self._started = time.monotonic()
        self._shown = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> "WaitingNote":
        return self.start()

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        task = self.close()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def start(self) -> "WaitingNote":
        """Begin the wait now (in a running event loop); `close()` ends it. The `async with` form does both."""
        self._started = time.monotonic()
        if self._every > 0 and self._task is None:
            self._task = asyncio.create_task(self._note())
        return self

    def close(self) -> "asyncio.Task[None] | None":
        """End the wait and its timer; the cancelled timer task (None without one), for a caller that awaits it."""
        self.stop()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        return task

    def answered(self) -> None:
        """The reply's first data: no more notes; a note that was shown now says how long the wait took."""
        if self.heard:
            return
        self.stop()
        if self._shown:
            self._sink.emit(STATUS, waiting_note(waited_text(time.monotonic() - self._started), self._id))

    def stop(self) -> None:
        self.heard = True
        self._event.set()

    async def _note(self) -> None:
        n = 1
        while True:
            try:
                await asyncio.wait_for(self._event.wait(), max(0.0, self._started + n * self._every - time.monotonic()))
                return
            except asyncio.TimeoutError:
                if self.heard:  # answered while this timeout was on its way: the wait is over
                    return
                self._sink.emit(STATUS, waiting_note(waiting_text(n * self._every), self._id))
                self._shown = True
                n += 1
