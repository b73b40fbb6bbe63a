"""How answers end against a real local model: llama-cpp-python's server with SmolLM2-135M
(tests/fakes/local_model.py), through the run engine, so each ending is journaled, settled and
worded as a user's would be (docs/transcript.md, "How an answer ends")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.notebook.outputs import final_bundle
from hermes_jupyter.runs.manager import RunManager
from hermes_jupyter.transcript import TranscriptFold

from ..fakes.local_model import LocalModel
from ..hermes_fixtures import Core

pytestmark = pytest.mark.asyncio

STORY = "Tell me a long story about a dragon who loves tea."


def _agent(model: LocalModel, **options: Any) -> OpenAIAgent:
    return OpenAIAgent(base_url=model.base_url, model=model.model, api_key="not-needed", temperature=0.0, **options)


@pytest_asyncio.fixture
async def engine(hermes_core: Core, local_model: LocalModel, request: pytest.FixtureRequest) -> AsyncIterator[RunManager]:
    options = getattr(request, "param", {})
    agent = _agent(local_model, **options)
    manager = RunManager(hermes_core.store, hermes_core.journals, hermes_core.recovery, hermes_core.live,
                         {"openai": agent}, default_backend="openai", cancel_grace_s=0.5)
    try:
        yield manager
    finally:
        await agent.aclose()


async def _ask(core: Core, manager: RunManager, session_id: str, prompt: str | None) -> tuple[str, list[Any]]:
    """Run a turn (`prompt` None: Continue) to its end; its run id and journal rows."""
    if prompt is None:
        run, _ = await manager.continue_turn(session_id)
    else:
        run = await manager.start_run(session_id, prompt)
    await asyncio.wait_for(run.done.wait(), timeout=180)
    return run.run_id, core.journals.read(session_id, run.run_id).rows


def _text(rows: list[Any]) -> str:
    return "".join(r.payload["text"] for r in rows if r.event == "token")


def _bundle(core: Core, session_id: str, run_id: str, rows: list[Any]) -> dict[str, Any]:
    fold = TranscriptFold(run_id, session_id)
    fold.feed(rows)
    return final_bundle(fold.snapshot())


async def _raw_usage(model: LocalModel) -> list[Any]:
    """Every `usage` the server itself puts in a stream that asks for usage (the precondition, said directly)."""
    body = {"model": model.model, "stream": True, "max_tokens": 8, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "Hi"}]}
    found: list[Any] = []
    async with httpx.AsyncClient(timeout=120) as client:
        async with client.stream("POST", f"{model.base_url}/chat/completions", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: {"):
                    usage = json.loads(line[6:]).get("usage")
                    if usage:
                        found.append(usage)
    return found


async def test_a_streamed_answer_without_usage_reads_tokens_not_reported(
    hermes_core: Core, engine: RunManager, local_model: LocalModel
) -> None:
    assert await _raw_usage(local_model) == []  # llama-cpp-python streams no usage, even when asked
    session = hermes_core.store.create(backend="openai")
    run_id, rows = await _ask(hermes_core, engine, session.session_id, "Say hello in one short sentence.")

    assert len([r for r in rows if r.event == "token"]) > 1  # streamed piece by piece
    assert rows[-1].event == "done", rows[-1]
    usage = next(r.payload for r in rows if r.event == "usage")
    assert usage["input_tokens"] is None and usage["output_tokens"] is None  # never an invented 0
    footer = _bundle(hermes_core, session.session_id, run_id, rows)["text/markdown"]
    assert "tokens not reported" in footer and "0 tokens" not in footer


@pytest.mark.parametrize("engine", [{"max_tokens": 16}], indirect=True)
async def test_a_length_stop_keeps_the_partial_and_continue_goes_on_without_repeating_it(
    hermes_core: Core, engine: RunManager
) -> None:
    session = hermes_core.store.create(backend="openai")
    first_id, first = await _ask(hermes_core, engine, session.session_id, STORY)

    kept = _text(first)
    assert kept.strip(), first
    assert first[-1].event == "apperror" and first[-1].payload["type"] == "length_limit", first[-1].payload
    marker = first[-1].payload["marker"]["text"]
    assert ERRORS["length_limit"].what in marker and "Continue" in marker
    assert engine.run_status(first_id)["status"] == "errored"

    # SmolLM2, told to continue, restarts its answer: the re-sent opening spends the budget, so the
    # continuation gets room for more than the repeat (a user raises max_tokens the same way).
    engine.backends["openai"].max_tokens = 48
    second_id, second = await _ask(hermes_core, engine, session.session_id, None)
    assert second[0].event == "continuation" and second[0].payload["continues"] == first_id
    more = _text(second)
    assert more.strip(), second  # something new came
    assert kept.strip() not in more  # the model's re-sent opening never reaches the user
    assert not kept.strip().startswith(more.strip()[:20])
    saved = hermes_core.store.load(session.session_id)
    answer = "".join(m.get("content") or "" for m in saved.messages if m["role"] == "assistant" and not m.get("_error"))
    assert answer.count(kept.strip()) == 1, answer


async def test_a_prompt_longer_than_the_context_ends_with_the_truthful_words(
    hermes_core: Core, engine: RunManager, local_model: LocalModel
) -> None:
    """llama-cpp-python answers a streamed request over its context with 200 and an empty stream (no error,
    no [DONE]): the run ends `empty_answer`, whose words name the likely cause; never "cut off"."""
    session = hermes_core.store.create(backend="openai")
    run_id, rows = await _ask(hermes_core, engine, session.session_id, "word " * (local_model.n_ctx + 200))

    assert _text(rows) == ""
    end = rows[-1]
    assert end.event == "apperror" and end.payload["type"] == "empty_answer", end.payload
    assert "too long for the model" in end.payload["marker"]["text"]
    assert "cut off" not in end.payload["marker"]["text"]
    assert engine.run_status(run_id)["status"] == "errored"
