"""Hermes asks a model server what kind it is once per agent process (docs/hermes-acp-notes.md, "First turn").

hermes-agent learns a local server's kind (LM Studio, Ollama, llama.cpp, vLLM) by probing five
endpoints and remembers only a positive answer, so against any other server (llama-cpp-python, a proxy,
a mock) every new session's agent, and every reply's pricing lookup, probed again before the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.base import TurnRequest, TurnResult
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.recording_sink import RecordingSink

pytest.importorskip("llmock.testing")

KIND_PROBES = ("/api/v1/models", "/api/tags", "/v1/props", "/props", "/version")


@pytest.fixture
def mock(llmock: Any) -> Iterator[Any]:
    llmock.tool_mode("off")
    yield llmock
    llmock.tool_mode("auto")


def test_three_sessions_probe_the_server_kind_once(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    home = write_hermes_home(tmp_path / "home", mock.base_url("openai"), "gpt-4o-mini")
    agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                        toolsets=["todo"])

    async def go() -> list[TurnResult]:
        try:
            return [await asyncio.wait_for(agent.run_turn(
                TurnRequest(session_id=f"s{i}", run_id=f"r{i}", message="Say hi.", history=[]), RecordingSink()), 120)
                for i in range(3)]
        finally:
            await agent.aclose()

    results = asyncio.run(go())
    assert [r.outcome for r in results] == ["completed"] * 3
    paths = [r.path for r in mock.requests]
    assert paths.count("/v1/chat/completions") == 3
    assert [p for p in paths if p in KIND_PROBES] == list(KIND_PROBES), paths


def test_after_the_warm_start_the_first_turn_goes_straight_to_the_model(
        hermes_python: Path, tmp_path: Path, mock: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The warm start builds the first session's agent (the probes included) before any turn comes."""
    home = write_hermes_home(tmp_path / "home", mock.base_url("openai"), "gpt-4o-mini")
    agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                        toolsets=["todo"])
    caplog.set_level(logging.INFO, logger="hermes_jupyter.agents.hermes.backend")

    async def go() -> tuple[TurnResult, int]:
        try:
            await agent.start()
            while not any("agent warmed" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.05)
            before = len(mock.requests)
            request = TurnRequest(session_id="s", run_id="r", message="Say hi.", history=[])
            return await asyncio.wait_for(agent.run_turn(request, RecordingSink()), 120), before
        finally:
            await agent.aclose()

    result, before = asyncio.run(asyncio.wait_for(go(), 180))
    assert result.outcome == "completed"
    assert [r.getMessage() for r in caplog.records if "agent warmed" in r.getMessage()][0].startswith(
        "hermes: agent warmed (ok=True")
    assert [r.path for r in mock.requests[:before] if r.path in KIND_PROBES] == list(KIND_PROBES)
    assert mock.requests[before].path == "/v1/chat/completions", "nothing asked before the model's request"
