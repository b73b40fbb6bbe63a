"""Listing benchmark at scale, printed as JSON.

1. The store over N sessions (default 100k): one page (`limit=50`) at the top and
   deep in the list, next to the full list, median and p99 of repeated calls.
2. A real `jupyter server` over the same state dir: 10 WebSocket clients stream
   demo runs while nothing else happens, then while a client lists sessions once
   a second (a page, then the whole unpaged list), with a quiet phase between.
   Same run, same machine: the p99 delivery latency of the phases side by side,
   deltas against the mean of the two quiet phases (after a discarded warm-up).

Usage: python benchmarks/bench_listing.py [--quick]   (--quick: 10k sessions)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_server import summarize  # noqa: E402
from hermes_jupyter.sessions.store import INDEX_NAME, Session, SessionStore  # noqa: E402
from tests.server_process import TOKEN, JupyterServerProcess  # noqa: E402

STREAMS = 10
TOKENS = 150


def seed(sessions_dir: Path, count: int) -> None:
    """`count` small sidecars and their index, written directly (no fsync: this is set-up, not the measure)."""
    sessions_dir.mkdir(parents=True)
    index: dict[str, dict[str, Any]] = {}
    base = time.time() - count
    for i in range(count):
        session = Session(session_id=f"s{i:07d}", title=f"session {i}", created_at=base + i, updated_at=base + i)
        path = sessions_dir / f"{session.session_id}.json"
        path.write_bytes(orjson.dumps(session.to_json()))
        row = session.compact()
        row["mtime_ns"] = os.stat(path).st_mtime_ns
        index[session.session_id] = row
    (sessions_dir / INDEX_NAME).write_bytes(orjson.dumps(index))


def timed(fn: Any, repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return {"median_ms": round(statistics.median(samples) * 1000, 3), "p99_ms": round(samples[int(len(samples) * 0.99)] * 1000, 3)}


def store_side(sessions_dir: Path) -> dict[str, Any]:
    store = SessionStore(sessions_dir)
    store.list()
    store.wait_reconciled(120)
    first = store.page(50)
    deep_cursor = first.next
    for _ in range(len(store.list()) // 100):  # half-way down
        deep_cursor = store.page(50, deep_cursor).next
    result = {
        "sessions": len(store.list()),
        "page_50_first": timed(lambda: store.page(50), 200),
        "page_50_deep": timed(lambda: store.page(50, deep_cursor), 200),
        "full_list": timed(store.list, 5),
    }
    store.close()
    return result


async def streams(server: JupyterServerProcess, lister: str | None) -> dict[str, Any]:
    """10 clients stream a demo run each; `lister` (a query string) is fetched once a second meanwhile."""
    import httpx

    latencies: list[float] = []
    list_ms: list[float] = []
    headers = {"Authorization": f"token {TOKEN}"}
    api = server.url + "hermes/api/"

    async def client(http: httpx.AsyncClient) -> int:
        sid = (await http.post(api + "sessions", json={}, headers=headers)).json()["session_id"]
        run = (await http.post(api + f"sessions/{sid}/runs", json={"message": f"count to {TOKENS}"}, headers=headers)).json()
        ws = await server.open_stream(run["run_id"])
        attached, count = time.time(), 0
        try:
            while (message := await ws.read_message()) is not None:
                row = json.loads(message)
                if "event_id" in row:
                    if row["created_at"] >= attached:
                        latencies.append(time.time() - row["created_at"])
                    count += 1
        finally:
            ws.close()
        return count

    async def list_every_second(http: httpx.AsyncClient, done: asyncio.Event) -> None:
        while not done.is_set():
            start = time.perf_counter()
            response = await http.get(api + "sessions" + (lister or ""), headers=headers)
            assert response.status_code == 200
            list_ms.append((time.perf_counter() - start) * 1000)
            try:
                await asyncio.wait_for(done.wait(), 1.0)
            except TimeoutError:
                pass

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=120) as http:
        done = asyncio.Event()
        listing = asyncio.ensure_future(list_every_second(http, done)) if lister is not None else None
        counts = await asyncio.gather(*(client(http) for _ in range(STREAMS)))
        done.set()
        if listing is not None:
            await listing
    result = summarize(latencies, sum(counts), time.perf_counter() - start)
    result["max_ms"] = round(max(latencies) * 1000, 2)
    if list_ms:
        result["listing_http_ms_median"] = round(statistics.median(list_ms), 2)
    return result


async def main() -> None:
    count = 10_000 if "--quick" in sys.argv else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = JupyterServerProcess(root / "server", token_delay=0.02)
        seed(server.state_dir / "sessions", count)
        result: dict[str, Any] = {"store": store_side(server.state_dir / "sessions")}
        server.start(timeout_s=300)
        try:
            server.get("sessions", limit="1")
            await streams(server, None)  # warm-up, discarded: the start-up scan and index check run meanwhile
            await asyncio.sleep(5)
            quiet = await streams(server, None)
            paged = await streams(server, "?limit=50")
            quiet_again = await streams(server, None)
            unpaged = await streams(server, "")
        finally:
            server.stop()
    baseline = (quiet["p99_ms"] + quiet_again["p99_ms"]) / 2
    result["streams_10"] = {
        "quiet": quiet, "listing_a_page_each_second": paged, "quiet_again": quiet_again,
        "listing_everything_each_second": unpaged,
        "p99_delta_ms_page": round(paged["p99_ms"] - baseline, 2),
        "p99_delta_ms_everything": round(unpaged["p99_ms"] - baseline, 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
