"""Benchmarks of the durable core, printed as JSON (never asserted in tests).

- journal append rate per durability policy, next to raw loops measured in the same run, among them the
  limit for the writer's own I/O shape (an orjson envelope per event + `write(2)` + a group-commit fsync thread);
- bytes on disk of a settled 2,000-token answer (its journal sealed), next to the live journal's size;
- recovery of an interrupted run with 10k / 100k / 1M journal events: time, and peak memory in one untimed
  pass (with long tokens: also what it holds besides their text, and besides the recovered session it returns;
  with short model tokens); the same measurements of the base revision's code (default: the merge base with main), extracted
  with `git archive` into a temp dir and run in a subprocess in the same run, give the ratios;
- session listing with 10k sessions (warm index and cold start).

Usage: python benchmarks/bench_core.py [--quick] [--recovery] [--base REV | --no-base] [--rounds N]
       python benchmarks/bench_core.py --recovery-only [--quick]   (what the base subprocess runs)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
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
from hermes_jupyter.runs import settle

try:  # the layout since the sessions/ and recovery/ folders
    from hermes_jupyter.recovery.liveness import LiveRuns
    from hermes_jupyter.recovery.repair import Recovery
    from hermes_jupyter.sessions.store import Session, SessionStore
    RECOVERY_ARGS: dict[str, object] = {"settler": settle}
except ImportError:  # a --base revision from before them (the base subprocess imports that code)
    from hermes_jupyter.liveness import LiveRuns  # type: ignore[no-redef]
    from hermes_jupyter.recovery import Recovery  # type: ignore[no-redef]
    from hermes_jupyter.store import Session, SessionStore  # type: ignore[no-redef]
    RECOVERY_ARGS = {}

TOKEN = {"text": " a token of about the usual size, with some words in it"}
#: A model token as providers stream it (about 4 characters): the memory pass with it shows what
#: recovery holds besides the recovered text itself (which it must hold to save it).
SHORT_TOKEN = {"text": " tok"}


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
    manager = RunManager(store, journals, Recovery(store, journals, live, **RECOVERY_ARGS), live, {"demo": DemoAgent(token_delay=0)})

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


def build_interrupted_run(root: Path, events: int, token: dict[str, str] = TOKEN) -> tuple[SessionStore, Journals]:
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
            writer.append("token", token)
        writer.append("tool", {"tid": f"t{i}", "name": "terminal", "args": {"command": "ls -la"}})
        writer.append("tool_complete", {"tid": f"t{i}", "name": "terminal", "preview": "ok", "is_error": False})
        i += 50
    journals.close_writer("bench_sid", "bench_run")
    return store, journals


@contextmanager
def cold_recovery(case: Path, events: int, token: dict[str, str] = TOKEN) -> Iterator[Recovery]:
    """A fresh process's view of an interrupted run: nothing cached, the turn older than the process."""
    store, journals = build_interrupted_run(case, events, token)
    store.evict("bench_sid")
    try:
        yield Recovery(store, journals, LiveRuns(), process_started_at=time.time(), **RECOVERY_ARGS)
    finally:
        journals.close()
        store.close()


def recovery_sizes(quick: bool) -> tuple[int, ...]:
    if "--sizes" in sys.argv:
        return tuple(int(n) for n in sys.argv[sys.argv.index("--sizes") + 1].split(","))
    return (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000)


def bench_recovery(root: Path, quick: bool, *, memory: bool = True) -> dict[str, object]:
    import hermes_jupyter

    out: dict[str, object] = {"code": str(Path(hermes_jupyter.__file__).parent)}
    for events in recovery_sizes(quick):
        times = []
        reps = 5 if events <= 10_000 else 3 if events <= 100_000 else 1
        for rep in range(reps):
            with cold_recovery(root / f"rec-{events}-{rep}", events) as recovery:
                start = time.perf_counter()
                session = recovery.get_session("bench_sid")
                times.append(time.perf_counter() - start)
                assert session.messages[-1]["type"] == "interrupted"
        out[f"recover_{events}_events_ms"] = round(statistics.median(times) * 1000, 2)
        out[f"recover_{events}_us_per_event"] = round(statistics.median(times) * 1e6 / events, 3)
        if memory:
            (peak, kept), text = recovery_memory_mb(root / f"rec-{events}-mem", events), events * 48 / 50 * len(TOKEN["text"]) / 1e6
            out[f"recover_{events}_peak_mb"] = peak
            out[f"recover_{events}_text_mb"] = round(text, 1)
            out[f"recover_{events}_peak_over_text_mb"] = round(peak - text, 1)  # what recovery holds besides the answer
            out[f"recover_{events}_session_mb"] = kept  # the recovered session, which get_session returns
            out[f"recover_{events}_peak_over_session_mb"] = round(peak - kept, 1)  # recovery's own working memory
            out[f"recover_{events}_peak_mb_short_tokens"] = recovery_memory_mb(
                root / f"rec-{events}-mem-short", events, SHORT_TOKEN
            )[0]
    return out


