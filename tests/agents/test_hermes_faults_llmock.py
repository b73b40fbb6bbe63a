"""HermesAgent (the real hermes-agent install) against LLMock, a third-party OpenAI-compatible mock.

Hermes retries provider failures itself; what we check is that every fault ends truthfully on
our side: its retries and notices arrive as `status` notes, a failed turn is an error of the
right kind whose text never becomes an assistant token or history, usage is counted, and a key
the provider echoes is in no event.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.base import TurnResult
from tests.agents.hermes_fixtures import run_hermes_turn, write_hermes_home
from tests.fakes.recording_sink import RecordingSink

pytest.importorskip("llmock.testing")

MODEL = "gpt-4o-mini"
PLANTED_KEY = "sk-proj-PLANTEDhermesKEY0123456789abcdefXYZ"


@pytest.fixture
def mock(llmock: Any) -> Iterator[Any]:
    """LLMock answering in text (Hermes offers tools on every request; `auto` would call them)."""
    llmock.tool_mode("off")
    yield llmock
    llmock.tool_mode("auto")


def _turn(python: Path, tmp_path: Path, mock: Any, message: str = "Say something short.") -> tuple[TurnResult, RecordingSink]:
    home = write_hermes_home(tmp_path / "home", mock.base_url("openai"), MODEL, api_key=PLANTED_KEY)
    return run_hermes_turn(python, home, message)


def test_a_turn_reports_usage_from_hermes_counters(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert result.outcome == "completed" and result.final_text == sink.text() != ""
    assert result.usage["input_tokens"] > 0 and result.usage["output_tokens"] > 0


def test_server_error_is_retried_by_hermes_then_answers(hermes_python: Path, tmp_path: Path, mock: Any) -> None:
    mock.fail(500, times=1)
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert result.outcome == "completed" and result.error is None and sink.text()
    assert all(set(p) == {"text", "level"} and p["text"] for p in sink.payloads("status"))


def test_rejected_key_is_an_authentication_error_never_an_answer(hermes_python: Path, tmp_path: Path,
                                                                 mock: Any) -> None:
    mock.fail(401, times=None, message=f"Incorrect API key provided: {PLANTED_KEY}.")
    result, sink = _turn(hermes_python, tmp_path, mock)

    assert result.outcome == "errored" and result.error is not None and result.error.kind == "authentication"
    assert sink.payloads("token") == [] and result.final_text == ""
    assert all(m.get("role") != "assistant" for m in result.context)
    assert result.error.detail and "401" in result.error.detail and PLANTED_KEY not in result.error.detail
    # Hermes' own notice arrives through its status_callback (the run sink masks the key in it)
    assert [n["level"] for n in sink.payloads("status")] == ["warning"]
    assert "Non-retryable error" in sink.payloads("status")[0]["text"]


@pytest.mark.parametrize("fault", ["disconnect", "truncate", "corrupt"])
def test_broken_stream_never_completes_silently_with_a_cut_answer(hermes_python: Path, tmp_path: Path,
                                                                  mock: Any, fault: str) -> None:
    getattr(mock, fault)(after_chunks=2, times=None)
    result, sink = _turn(hermes_python, tmp_path, mock)

    # Hermes stitches "continuation attempts" together and then gives up with `completed: false`:
    # that is an error on our side, with the streamed part kept as partial output.
    assert result.outcome == "errored" and result.error is not None and result.error.kind == "stream_cut"
    assert result.error.detail and "truncated" in result.error.detail
    assert result.final_text == sink.text()
