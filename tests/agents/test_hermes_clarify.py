"""Hermes' clarify tool through the real hermes-agent install: the question is journaled, the user's
answer reaches the model, and an unanswered question resolves visibly with `answer: null`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.base import TurnResult
from hermes_jupyter.agents.clarify import ClarifyRequest
from hermes_jupyter.agents.hermes import HermesAgent
from tests.agents.hermes_fixtures import run_hermes_turn, write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink

QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}
PROMPT = f"use the clarify tool with {json.dumps(QUESTION)}"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def _turn(python: Path, home: Path, **traits: Any) -> tuple[TurnResult, RecordingSink]:
    return run_hermes_turn(python, home, PROMPT, run_id="run-clarify", toolsets=("clarify",), **traits)


def test_the_users_answer_reaches_the_model(hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path) -> None:
    asked: list[ClarifyRequest] = []

    async def answer(request: ClarifyRequest) -> str:
        asked.append(request)
        return "blue"

    result, sink = _turn(hermes_python, write_hermes_home(tmp_path / "h", stub.base_url, STUB_MODEL),
                         clarify_handler=answer)

    assert result.outcome == "completed"
    pending, resolved = sink.payloads("clarify")
    assert (pending["status"], pending["question"], pending["choices"]) == ("pending", "Which colour?", ["red", "blue"])
    assert (resolved["status"], resolved["answer"], resolved["clarify_id"]) == ("resolved", "blue",
                                                                                pending["clarify_id"])
    assert pending["clarify_id"] not in {t["tid"] for t in sink.payloads("tool")}
    assert asked[0].clarify_id == pending["clarify_id"]
    assert '"user_response": "blue"' in result.final_text  # the stub echoes the tool result it was sent


def test_an_unanswered_question_resolves_null_and_the_model_is_told(hermes_python: Path, stub: OpenAIStubServer,
                                                                    tmp_path: Path) -> None:
    result, sink = _turn(hermes_python, write_hermes_home(tmp_path / "h", stub.base_url, STUB_MODEL))

    assert result.outcome == "completed"
    resolved = sink.payloads("clarify")[-1]
    assert resolved["status"] == "resolved" and resolved["answer"] is None
    assert "did not answer" in result.final_text and "user_response" not in result.final_text


def test_models_name_the_model_of_hermes_config(stub: OpenAIStubServer, tmp_path: Path) -> None:
    home = write_hermes_home(tmp_path / "h", stub.base_url, STUB_MODEL)
    default, models = asyncio.run(HermesAgent(env={"HERMES_HOME": str(home)}).list_models())

    assert default == STUB_MODEL and models == [{"id": STUB_MODEL, "label": STUB_MODEL}]