def compare_recovery(root: Path, quick: bool, rev: str, rounds: int = 3) -> dict[str, object]:
    """`bench_recovery` of this code and of the code at `rev`, in subprocesses taking turns (so both see
    the same machine load); per timing the best round, memory from the first round. The base revision
    is extracted with `git archive` into a temp dir (nothing of it is kept) and skips 1M events. Timings
    are also compared round by round: the median of the per-round ratios."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "rev-parse", rev], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    code = root / "base-code"
    code.mkdir()
    archive = subprocess.run(["git", "archive", commit, "hermes_jupyter"], cwd=repo, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
    sizes = ",".join(str(n) for n in recovery_sizes(quick))
    runs: dict[str, list[dict[str, object]]] = {"ours": [], "base": []}
    for i in range(rounds):
        for who, path, which in (("ours", repo, sizes), ("base", code, sizes.replace(",1000000", ""))):
            args = [sys.executable, str(Path(__file__).resolve()), "--recovery-only", "--sizes", which]
            if i:
                args.append("--no-memory")
            env = {**os.environ, "PYTHONPATH": str(path), "HERMES_BENCH_DIR": str(root)}
            done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
            runs[who].append(json.loads(done.stdout))
    ours, base = _best(runs["ours"]), _best(runs["base"])
    base["commit"] = commit[:12]
    ratios = {
        key: round(float(value) / float(base[key]), 3)  # type: ignore[arg-type]
        for key, value in ours.items()
        if isinstance(value, (int, float)) and isinstance(base.get(key), (int, float)) and float(base[key]) > 0  # type: ignore[arg-type]
    }
    paired = {  # round by round (the two ran back to back, so they saw the same load), then the median
        key: round(statistics.median(float(o[key]) / float(b[key]) for o, b in zip(runs["ours"], runs["base"])), 3)  # type: ignore[arg-type]
        for key in ours
        if key.endswith("_ms") and all(key in b and float(b[key]) > 0 for b in runs["base"])  # type: ignore[arg-type]
    }
    return {"ours": ours, "base": base, "ours_over_base": ratios, "ours_over_base_median_of_rounds": paired,
            "rounds": rounds}


def _best(results: list[dict[str, object]]) -> dict[str, object]:
    """The first result, with each timing replaced by its best (lowest) value over all rounds."""
    best = dict(results[0])
    for key in best:
        if key.endswith(("_ms", "_us_per_event")):
            best[key] = min(float(r[key]) for r in results if key in r)  # type: ignore[arg-type]
    return best


def recovery_memory_mb(case: Path, events: int, token: dict[str, str] = TOKEN) -> tuple[float, float]:
    """Peak Python memory of one recovery, and what is still allocated once it returns (the recovered
    session, which the caller holds). tracemalloc slows it down, so this pass is not timed."""
    with cold_recovery(case, events, token) as recovery:
        tracemalloc.start()
        try:
            session = recovery.get_session("bench_sid")
            kept, peak = tracemalloc.get_traced_memory()
            del session
        finally:
            tracemalloc.stop()
    return round(peak / 1e6, 1), round(kept / 1e6, 1)


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
        if "--recovery-only" in sys.argv:  # one side of `compare_recovery`
            print(json.dumps(bench_recovery(root, quick, memory="--no-memory" not in sys.argv)))
            return
        if "--no-base" in sys.argv:
            recovery: dict[str, object] = bench_recovery(root, quick)
        else:
            rev = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else _merge_base()
            rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
            recovery = compare_recovery(root, quick, rev, rounds)
        if "--recovery" in sys.argv:
            result: dict[str, object] = {"recovery": recovery}
        else:
            result = {
                "append": bench_append(root, quick), "settled_answer": bench_settled_bytes(root),
                "recovery": recovery, "listing": bench_listing(root, quick),
            }
    print(json.dumps(result, indent=2))


def _merge_base() -> str:
    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=repo, capture_output=True, text=True)
    return done.stdout.strip() or "HEAD"


if __name__ == "__main__":
    main()
