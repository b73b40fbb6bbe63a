"""Steer through the real hermes-agent install: text handed to a running turn reaches the model with
the next tool result (Hermes' `AIAgent.steer`), without stopping the turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hermes_jupyter.agents.base import TurnRequest, TurnResult
from hermes_jupyter.agents.clarify import ClarifyRequest
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink

PROMPT = "use the clarify tool with " + json.dumps({"question": "Which colour?", "choices": ["red", "blue"]})


def test_steered_text_reaches_the_model_with_the_next_tool_result(hermes_python: Path, tmp_path: Path) -> None:
    with OpenAIStubServer() as stub:
        home = write_hermes_home(tmp_path / "h", stub.base_url, STUB_MODEL)
        agent: HermesAgent
        steered: list[bool] = []

        async def answer(request: ClarifyRequest) -> str:
            # the turn is waiting inside a tool: the steer joins that tool's result
            steered.append(await agent.steer(request.run_id, "and make it PINEAPPLE yellow"))
            await asyncio.sleep(0.2)  # the op reaches the runner before the answer does
            return "blue"

        agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                            toolsets=["clarify"], clarify_handler=answer)

        async def go() -> Any:
            try:
                request = TurnRequest(session_id="s", run_id="run-steer", message=PROMPT, history=[])
                return await asyncio.wait_for(agent.run_turn(request, RecordingSink()), 120)
            finally:
                await agent.aclose()

        result: TurnResult = asyncio.run(go())
    assert steered == [True] and result.outcome == "completed"
    assert "PINEAPPLE" in result.final_text  # the stub echoes the tool result it was sent


def test_steer_of_a_turn_that_is_not_running_is_refused(tmp_path: Path) -> None:
    agent = HermesAgent(env={"HERMES_HOME": str(tmp_path)})
    assert asyncio.run(agent.steer("no-such-run", "hello")) is False
