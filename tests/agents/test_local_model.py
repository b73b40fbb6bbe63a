"""The openai backend against a real local model: llama-cpp-python's server with SmolLM2-135M
(tests/fakes/local_model.py), through the run engine, so the answer is journaled as a user's would be."""

from __future__ import annotations

import asyncio

import pytest

from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.runs.manager import RunManager

from ..fakes.local_model import LocalModel
from ..hermes_fixtures import Core

pytestmark = pytest.mark.asyncio


async def test_the_openai_backend_streams_an_answer_from_the_local_model(hermes_core: Core,
                                                                          local_model: LocalModel) -> None:
    agent = OpenAIAgent(base_url=local_model.base_url, model=local_model.model, api_key="not-needed",
                        temperature=0.0, max_tokens=128)
    manager = RunManager(hermes_core.store, hermes_core.journals, hermes_core.recovery, hermes_core.live,
                         {"openai": agent}, default_backend="openai", cancel_grace_s=0.5)
    session = hermes_core.store.create(backend="openai")
    try:
        run = await manager.start_run(session.session_id, "Say hello in one short sentence.")
        await asyncio.wait_for(run.done.wait(), timeout=120)
    finally:
        await agent.aclose()

    rows = hermes_core.journals.read(session.session_id, run.run_id).rows
    tokens = [r.payload["text"] for r in rows if r.event == "token"]
    assert len(tokens) > 1, rows  # streamed piece by piece, not one block at the end
    answer = "".join(tokens).strip()
    assert answer, rows
    assert manager.run_status(run.run_id)["status"] == "completed", rows[-1]
    saved = hermes_core.store.load(session.session_id)
    assert [m["role"] for m in saved.messages] == ["user", "assistant"]
    assert saved.messages[-1]["content"].strip() == answer
