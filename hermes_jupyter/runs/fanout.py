"""Live fan-out of a run's journal rows to any number of observers.

Observers pull; the run never pushes into per-observer queues. Each run keeps a
bounded window of its latest rows in memory; an observer reads forward from its
own cursor, from that window when it can and from the journal file when it has
fallen behind. So a slow observer costs no memory and never slows the run, and
every observer sees each row exactly once, in seq order, with no gap. Rows enter
the window only after they are in the journal.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import AsyncIterator, Callable

from ..journal import Appended, Journals

#: Rows kept in memory per live run; older ones are read back from the journal.
DEFAULT_WINDOW = 4096


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Nothing happened for `heartbeat_s`: the transport should send a keepalive."""

    last_seq: int


class RunChannel:
    """The live side of one run: its window of recent rows and the observers waiting on it.

    All methods run on the event loop thread.
    """

    def __init__(self, session_id: str, run_id: str, journals: Journals, *, window: int = DEFAULT_WINDOW) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.journals = journals
        self.window = window
        self._rows: list[Appended] = []
        self._first_seq = 1
        self.last_seq = 0
        self.closed = False
        #: Set when the run ended without a journaled terminal row (`disk_full`, `unjournaled`).
        self.failure: str | None = None
        self._waiters: list[asyncio.Future[None]] = []

    def publish(self, appended: Appended) -> None:
        """Make a journaled row visible to observers."""
        rows = self._rows
        if not rows:
            self._first_seq = appended.seq
        rows.append(appended)
        self.last_seq = appended.seq
        if len(rows) > 2 * self.window:
            cut = len(rows) - self.window
            del rows[:cut]
            self._first_seq += cut
        if appended.terminal:
            self.closed = True
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            _resolve(fut)

    def window_after(self, cursor: int) -> list[Appended] | None:
        """Rows with seq > cursor from memory, or None if some of them already left the window."""
        if cursor + 1 < self._first_seq and self._rows:
            return None
        start = cursor + 1 - self._first_seq
        return self._rows[max(0, start):]

    async def wait(self, timeout_s: float) -> None:
        """Until the next publish or close, or `timeout_s`. One future and one timer handle per
        wait (`asyncio.wait_for` would add a second future and callbacks for every row)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append(fut)
        timer = loop.call_later(timeout_s, _resolve, fut)
        try:
            await fut
        finally:
            timer.cancel()


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Observer:
    """One client following a run from a cursor. Iterate it for batches of rows (or heartbeats)."""

    def __init__(
        self,
        channel: RunChannel | None,
        journals: Journals,
        session_id: str,
        run_id: str,
        after_seq: int,
        *,
        heartbeat_s: float = 15.0,
        batch: int = 512,
    ) -> None:
        self.channel = channel
        self.journals = journals
        self.session_id = session_id
        self.run_id = run_id
        self.cursor = after_seq
        self.heartbeat_s = heartbeat_s
        self.batch = batch
        self.finished = False

    def skip_to(self, seq: int, *, ended: bool) -> None:
        """Follow from `seq`: the client was sent the run up to there in one message (runs/catchup.py).
        `ended`: that covered the terminal row, so no row is left to send."""
        self.cursor = seq
        self.finished = ended

    async def batches(self) -> AsyncIterator[list[Appended] | Heartbeat]:
        """Yield lists of rows after the cursor until a terminal row; a Heartbeat when idle."""
        idle_since = time.monotonic()
        while not self.finished:
            rows = await self._next_rows()
            if rows:
                self.cursor = rows[-1].seq
                self.finished = rows[-1].terminal
                idle_since = time.monotonic()
                yield rows
                continue
            channel = self.channel
            if channel is None or (channel.closed and channel.last_seq <= self.cursor):
                return  # a dead run: everything in its journal was replayed
            await channel.wait(max(0.0, self.heartbeat_s - (time.monotonic() - idle_since)))
            if time.monotonic() - idle_since >= self.heartbeat_s:
                idle_since = time.monotonic()
                yield Heartbeat(self.cursor)

    async def _next_rows(self) -> list[Appended]:
        channel = self.channel
        if channel is not None:
            rows = channel.window_after(self.cursor)
            if rows is not None:
                return rows[: self.batch]
        return await asyncio.to_thread(self._read_journal)

    def _read_journal(self) -> list[Appended]:
        result = self.journals.read(self.session_id, self.run_id, after_seq=self.cursor, limit=self.batch)
        return [Appended.of(row) for row in result.rows]


class RunObservers:
    """The channels of live runs, by run id; attach observers to live or finished runs alike."""

    def __init__(self, journals: Journals, *, window: int = DEFAULT_WINDOW, heartbeat_s: float = 15.0) -> None:
        self.journals = journals
        self.window = window
        self.heartbeat_s = heartbeat_s
        self._channels: dict[str, RunChannel] = {}

    def open(self, session_id: str, run_id: str) -> RunChannel:
        channel = RunChannel(session_id, run_id, self.journals, window=self.window)
        self._channels[run_id] = channel
        return channel

    def get(self, run_id: str) -> RunChannel | None:
        return self._channels.get(run_id)

    def release(self, run_id: str, linger_s: float = 0.0, call_later: Callable[..., object] | None = None) -> None:
        """Forget a finished run's channel (after `linger_s`, so late observers still hit memory)."""
        channel = self._channels.get(run_id)
        if channel is None:
            return
        channel.close()
        if linger_s > 0 and call_later is not None:
            call_later(linger_s, lambda: self._channels.pop(run_id, None) if self._channels.get(run_id) is channel else None)
        else:
            self._channels.pop(run_id, None)

    def attach(self, session_id: str, run_id: str, after_seq: int = 0, *, heartbeat_s: float | None = None) -> Observer:
        return Observer(
            self._channels.get(run_id), self.journals, session_id, run_id, after_seq,
            heartbeat_s=self.heartbeat_s if heartbeat_s is None else heartbeat_s,
        )
