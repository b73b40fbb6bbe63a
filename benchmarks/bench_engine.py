"""Run-engine benchmarks, printed as JSON: throughput to N observers, delivery latency, memory.

- events/s through RunManager (demo agent at token_delay=0) to N = 1, 10, 100 observers,
  next to the bare journal append rate measured in the same run;
- p50/p99 delivery latency (journal append -> observer receipt) with 100 concurrent
  runs at the demo's default pace (20 ms between tokens);
- peak memory (RSS growth) with 100 concurrent runs, and with a stalled observer.

Usage: python benchmarks/bench_engine.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.journal import Journals
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.runs.fanout import Heartbeat
from hermes_jupyter.runs.manager import RunManager
from hermes_jupyter.sessions.store import SessionStore


def build(root: Path, token_delay: float) -> RunManager:
    store, journals, live = SessionStore(root / "sessions"), Journals(root / "runs"), LiveRuns()
    return RunManager(store, journals, Recovery(store, journals, live, settler=settle), live, {"demo": DemoAgent(token_delay=token_delay)})


def close(manager: RunManager) -> None:
    manager.journals.close()
    manager.store.close()


async def observe(manager: RunManager, run_id: str, latencies: list[float] | None = None) -> int:
    """Rows of a run; with `latencies`, the delivery delay of rows journaled after the attach."""
    attached_at = time.time()
    count = 0
    async for batch in manager.attach(run_id).batches():
        if isinstance(batch, Heartbeat):
            continue
        now = time.time()
        count += len(batch)
        if latencies is not None:
            latencies.extend(now - a.created_at for a in batch if a.created_at >= attached_at)
    return count


async def throughput(root: Path, observers: int, events: int) -> float:
    manager = build(root / f"tp{observers}", 0)
    session = manager.store.create()
    start = time.perf_counter()
    run = await manager.start_run(session.session_id, f"count to {events}")
    counts = await asyncio.gather(*(observe(manager, run.run_id) for _ in range(observers)))
    await run.done.wait()
    elapsed = time.perf_counter() - start
    assert all(c == events + 1 for c in counts), counts
    close(manager)
    return events / elapsed


def bare_append_rate(root: Path, events: int) -> float:
    journals = Journals(root / "bare")
    writer = journals.writer("s", "r")
    start = time.perf_counter()
    for i in range(events):
        writer.append("token", {"text": f" {i}"})
    elapsed = time.perf_counter() - start
    journals.close()
    return events / elapsed


async def latency(root: Path, runs: int, tokens: int) -> dict[str, Any]:
    """Each run starts and gets its observer at once, so latency is delivery, not backlog."""
    manager = build(root / "lat", 0.02)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    latencies: list[float] = []

    async def one() -> int:
        session = await asyncio.to_thread(manager.store.create)
        run = await manager.start_run(session.session_id, f"count to {tokens}")
        return await observe(manager, run.run_id, latencies)

    await asyncio.gather(*(one() for _ in range(runs)))
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    latencies.sort()
    close(manager)
    return {
        "concurrent_runs": runs, "events": len(latencies),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
        "max_ms": round(latencies[-1] * 1000, 2),
        "peak_rss_growth_mb": round((rss_after - rss_before) / 1024, 1),
    }


async def stalled_observer(root: Path, events: int) -> dict[str, Any]:
    manager = build(root / "stall", 0)
    session = manager.store.create()
    run = await manager.start_run(session.session_id, f"count to {events}")
    stalled = manager.attach(run.run_id).batches()
    await stalled.__anext__()
    peak = 0
    while not run.done.is_set():
        peak = max(peak, len(run.channel._rows))
        await asyncio.sleep(0)
    close(manager)
    return {"events": events, "window_rows_peak": peak, "window_limit": 2 * manager.observers.window}


async def main() -> None:
    quick = "--quick" in sys.argv
    events = 5_000 if quick else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = bare_append_rate(root, events)
        rates = {n: await throughput(root, n, events) for n in (1, 10, 100)}
        per_event_1 = 1 / rates[1]
        extra_cost = {
            n: round(((1 / rates[n]) - per_event_1) / (n - 1) / per_event_1 * 100, 2) for n in (10, 100)
        }
        result = {
            "bare_journal_append_eps": round(bare),
            "engine_eps": {str(n): round(r) for n, r in rates.items()},
            "extra_observer_cost_pct_of_single": {str(n): v for n, v in extra_cost.items()},
            "latency_100_runs": await latency(root, 100, 100 if quick else 250),
            "stalled_observer": await stalled_observer(root, events),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
