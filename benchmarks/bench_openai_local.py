"""First-token overhead and tokens/s of the `openai` backend through our stack against a direct
request to the same real local model (llama-cpp-python + SmolLM2, tests/fakes/local_model.py); prints JSON.

Per repeat, alternating so the machine's load drifts into both alike: a direct streamed request
(httpx, warm connection, the very body the backend sends), then the same prompt through the run
engine (admission with its saves, the backend, the journal, a viewer attached as the sidebar is).
Times run from the call (the request's send, `start_run`) to the first and last token seen.
Temperature 0 and a fixed `max_tokens` make both generate the same tokens.

    .venv/bin/python benchmarks/bench_openai_local.py [--repeats 15] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_jupyter.agents.base import TurnRequest  # noqa: E402
from hermes_jupyter.agents.openai import OpenAIAgent  # noqa: E402
from hermes_jupyter.journal import Journals  # noqa: E402
from hermes_jupyter.recovery.liveness import LiveRuns  # noqa: E402
from hermes_jupyter.recovery.repair import Recovery  # noqa: E402
from hermes_jupyter.runs import settle
from hermes_jupyter.runs.fanout import Heartbeat  # noqa: E402
from hermes_jupyter.runs.manager import RunManager  # noqa: E402
from hermes_jupyter.sessions.store import SessionStore  # noqa: E402
from tests.fakes.local_model import LocalModelServer, cached_build  # noqa: E402

PROMPT = "Tell me a short story about a dragon who loves tea."


def _timing(t0: float, times: list[float], text: str) -> dict[str, Any]:
    """First text seen, whole answer seen; rows are not tokens (the journal may join deltas), so the
    rate is the direct stream's token count over the time to the whole answer, for both paths."""
    return {"first_token_ms": (times[0] - t0) * 1e3, "answer_ms": (times[-1] - t0) * 1e3, "pieces": len(times),
            "text": text}


async def direct(client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One streamed request, timed at each chunk that carries text."""
    times: list[float] = []
    text: list[str] = []
    t0 = time.perf_counter()
    async with client.stream("POST", url, json=body, headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: {"):
                choices = json.loads(line[6:]).get("choices") or [{}]
                piece = (choices[0].get("delta") or {}).get("content")
                if piece:
                    times.append(time.perf_counter())
                    text.append(piece)
    return _timing(t0, times, "".join(text))


async def through_stack(manager: RunManager, session_id: str) -> dict[str, Any]:
    """One turn through the engine, timed at each token row as an attached viewer receives it."""
    times: list[float] = []
    text: list[str] = []
    t0 = time.perf_counter()
    run = await manager.start_run(session_id, PROMPT)
    async for batch in manager.attach(run.run_id).batches():
        if isinstance(batch, Heartbeat):
            continue
        now = time.perf_counter()
        for row in batch:
            if b'"event":"token"' in row.line:
                times.append(now)
                text.append(json.loads(row.line)["payload"]["text"])
    await run.done.wait()
    status = manager.run_status(run.run_id)["status"]
    assert status in ("completed", "errored"), status  # errored: the length stop, same for both
    return _timing(t0, times, "".join(text))


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


async def measure(base_url: str, model: str, repeats: int, max_tokens: int, root: Path) -> dict[str, Any]:
    agent = OpenAIAgent(base_url=base_url, model=model, api_key="not-needed", temperature=0.0, max_tokens=max_tokens)
    store, journals, live = SessionStore(root / "sessions"), Journals(root / "runs"), LiveRuns()
    manager = RunManager(store, journals, Recovery(store, journals, live, settler=settle), live, {"openai": agent},
                         default_backend="openai")
    request = TurnRequest(session_id="bench", run_id="bench", message=PROMPT, history=[])
    body = agent._request_body(model, agent._opening_messages(request), None)  # the backend's own body
    url, headers = base_url.rstrip("/") + "/chat/completions", agent._headers()
    direct_runs: list[dict[str, Any]] = []
    stack_runs: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=300) as client:
        await direct(client, url, body, headers)  # warm both paths (connections, the model's cache)
        await through_stack(manager, store.create(backend="openai").session_id)
        for _ in range(repeats):
            direct_runs.append(await direct(client, url, body, headers))
            # A fresh session each time: the same prompt, no history, as the direct request.
            stack_runs.append(await through_stack(manager, store.create(backend="openai").session_id))
    await agent.aclose()
    journals.close()
    store.close()
    assert all(s["text"] == d["text"] for d, s in zip(direct_runs, stack_runs)), "the two paths generated differently"
    answer = direct_runs[0]["text"]
    tokens = int(_median(direct_runs, "pieces"))  # one text chunk per token from this server
    overheads = [s["first_token_ms"] - d["first_token_ms"] for d, s in zip(direct_runs, stack_runs)]
    direct_ft, stack_ft = _median(direct_runs, "first_token_ms"), _median(stack_runs, "first_token_ms")
    direct_ms, stack_ms = _median(direct_runs, "answer_ms"), _median(stack_runs, "answer_ms")
    return {
        "model": model, "repeats": repeats, "max_tokens": max_tokens, "statistic": "median of repeats",
        "tokens": tokens, "answer_chars": len(answer),
        "first_token_ms": {"direct": round(direct_ft, 2), "stack": round(stack_ft, 2)},
        "first_token_overhead_ms": {"median_of_pairs": round(statistics.median(overheads), 2),
                                    "of_medians": round(stack_ft - direct_ft, 2),
                                    "ratio": round(stack_ft / direct_ft, 3)},
        "whole_answer_ms": {"direct": round(direct_ms, 2), "stack": round(stack_ms, 2)},
        "tokens_per_s": {"direct": round(tokens / direct_ms * 1e3, 2), "stack": round(tokens / stack_ms * 1e3, 2),
                         "ratio": round(direct_ms / stack_ms, 3)},
        "inter_token_ms_direct": round((direct_ms - direct_ft) / max(1, tokens - 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args()
    python, gguf = cached_build()  # LocalModelMissing says what to run when the build is not there
    with tempfile.TemporaryDirectory() as tmp:
        server = LocalModelServer(python, gguf, Path(tmp) / "llama.log")
        model = server.start()
        try:
            result = asyncio.run(measure(model.base_url, model.model, args.repeats, args.max_tokens, Path(tmp)))
        finally:
            server.stop()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
