"""Server benchmark, printed as JSON: N WebSocket clients (1, 10, 100) streaming demo runs
through a real `jupyter server` process, next to the same load through the engine alone.

Each client owns one run (`count to TOKENS` at the demo's default pace, 20 ms per token).
Latency = receipt time - the row's journal `created_at` (same machine clock). The clients run in
this process (aiohttp WebSockets), the server in its own; the server is given a few seconds after
start first, as a real one has. Next to latency, CPU per row delivered (the server process's
user+system time; for the engine, this process's) is reported: unlike latency on a shared machine,
it does not depend on what else runs there.

`--replay`: re-attaching to a long run (docs/api.md, "Joining a run in one message"). A settled
`count to N` answer of about 2 MB is re-attached the new way (`?snapshot=1`: one message) and the old
way (`after_seq=0`: one frame per journal row), and a live run is joined at about 1 MB both ways;
each reports seconds, messages, bytes on the wire over the answer's text, and the server's CPU, and
the ratios old / new.

Usage: python benchmarks/bench_server.py [--quick] [--replay]
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


def answer_text(count: int) -> str:
    return " ".join(map(str, range(1, count + 1)))


async def attach(server: JupyterServerProcess, run_id: str, query: str, until_seq: int | None = None) -> dict[str, Any]:
    """Read one stream: until its settled message, or (`until_seq`) until it covers that seq.

    Returns seconds, messages, bytes and the server's CPU seconds spent meanwhile.
    """
    import aiohttp
    import yarl

    assert server.proc is not None
    cpu_before = process_cpu_s(server.proc.pid)
    url = yarl.URL(server.url.replace("http://", "ws://") + f"hermes/api/runs/{run_id}/stream?{query}", encoded=True)
    messages = size = covered = 0
    start = time.perf_counter()
    async with aiohttp.ClientSession(headers={"Authorization": f"token {TOKEN}"}) as http:
        async with http.ws_connect(url, max_msg_size=0) as ws:
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                messages, size = messages + 1, size + len(message.data)  # ASCII: characters are bytes
                if until_seq is None:
                    if message.data.startswith('{"settled"'):
                        break
                    continue
                head = orjson.loads(message.data) if messages == 1 else None  # the snapshot, or the first row
                covered = head.get("last_seq", head.get("seq", 0)) if head else covered + 1
                if covered >= until_seq:
                    break
    elapsed = time.perf_counter() - start
    return {"s": round(elapsed, 3), "messages": messages, "bytes": size,
            "server_cpu_s": round(process_cpu_s(server.proc.pid) - cpu_before, 2)}


def compare(new: dict[str, Any], old: dict[str, Any], text_bytes: int) -> dict[str, Any]:
    return {
        "new": {**new, "wire_over_text": round(new["bytes"] / text_bytes, 2)},
        "old": {**old, "wire_over_text": round(old["bytes"] / text_bytes, 2)},
        "old_over_new_s": round(old["s"] / max(new["s"], 1e-3), 1),
        "old_over_new_bytes": round(old["bytes"] / max(new["bytes"], 1), 1),
    }


async def wait_for_seq(server: JupyterServerProcess, run_id: str, seq: int) -> int:
    while (last := server.api("GET", f"runs/{run_id}")["last_seq"]) < seq:
        await asyncio.sleep(0.05)
    return int(last)


async def replay(root: Path, count: int) -> dict[str, Any]:
    """A settled answer re-attached both ways, and a live run joined half-way both ways."""
    text_bytes = len(answer_text(count))
    server = JupyterServerProcess(root / "replay", token_delay=0).start()
    try:
        sid = server.new_session()
        run_id = server.start_run(sid, f"count to {count}")
        await asyncio.sleep(1)
        while server.api("GET", f"runs/{run_id}")["status"] == "running":
            await asyncio.sleep(0.2)
        result: dict[str, Any] = {"answer_bytes": text_bytes, "token_rows": count}
        new = await attach(server, run_id, "snapshot=1")
        old = await attach(server, run_id, "after_seq=0")
        result["settled"] = compare(new, old, text_bytes)
        half, joined = count // 2, {}
        for way, query in (("new", "snapshot=1"), ("old", "after_seq=0")):  # one run each, joined at ~1 MB
            live = server.start_run(server.new_session(), f"count to {count}")
            at = await wait_for_seq(server, live, half)
            joined[way] = {**await attach(server, live, query, until_seq=at), "joined_at_seq": at}
            server.post(f"runs/{live}/cancel")
            while server.api("GET", f"runs/{live}")["status"] == "running":
                await asyncio.sleep(0.1)
        result["live_joined_half_way"] = compare(joined["new"], joined["old"], text_bytes // 2)
        return result
    finally:
        server.stop()


async def main() -> None:
    quick = "--quick" in sys.argv
    if "--replay" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(await replay(Path(tmp), 30_000 if quick else 300_000), indent=2))
        return
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
