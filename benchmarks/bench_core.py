"""Benchmarks of the durable core, printed as JSON (never asserted in tests).

- journal append rate per durability policy, next to raw loops measured in the same run, among them the
  limit for the writer's own I/O shape (an orjson envelope per event + `write(2)` + a group-commit fsync thread);
- bytes on disk of a settled 2,000-token answer (its journal sealed), next to the live journal's size;
- recovery of an interrupted run with 1k / 10k / 100k journal events (time, and peak memory in one untimed pass);
- session listing with 10k sessions (warm index and cold start).

Usage: python benchmarks/bench_core.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import orjson

from hermes_jupyter.journal import Journals
from hermes_jupyter.liveness import LiveRuns
from hermes_jupyter.recovery import Recovery
from hermes_jupyter.store import Session, SessionStore

TOKEN = {"text": " a token of about the usual size, with some words in it"}


def median_of(runs: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(runs))


def raw_fsync_per_event(root: Path, n: int) -> float:
    line = orjson.dumps({"event": "token", "payload": TOKEN}) + b"\n"
    fd = os.open(root / f"raw-{time.perf_counter_ns()}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    start = time.perf_counter()
    for _ in range(n):
        os.write(fd, line)
        os.fsync(fd)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return n / elapsed


def raw_append_no_fsync(root: Path, n: int) -> float:
    line = orjson.dumps({"event": "token", "payload": TOKEN}) + b"\n"
    fd = os.open(root / f"raw-{time.perf_counter_ns()}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    start = time.perf_counter()
    for _ in range(n):
        os.write(fd, line)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return n / elapsed


def raw_envelope_group_commit(root: Path, n: int, window_s: float = 0.02) -> float:
    """The limit for the writer's I/O shape: one orjson envelope per event, one write(2), and a
    thread that fsyncs the file every `window_s` while it is dirty (what `batch` does)."""
    fd = os.open(root / f"raw-{time.perf_counter_ns()}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    dirty = threading.Event()
    stop = False

    def committer() -> None:
        while not stop:
            if dirty.wait(0.1):
                dirty.clear()
                os.fsync(fd)
                time.sleep(window_s)

    thread = threading.Thread(target=committer, daemon=True)
    thread.start()
    start = time.perf_counter()
    for seq in range(1, n + 1):
        os.write(fd, orjson.dumps({
            "version": 1, "event_id": f"bench_run:{seq}", "seq": seq, "run_id": "bench_run", "session_id": "bench_sid",
            "event": "token", "type": "token", "created_at": time.time(), "terminal": False, "terminal_state": None,
            "payload": TOKEN,
        }) + b"\n")
        if not dirty.is_set():
            dirty.set()
    os.fsync(fd)
    elapsed = time.perf_counter() - start
    stop = True
    dirty.set()
    thread.join()
    os.close(fd)
    return n / elapsed


def journal_rate(root: Path, policy: str, n: int) -> float:
    journals = Journals(root / f"j-{policy}-{time.perf_counter_ns()}", durability=policy)  # type: ignore[arg-type]
    writer = journals.writer("bench_sid", "bench_run")
    start = time.perf_counter()
    for _ in range(n):
        writer.append("token", TOKEN)
    journals.committer.flush()
    elapsed = time.perf_counter() - start
    journals.close()
    return n / elapsed


def bench_append(root: Path, quick: bool) -> dict[str, object]:
    n, n_fsync, runs = (20_000, 500, 3) if quick else (100_000, 2_000, 5)
    raw_fsync = median_of(runs, lambda: raw_fsync_per_event(root, n_fsync))
    out: dict[str, object] = {
        "events": n,
        "raw_write_fsync_per_event_eps": round(raw_fsync),
        "raw_write_no_fsync_eps": round(median_of(runs, lambda: raw_append_no_fsync(root, n))),
    }
    # Interleaved, so both sides see the same machine load; medians of the pairs.
    pairs = [(raw_envelope_group_commit(root, n), journal_rate(root, "batch", n)) for _ in range(runs)]
    limit = statistics.median(p[0] for p in pairs)
    out["raw_envelope_group_commit_eps"] = round(limit)
    out["journal_batch_vs_envelope_limit"] = round(statistics.median(p[1] / p[0] for p in pairs), 2)
    for policy in ("batch", "terminal"):
        eps = median_of(runs, lambda: journal_rate(root, policy, n))
        out[f"journal_{policy}_eps"] = round(eps)
        out[f"journal_{policy}_vs_raw_fsync"] = round(eps / raw_fsync, 1)
    out["journal_every_eps"] = round(median_of(runs, lambda: journal_rate(root, "every", n_fsync)))
    return out


def bench_settled_bytes(root: Path, tokens: int = 2_000) -> dict[str, object]:
    """A real demo turn of `tokens` tokens through RunManager: the live journal's size at its terminal
    row, and what stays on disk once the run is settled and its journal sealed."""
    from hermes_jupyter.agents.demo import DemoAgent
    from hermes_jupyter.journal.files import open_stream
    from hermes_jupyter.runs.manager import RunManager

    store, journals, live = SessionStore(root / "settled" / "sessions"), Journals(root / "settled" / "runs"), LiveRuns()
    manager = RunManager(store, journals, Recovery(store, journals, live), live, {"demo": DemoAgent(token_delay=0)})

    async def turn() -> tuple[str, str]:
        session = store.create()
        run = await manager.start_run(session.session_id, f"count to {tokens}")
        await run.done.wait()
        return session.session_id, run.run_id

    sid, run_id = asyncio.run(turn())
    manager.sealer.shutdown(wait=True)  # the seal runs on its own thread after the settle
    folder = journals.root / sid
    on_disk = {name: (folder / name).stat().st_size for name in os.listdir(folder)}
    with open_stream(journals.path(sid, run_id)) as fh:
        live_bytes = len(fh.read())
    journals.close()
    store.close()
    return {
        "tokens": tokens, "live_journal_bytes": live_bytes, "settled_on_disk_bytes": sum(on_disk.values()),
        "settled_files": sorted(on_disk), "ratio": round(live_bytes / max(1, sum(on_disk.values())), 1),
    }


def build_interrupted_run(root: Path, events: int) -> tuple[SessionStore, Journals]:
    """A session with 10 prior messages and a pending turn; the journal repeats 48 tokens + a tool pair."""
    store = SessionStore(root / "sessions")
    journals = Journals(root / "runs", durability="terminal")
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(10)]
    store.save(Session(
        session_id="bench_sid", messages=history, context_messages=list(history),
        pending_user_message="go", active_stream_id="bench_run", pending_started_at=time.time() - 600,
    ))
    writer = journals.writer("bench_sid", "bench_run")
    i = 0
    while i < events:
        for _ in range(48):
            writer.append("token", TOKEN)
        writer.append("tool", {"tid": f"t{i}", "name": "terminal", "args": {"command": "ls -la"}})
        writer.append("tool_complete", {"tid": f"t{i}", "name": "terminal", "preview": "ok", "is_error": False})
        i += 50
    journals.close_writer("bench_sid", "bench_run")
    return store, journals


@contextmanager
def cold_recovery(case: Path, events: int) -> Iterator[Recovery]:
    """A fresh process's view of an interrupted run: nothing cached, the turn older than the process."""
    store, journals = build_interrupted_run(case, events)
    store.evict("bench_sid")
    try:
        yield Recovery(store, journals, LiveRuns(), process_started_at=time.time())
    finally:
        journals.close()
        store.close()


