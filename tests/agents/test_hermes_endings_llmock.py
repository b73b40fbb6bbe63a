"""How a Hermes answer ends, said truly (docs/transcript.md "How an answer ends"): the real hermes-agent
install against LLMock, a third-party OpenAI-compatible mock.

hermes-agent handles some endings itself (it continues a length-cut answer up to three times, retries
empty replies and server errors, compacts on a context overflow); what we check is what the user is
shown: the ending's kind and the table's sentence, the part that arrived kept once (Hermes' own
continuations never repeat it), a waiting note while the model is silent, and a Continue without repeats.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.base import Continuation, TurnRequest, TurnResult
from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from tests.agents.hermes_fixtures import run_hermes_turn, write_hermes_home
from tests.fakes.recording_sink import RecordingSink

pytest.importorskip("llmock.testing")
from llmock.scenarios import Fail, Match, Reply, SlowFirstToken  # noqa: E402

MODEL = "gpt-4o-mini"
KEPT = "Once upon a time there was a friendly dragon named E"
REST = "mber who loved tea."
#: Hermes also asks the server what kind it is (GETs): script only its chat requests.
CHAT = Match(stream=True)


@pytest.fixture
def mock(llmock: Any) -> Iterator[Any]:
    """LLMock answering in text (Hermes offers tools on every request; `auto` would call them)."""
    llmock.tool_mode("off")
    yield llmock
    llmock.tool_mode("auto")


def _turn(python: Path, tmp_path: Path, mock: Any, **traits: Any) -> tuple[TurnResult, RecordingSink]:
    home = write_hermes_home(tmp_path / "home", mock.base_url("openai"), MODEL)
    return run_hermes_turn(python, home, "Tell me a story.", **traits)


def _failed(result: TurnResult, kind: str) -> str:
    assert result.outcome == "errored" and result.error is not None, result
    assert result.error.kind == kind and result.error.message == ERRORS[kind].message  # type: ignore[index]
    return result.error.detail or ""


def _chat_requests(mock: Any) -> int:
    return sum(1 for r in mock.requests if r.method == "POST")


def test_a_length_stop_that_stays_cut_is_length_limit_shown_once(hermes_python: Path, tmp_path: Path,
                                                                  mock: Any) -> None:
    mock.add(Reply(text=KEPT, finish_reason="length", times=None, match=CHAT))
    result, sink = _turn(hermes_python, tmp_path, mock)

    # Hermes asked three times more; every answer re-sent the same opening, which is shown once.
    assert _chat_requests(mock) == 4
    assert "truncated" in _failed(result, "length_limit")
    assert result.final_text == sink.text() == KEPT
    assert result.context == [{"role": "assistant", "content": KEPT}]
    assert "Continue" in result.error.message  # type: ignore[union-attr]


def test_hermes_own_continuation_after_a_length_stop_does_not_repeat(hermes_python: Path, tmp_path: Path,
                                                                      mock: Any) -> None:
    mock.add(Reply(text=KEPT, finish_reason="length", match=CHAT), Reply(text=KEPT + REST, match=CHAT))
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert result.outcome == "completed" and result.error is None
    assert sink.text() == result.final_text == KEPT + REST
    # The model-facing history is one answer, without Hermes' nudge and without the repeat.
    assert [m["role"] for m in result.context] == ["assistant"]
    assert result.context[0]["content"] == KEPT + REST


def test_a_content_filter_stop_is_its_own_ending(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    mock.add(Reply(text="I can tell you that", finish_reason="content_filter", match=CHAT))
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert "content_policy_blocked" in _failed(result, "content_filter")
    assert result.final_text == sink.text() == "I can tell you that"
    assert "Continue" not in result.error.message  # type: ignore[union-attr]


def test_an_empty_reply_is_empty_answer_and_hermes_sentinel_is_not_an_answer(hermes_python: Path,
                                                                              tmp_path: Path, mock: Any) -> None:
    mock.add(Reply(text="", times=None, match=CHAT))
    result, sink = _turn(hermes_python, tmp_path, mock)

    _failed(result, "empty_answer")
    assert sink.payloads("token") == [] and result.final_text == ""
    assert all(m.get("role") != "assistant" for m in result.context)


@pytest.mark.parametrize(("message", "code", "kind"), [
    ("/chat/completions: Invalid model name passed in model=gpt-9", None, "model_not_found"),
    ("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
     "context_length_exceeded", "context_too_long"),
    ("temperature: Input should be less than or equal to 2", "invalid_request_error", "bad_request"),
])
def test_a_400_is_classified_by_what_it_says(hermes_python: Path, tmp_path: Path, mock: Any, message: str,
                                             code: str | None, kind: str) -> None:
    mock.fail(400, message=message, code=code, times=None)
    result, sink = _turn(hermes_python, tmp_path, mock)

    detail = _failed(result, kind)
    assert detail and sink.payloads("token") == [] and result.final_text == ""
    assert "OpenAI-compatible" not in result.error.message  # type: ignore[union-attr]


def test_a_retry_after_hermes_does_not_honour_is_said_with_the_time(hermes_python: Path, tmp_path: Path,
                                                                     mock: Any) -> None:
    mock.fail(503, retry_after=120, times=None)
    result, _ = _turn(hermes_python, tmp_path, mock)

    assert result.error is not None and result.error.kind == "provider_error"
    assert "asked to wait 2 minutes" in result.error.message and "503" in (result.error.detail or "")


def test_a_silent_model_shows_one_waiting_note_until_it_answers(hermes_python: Path, tmp_path: Path,
                                                                mock: Any) -> None:
    mock.add(SlowFirstToken(1.5))
    result, sink = _turn(hermes_python, tmp_path, mock, waiting_note_after=0.4)

    assert result.outcome == "completed" and result.final_text == sink.text() != ""
    notes = [n for n in sink.payloads("status") if n.get("kind") == "waiting"]
    assert len(notes) >= 2 and {n["wait_id"] for n in notes} == {"wait-1"}, "one wait, one note"
    assert all(n["text"].startswith("Waiting for the model (") for n in notes[:-1])
    assert notes[-1]["text"].startswith("The model took ")
    first_token = sink.names().index("token")
    assert all(i < first_token for i, (name, p) in enumerate(sink.events) if p.get("kind") == "waiting")


def test_a_prompt_answer_shows_no_waiting_note(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    result, sink = _turn(hermes_python, tmp_path, mock, waiting_note_after=30)

    assert result.outcome == "completed"
    assert [n for n in sink.payloads("status") if n.get("kind") == "waiting"] == []


def test_continue_after_a_length_stop_shows_only_the_rest(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    """The user's Continue of a kept partial: the model restarts its answer; only what is new is shown."""
    mock.add(Reply(text=KEPT + REST, match=CHAT))
    home = write_hermes_home(tmp_path / "home", mock.base_url("openai"), MODEL)
    history = [{"role": "user", "content": "Tell me a story."}, {"role": "assistant", "content": KEPT}]
    request = TurnRequest(session_id="s", run_id="r2", message="Tell me a story.", history=history,
                          continues=Continuation(run_id="r1", partial=KEPT))
    agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                        toolsets=["todo"])
    sink = RecordingSink()

    async def go() -> TurnResult:
        try:
            return await asyncio.wait_for(agent.run_turn(request, sink), 120)
        finally:
            await agent.aclose()

    result = asyncio.run(go())
    assert result.outcome == "completed" and sink.text() == result.final_text == REST
    chat = [r for r in mock.requests if r.method == "POST"][-1]
    assert chat.body["messages"][-2] == {"role": "assistant", "content": KEPT}, "the kept answer is the prefix"


def test_a_rate_limit_hermes_waits_out_is_said_with_the_time(hermes_python: Path, tmp_path: Path,
                                                              mock: Any) -> None:
    mock.add(Fail(429, retry_after=1, match=CHAT))
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert result.outcome == "completed" and result.final_text == sink.text() != ""
    notes = [n["text"] for n in sink.payloads("status") if "slow down" in n["text"]]
    assert notes == ["The model provider asked us to slow down; waiting 1 second, as it asked, before trying "
                     "again (attempt 2 of 3)."]
