"""Per-token cost of the `openai` backend over the offline demo agent; prints JSON.

Both agents stream `count to N` as fast as they can (demo `token_delay=0`, stub with no
chunk delay) into a sink that only timestamps events. The stub runs in its own process
(as a real model server would), so `client_cpu_us_per_token` is this backend's own work:
HTTP, SSE parsing, JSON decoding, emitting. Also measured: time to first token and how
long `interrupt` takes to end a turn that is mid-stream.

    .venv/bin/python benchmarks/bench_openai_backend.py [--tokens 2000] [--repeats 5]
    .venv/bin/python benchmarks/bench_openai_backend.py --local-model [--repeats 15]   # bench_openai_local.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_jupyter.agents.base import TurnRequest  # noqa: E402
from hermes_jupyter.agents.demo import DemoAgent  # noqa: E402
from hermes_jupyter.agents.openai import OpenAIAgent  # noqa: E402

Agent = DemoAgent | OpenAIAgent


class TimingSink:
    """Keeps only the arrival time of each event: the cheapest possible consumer."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        self.times.append(time.perf_counter())


async def _one_turn(agent: Agent, prompt: str) -> dict[str, float]:
    sink = TimingSink()
    request = TurnRequest(session_id="bench", run_id="bench-run", message=prompt, history=[])
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = await agent.run_turn(request, sink)
    wall_s, cpu_s = time.perf_counter() - t0, time.process_time() - cpu0
    assert not result.failed and len(sink.times) > 1, result.error
    gaps = [b - a for a, b in zip(sink.times, sink.times[1:])]
    n = len(sink.times)
    return {
        "tokens_per_s": n / wall_s,
        "first_token_ms": (sink.times[0] - t0) * 1e3,
        "mean_gap_us": statistics.fmean(gaps) * 1e6,
        "p99_gap_us": sorted(gaps)[int(len(gaps) * 0.99)] * 1e6,
        "client_cpu_us_per_token": cpu_s / n * 1e6,
    }


async def _cancel_latency_ms(agent: OpenAIAgent) -> float:
    """Milliseconds from `interrupt` to `run_turn` returning, mid slow stream."""
    sink = TimingSink()
    request = TurnRequest(session_id="bench", run_id="bench-cancel", message="count to 500 slowly", history=[])
    turn = asyncio.create_task(agent.run_turn(request, sink))
    while len(sink.times) < 3:
        await asyncio.sleep(0.001)
    t0 = time.perf_counter()
    await agent.interrupt("bench-cancel")
    result = await turn
    assert result.interrupted
    return (time.perf_counter() - t0) * 1e3


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 2) for key in runs[0]}


async def _measure(base_url: str, tokens: int, repeats: int) -> dict[str, Any]:
    prompt = f"count to {tokens}"
    demo = DemoAgent(token_delay=0.0)
    openai = OpenAIAgent(base_url=base_url, model="stub-model", api_key="bench")
    await _one_turn(openai, "count to 10")  # warm the connection pool
    demo_runs = [await _one_turn(demo, prompt) for _ in range(repeats)]
    openai_runs = [await _one_turn(openai, prompt) for _ in range(repeats)]
    cancels = [await _cancel_latency_ms(openai) for _ in range(repeats)]
    await openai.aclose()
    demo_m, openai_m = _median(demo_runs), _median(openai_runs)
    return {
        "tokens": tokens,
        "repeats": repeats,
        "statistic": "median of repeats",
        "demo": demo_m,
        "openai": openai_m,
        "added_mean_gap_us_per_token": round(openai_m["mean_gap_us"] - demo_m["mean_gap_us"], 2),
        "added_client_cpu_us_per_token": round(
            openai_m["client_cpu_us_per_token"] - demo_m["client_cpu_us_per_token"], 2
        ),
        "interrupt_to_return_ms": round(statistics.median(cancels), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--local-model", action="store_true",
                        help="first-token overhead and tokens/s against a direct request to the real local model")
    args, rest = parser.parse_known_args()
    if args.local_model:
        import bench_openai_local

        sys.argv = [sys.argv[0], "--repeats", str(args.repeats), *rest]
        bench_openai_local.main()
        return
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_stub_server"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert stub.stdout is not None
        base_url = stub.stdout.readline().strip()
        print(json.dumps(asyncio.run(_measure(base_url, args.tokens, args.repeats)), indent=2))
    finally:
        stub.terminate()
        stub.wait(timeout=10)


if __name__ == "__main__":
    main()
