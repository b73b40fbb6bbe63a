"""Which runs this process is running. A run that is live must never be repaired.

Two registries, as in the peer: `streams` (a run whose events are being
delivered) and `workers` (a run whose backend is still executing, even with
nobody watching). Live means registered in either.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class Worker:
    run_id: str
    session_id: str
    phase: str = "running"
    started_at: float = field(default_factory=time.time)
    cancelling_since: float | None = None


class LiveRuns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: set[str] = set()
        self._workers: dict[str, Worker] = {}

    def register_stream(self, run_id: str) -> None:
        with self._lock:
            self._streams.add(run_id)

    def unregister_stream(self, run_id: str) -> None:
        with self._lock:
            self._streams.discard(run_id)

    def register_worker(self, run_id: str, session_id: str, phase: str = "running") -> Worker:
        worker = Worker(run_id, session_id, phase)
        with self._lock:
            self._workers[run_id] = worker
        return worker

    def unregister_worker(self, run_id: str) -> None:
        with self._lock:
            self._workers.pop(run_id, None)

    def worker(self, run_id: str) -> Worker | None:
        with self._lock:
            return self._workers.get(run_id)

    def workers(self) -> list[Worker]:
        with self._lock:
            return list(self._workers.values())

    def is_live(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._streams or run_id in self._workers

    def active_ids(self) -> set[str]:
        with self._lock:
            return self._streams | set(self._workers)
