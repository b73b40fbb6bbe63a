"""Per-token cost of the `hermes` backend over the demo agent (and the `openai` backend); prints JSON.

Two stub model servers run in their own processes: one streams `count to N` as fast as it
can, one paces chunks (`--pace-ms`) so that nothing queues. The paced stub writes its send
time (CLOCK_MONOTONIC, shared by all processes) into each token, so the sink measures the
transport latency of every token: stub socket -> hermes-agent -> runner -> pipe -> our sink.
The demo agent has no transport: its tokens reach the sink in the same call that made them.

Also measured: spawning the agent process (bare and in the bubblewrap sandbox, same run), the
first turn of a session (AIAgent init), how long `interrupt` takes to end a turn mid-stream, and
the CPU the hermes child spends (the per-token agents run bare, so that their pid is the runner's,
not bwrap's). `first_token_after_server_start` is the time to first token of the first turn on a
freshly started `jupyter server` with the hermes backend, the turn sent `--warm-wait` seconds after
the server answered: with the warm start (runner and one agent built in the background) and without.

    .venv/bin/python benchmarks/bench_hermes_backend.py [--tokens 1000] [--repeats 3] [--pace-ms 5]
    .venv/bin/python benchmarks/bench_hermes_backend.py --only-warm-start [--warm-wait 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_jupyter.agents.base import TurnRequest  # noqa: E402
from hermes_jupyter.agents.demo import DemoAgent  # noqa: E402
from hermes_jupyter.agents.hermes import HermesAgent  # noqa: E402
from hermes_jupyter.agents.openai import OpenAIAgent  # noqa: E402
from tests.agents.hermes_fixtures import ensure_hermes_agent, write_hermes_home  # noqa: E402
from tests.server_process import JupyterServerProcess  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class TimingSink:
    """Keeps arrival times of tokens and, for stamped tokens, the stub's send times."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.latencies: list[float] = []

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        now = time.monotonic()
        if event != "token":
            return
        self.times.append(now)
        text = str(payload.get("text", "")).strip()
        if text.startswith("<") and text.endswith(">"):
            self.latencies.append(now - float(text[1:-1]))


def _cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


async def _one_turn(agent: Any, prompt: str, run_id: str) -> dict[str, float]:
    sink = TimingSink()
    request = TurnRequest(session_id="bench", run_id=run_id, message=prompt, history=[])
    child = getattr(agent, "pid", None)
    child_cpu0, cpu0, t0 = _cpu_s(child), time.process_time(), time.monotonic()
    result = await agent.run_turn(request, sink)
    wall_s, cpu_s = time.monotonic() - t0, time.process_time() - cpu0
    assert result.outcome == "completed" and len(sink.times) > 1, result.error
    n = len(sink.times)
    gaps = [b - a for a, b in zip(sink.times, sink.times[1:])]
    row = {
        "tokens_per_s": n / wall_s,
        "first_token_ms": (sink.times[0] - t0) * 1e3,
        "mean_gap_us": statistics.fmean(gaps) * 1e6,
        "p99_gap_us": sorted(gaps)[int(len(gaps) * 0.99)] * 1e6,
        "client_cpu_us_per_token": cpu_s / n * 1e6,
    }
    if child is not None:
        row["agent_process_cpu_us_per_token"] = (_cpu_s(child) - child_cpu0) / n * 1e6
    if sink.latencies:
        ordered = sorted(sink.latencies)
        row["latency_p50_ms"] = ordered[len(ordered) // 2] * 1e3
        row["latency_p95_ms"] = ordered[int(len(ordered) * 0.95)] * 1e3
        row["latency_max_ms"] = ordered[-1] * 1e3
    return row


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}


async def _interrupt_ms(agent: HermesAgent, run_id: str) -> float:
    sink = TimingSink()
    turn = asyncio.create_task(agent.run_turn(
        TurnRequest(session_id="bench", run_id=run_id, message="count to 5000 slowly", history=[]), sink))
    while len(sink.times) < 3:
        await asyncio.sleep(0.001)
    t0 = time.monotonic()
    await agent.interrupt(run_id)
    assert (await turn).outcome == "interrupted"
    return (time.monotonic() - t0) * 1e3


async def _hermes_startup(python: Path, home: Path, sandbox: str) -> dict[str, float]:
    agent = HermesAgent(command=[str(python), str(ROOT / "hermes_jupyter/agents/hermes/runner.py")],
                        env={"HERMES_HOME": str(home)}, toolsets=["todo"], sandbox=sandbox)
    t0 = time.monotonic()
    await agent.start()
    spawned = time.monotonic()
    sink = TimingSink()
    await agent.run_turn(TurnRequest(session_id="cold", run_id="cold-1", message="count to 3", history=[]), sink)
    done = time.monotonic()
    await agent.aclose()
    return {"spawn_ms": (spawned - t0) * 1e3, "first_turn_ms": (done - spawned) * 1e3}


