"""Server benchmark, printed as JSON: N WebSocket clients (1, 10, 100) streaming demo runs
through a real `jupyter server` process, next to the same load through the engine alone.

Each client owns one run (`count to TOKENS` at the demo's default pace, 20 ms per token).
Latency = receipt time - the row's journal `created_at` (same machine clock). The clients run in
this process (aiohttp WebSockets), the server in its own; the server is given a few seconds after
start first, as a real one has. Next to latency, CPU per row delivered (the server process's
user+system time; for the engine, this process's) is reported: unlike latency on a shared machine,
it does not depend on what else runs there.

Usage: python benchmarks/bench_server.py [--quick]
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

from benchmarks.bench_engine import build, close, observe  # noqa: E402
from tests.server_process import TOKEN, JupyterServerProcess  # noqa: E402


def summarize(latencies: list[float], rows: int, elapsed: float) -> dict[str, Any]:
    latencies.sort()
    return {
        "rows": rows, "rows_per_s": round(rows / elapsed),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
    }


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def through_server(server: JupyterServerProcess, clients: int, tokens: int) -> dict[str, Any]:
    """Each client starts its run and attaches at once, so latency is delivery, not backlog.

    The clients are aiohttp's (its WebSocket frames are parsed in C): with tornado's pure-Python
    client, this process's own queueing doubled the measured p99 (29-41 ms against 15-19 ms here).
    """
    import aiohttp
    import yarl

    assert server.proc is not None
    cpu_before, client_cpu_before = process_cpu_s(server.proc.pid), time.process_time()
    latencies: list[float] = []

    def url(path: str, ws: bool = False) -> yarl.URL:  # the base URL is percent-encoded already
        base = server.url.replace("http://", "ws://") if ws else server.url
        return yarl.URL(base + path, encoded=True)

    async def client(http: aiohttp.ClientSession) -> int:
        async with http.post(url("hermes/api/sessions"), json={}) as reply:
            sid = (await reply.json())["session_id"]
        async with http.post(url(f"hermes/api/sessions/{sid}/runs"), json={"message": f"count to {tokens}"}) as reply:
            run_id = (await reply.json())["run_id"]
        count = 0
        async with http.ws_connect(url(f"hermes/api/runs/{run_id}/stream?after_seq=0", ws=True), max_msg_size=0) as ws:
            attached_at = time.time()
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                now = time.time()
                row = orjson.loads(message.data)
                if "seq" in row:
                    if row["created_at"] >= attached_at:  # rows from before the attach are backlog, not latency
                        latencies.append(now - row["created_at"])
                    count += 1
        return count

    start = time.perf_counter()
    async with aiohttp.ClientSession(headers={"Authorization": f"token {TOKEN}"}) as http:
        counts = await asyncio.gather(*(client(http) for _ in range(clients)))
    elapsed = time.perf_counter() - start
    # Every client saw the same whole run: its tokens plus the demo's other rows (start, usage, done).
    assert len(set(counts)) == 1 and counts[0] > tokens, counts
    cpu = process_cpu_s(server.proc.pid) - cpu_before
    return {
        **summarize(latencies, sum(counts), elapsed), "cpu_us_per_row": round(cpu * 1e6 / sum(counts), 1),
        "client_cpu_share": round((time.process_time() - client_cpu_before) / elapsed, 2),
    }


async def through_engine(root: Path, clients: int, tokens: int) -> dict[str, Any]:
    manager = build(root / f"engine{clients}", 0.02)
    latencies: list[float] = []
    cpu_before = time.process_time()

    async def client() -> int:
        session = await asyncio.to_thread(manager.store.create)
        run = await manager.start_run(session.session_id, f"count to {tokens}")
        return await observe(manager, run.run_id, latencies)

    start = time.perf_counter()
    counts = await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - start
    close(manager)
    cpu = time.process_time() - cpu_before
    return {**summarize(latencies, sum(counts), elapsed), "cpu_us_per_row": round(cpu * 1e6 / sum(counts), 1)}


async def main() -> None:
    quick = "--quick" in sys.argv
    tokens = 50 if quick else 200
    result: dict[str, Any] = {"tokens_per_run": tokens, "token_delay_s": 0.02}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = JupyterServerProcess(root / "server", token_delay=0.02).start()
        try:
            await asyncio.sleep(5)  # past start-up: extensions loaded, first collections done
            for clients in (1, 10, 100):
                srv = await through_server(server, clients, tokens)
                eng = await through_engine(root, clients, tokens)
                result[f"clients_{clients}"] = {
                    "server": srv, "engine": eng,
                    "server_over_engine_p99": round(srv["p99_ms"] / max(eng["p99_ms"], 0.01), 2),
                    "server_over_engine_cpu_per_row": round(srv["cpu_us_per_row"] / max(eng["cpu_us_per_row"], 0.01), 2),
                }
        finally:
            server.stop()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