def bench_recovery(root: Path, quick: bool) -> dict[str, object]:
    out: dict[str, object] = {}
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    for events in sizes:
        times = []
        for rep in range(3 if events == 100_000 else 5):
            with cold_recovery(root / f"rec-{events}-{rep}", events) as recovery:
                start = time.perf_counter()
                session = recovery.get_session("bench_sid")
                times.append(time.perf_counter() - start)
                assert session.messages[-1]["type"] == "interrupted"
        out[f"recover_{events}_events_ms"] = round(statistics.median(times) * 1000, 2)
        out[f"recover_{events}_us_per_event"] = round(statistics.median(times) * 1e6 / events, 3)
        out[f"recover_{events}_peak_mb"] = recovery_peak_mb(root / f"rec-{events}-mem", events)
    return out


def recovery_peak_mb(case: Path, events: int) -> float:
    """Peak Python memory of one recovery (tracemalloc slows it down, so this pass is not timed)."""
    with cold_recovery(case, events) as recovery:
        tracemalloc.start()
        try:
            recovery.get_session("bench_sid")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return round(peak / 1e6, 1)


def bench_listing(root: Path, quick: bool) -> dict[str, object]:
    n = 2_000 if quick else 10_000
    store = SessionStore(root / "list-sessions")
    for i in range(n):
        store.save(Session(session_id=f"s{i:05d}", title=f"Session {i}", messages=[{"role": "user", "content": "hi"}]))
    store.close()
    warm = SessionStore(store.root)
    warm.list()
    start = time.perf_counter()
    rows = warm.list()
    warm_ms = (time.perf_counter() - start) * 1000
    assert len(rows) == n
    cold_times = []
    for _ in range(5):
        fresh = SessionStore(store.root)
        start = time.perf_counter()
        rows = fresh.list()
        cold_times.append((time.perf_counter() - start) * 1000)
        assert len(rows) == n
    return {"sessions": n, "list_warm_ms": round(warm_ms, 2), "list_cold_start_ms": round(statistics.median(cold_times), 2)}


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory(dir=os.environ.get("HERMES_BENCH_DIR")) as tmp:
        root = Path(tmp)
        result = {
            "append": bench_append(root, quick),
            "settled_answer": bench_settled_bytes(root),
            "recovery": bench_recovery(root, quick),
            "listing": bench_listing(root, quick),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