async def _measure(python: Path, fast_url: str, paced_url: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-hermes-") as tmp:
        fast_home = write_hermes_home(Path(tmp) / "fast", fast_url, "stub-model")
        paced_home = write_hermes_home(Path(tmp) / "paced", paced_url, "stub-model")
        startup = [await _hermes_startup(python, fast_home, "off") for _ in range(args.repeats)]
        sandboxed = [await _hermes_startup(python, fast_home, "require") for _ in range(args.repeats)]
        runner = str(ROOT / "hermes_jupyter/agents/hermes/runner.py")
        agents: dict[str, dict[str, Any]] = {
            "fast": {"demo": DemoAgent(token_delay=0.0),
                     "openai": OpenAIAgent(base_url=fast_url, model="stub-model", api_key="bench"),
                     "hermes": HermesAgent(command=[str(python), runner], env={"HERMES_HOME": str(fast_home)},
                                           toolsets=["todo"], sandbox="off")},
            "paced": {"openai": OpenAIAgent(base_url=paced_url, model="stub-model", api_key="bench"),
                      "hermes": HermesAgent(command=[str(python), runner], env={"HERMES_HOME": str(paced_home)},
                                            toolsets=["todo"], sandbox="off")},
        }
        out: dict[str, Any] = {"tokens": args.tokens, "repeats": args.repeats, "pace_ms": args.pace_ms,
                               "statistic": "median of repeats",
                               "hermes_startup": _median(startup), "hermes_startup_sandboxed": _median(sandboxed)}
        for mode, group in agents.items():
            tokens = args.tokens if mode == "fast" else args.paced_tokens
            for name, agent in group.items():
                if name != "demo":
                    await _one_turn(agent, "count to 10", f"warm-{mode}-{name}")  # spawn, AIAgent init, pool
                runs = [await _one_turn(agent, f"count to {tokens}", f"{mode}-{name}-{i}")
                        for i in range(args.repeats)]
                out[f"{mode}_{name}"] = _median(runs)
        hermes = agents["fast"]["hermes"]
        out["hermes_interrupt_to_return_ms"] = round(statistics.median(
            [await _interrupt_ms(hermes, f"cancel-{i}") for i in range(args.repeats)]), 2)
        for group in agents.values():
            for agent in group.values():
                await agent.aclose()
    demo, fast_h, fast_o = out["fast_demo"], out["fast_hermes"], out["fast_openai"]
    out["hermes_added_mean_gap_us_per_token_over_demo"] = round(fast_h["mean_gap_us"] - demo["mean_gap_us"], 2)
    out["hermes_added_mean_gap_us_per_token_over_openai"] = round(fast_h["mean_gap_us"] - fast_o["mean_gap_us"], 2)
    out["hermes_added_latency_ms_per_token_over_openai_p50"] = round(
        out["paced_hermes"]["latency_p50_ms"] - out["paced_openai"]["latency_p50_ms"], 3)
    return out


def _server_first_token_ms(stub_url: str, warm: bool, wait_s: float) -> float:
    """A fresh server with the hermes backend; the first turn's time to first token, in ms."""
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        root = Path(tmp)
        write_hermes_home(root / "hermes-home", stub_url, "stub-model")
        server = JupyterServerProcess(root, extra_args=[
            "--HermesJupyter.backend=hermes", f"--HermesAgent.warm_start={warm}", "--HermesAgent.toolsets=todo"])
        server.start()
        try:
            time.sleep(wait_s)
            sid = server.new_session(backend="hermes")
            t0 = time.monotonic()
            run_id = server.start_run(sid, "count to 3")
            while True:
                body = server.get(f"runs/{run_id}/events", after_seq=0).json()
                if any(e["event"] == "token" for e in body["events"]):
                    return round((time.monotonic() - t0) * 1e3, 1)
                if body["terminal"]:
                    raise RuntimeError(f"first turn ended without a token: {body['events'][-1]}")
                time.sleep(0.005)
        finally:
            server.stop()


def _warm_start(stub_url: str, args: argparse.Namespace) -> dict[str, Any]:
    warm = [_server_first_token_ms(stub_url, True, args.warm_wait) for _ in range(args.repeats)]
    cold = [_server_first_token_ms(stub_url, False, args.warm_wait) for _ in range(args.repeats)]
    return {"turn_sent_after_s": args.warm_wait, "statistic": "median of repeats",
            "warm_runner_first_token_ms": statistics.median(warm), "warm_runs_ms": warm,
            "cold_runner_first_token_ms": statistics.median(cold), "cold_runs_ms": cold,
            "cold_over_warm": round(statistics.median(cold) / statistics.median(warm), 2)}


def _serve_stamped_stub(chunk_delay_s: float) -> None:
    """The stub, with each text token replaced by `<send time>` (for the latency runs)."""
    from tests.fakes import openai_stub_server as stub_module

    send = stub_module._Handler._send_event

    def stamped(self: Any, data: str) -> None:
        if data.startswith("{") and '"content"' in data:
            chunk = json.loads(data)
            delta = chunk["choices"][0]["delta"] if chunk.get("choices") else {}
            if delta.get("content"):
                delta["content"] = f"<{time.monotonic():.6f}>"
                data = json.dumps(chunk)
        send(self, data)

    stub_module._Handler._send_event = stamped  # type: ignore[method-assign]
    stub_module.main(["--chunk-delay", str(chunk_delay_s)])


def _start_stub(chunk_delay_s: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve-stub", str(chunk_delay_s)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--paced-tokens", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument("--warm-wait", type=float, default=8.0,
                        help="seconds between the server answering and the first turn (default 8)")
    parser.add_argument("--only-warm-start", action="store_true", help="measure only the first turn after start")
    parser.add_argument("--serve-stub", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_stub is not None:
        _serve_stamped_stub(args.serve_stub)
        return
    python = ensure_hermes_agent()
    fast, fast_url = _start_stub(0.0)
    paced, paced_url = _start_stub(args.pace_ms / 1e3)
    try:
        out = {} if args.only_warm_start else asyncio.run(_measure(python, fast_url, paced_url, args))
        out["first_token_after_server_start"] = _warm_start(fast_url, args)
        print(json.dumps(out, indent=2))
    finally:
        for proc in (fast, paced):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
