"""A run that hit a full disk: settle it visibly once space returns.

While the disk is full neither the journal nor the sidecar can grow, so the
turn cannot be settled where it failed. The run stays registered as a worker
(so no read repairs it with a vaguer marker meanwhile) and a background task
retries the settle every few seconds; the first attempt that can write settles
the turn from its journal (interrupted marker, partial output kept) and adds a
note saying the disk was full, then lets the run go.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable, Final

from ..fsio import is_disk_full
from ..recovery.liveness import LiveRuns
from ..markers import DISK_FULL_MESSAGE as DISK_FULL_MESSAGE, DISK_FULL_NOTE as DISK_FULL_NOTE
from ..recovery.repair import Recovery
from ..sessions.store import SessionStore

log = logging.getLogger(__name__)

DISK_FULL: Final = "disk_full"

#: Seconds between attempts, and how long to keep trying before leaving the turn to recovery.
RETRY_EVERY_S: Final = 2.0
GIVE_UP_AFTER_S: Final = 3600.0


def settle_with_note(store: SessionStore, recovery: Recovery, session_id: str, run_id: str) -> bool:
    """Settle the run's pending turn with the disk-full note, in one save. True once done (or nothing is left).

    Raises the disk-full OSError while there is still no space.
    """
    with store.lock(session_id):
        session = store.load(session_id)
        if session.active_run_id != run_id:
            return True  # settled or superseded meanwhile
        recovery.apply_core_sync_or_error_marker(session, run_id, require_stream_dead=False, disk_full=True)
        return True


class SpaceWaiter:
    """Background retries of `settle_with_note` for runs that failed on a full disk."""

    def __init__(
        self, store: SessionStore, recovery: Recovery, live: LiveRuns,
        offload: Callable[..., Awaitable[Any]], *, every_s: float = RETRY_EVERY_S,
    ) -> None:
        self.store = store
        self.recovery = recovery
        self.live = live
        self.offload = offload
        self.every_s = every_s
        self._tasks: set[asyncio.Task[None]] = set()

    def try_now(self, session_id: str, run_id: str) -> bool:
        """One attempt (off the loop's thread); False if the disk is still full."""
        try:
            return settle_with_note(self.store, self.recovery, session_id, run_id)
        except OSError as exc:
            if not is_disk_full(exc):
                log.exception("settling run %s after a full disk failed", run_id)
                return True  # not a space problem: leave it to the next read's repair
            return False

    def wait_for_space(self, session_id: str, run_id: str) -> None:
        """Keep the run counted as live and retry in the background until the turn is settled."""
        self.live.register_worker(run_id, session_id, phase=DISK_FULL)
        task = asyncio.get_running_loop().create_task(self._retry(session_id, run_id), name=f"hermes-space-{run_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _retry(self, session_id: str, run_id: str) -> None:
        deadline = time.monotonic() + GIVE_UP_AFTER_S
        try:
            while time.monotonic() < deadline:
                await asyncio.sleep(self.every_s)
                if await self.offload(self.try_now, session_id, run_id):
                    return
            log.error("run %s: the disk stayed full; its turn is left to recovery", run_id)
        finally:
            self.live.unregister_worker(run_id)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
