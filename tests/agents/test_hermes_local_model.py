"""Hermes against a real local model: llama-cpp-python's server with SmolLM2-135M (tests/fakes/local_model.py).

The server's context (512 tokens) is smaller than Hermes' own system prompt, so every Hermes turn
overflows it; llama.cpp answers an overflow with an empty stream, and the server sends no usage when
streaming. Both must be said truly: the conversation is too long for the model, and no counts are invented.
"""

from __future__ import annotations

from pathlib import Path

from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.usage import usage_payload
from tests.agents.hermes_fixtures import run_hermes_turn, write_hermes_home

from ..fakes.local_model import LocalModel


def test_an_overflowing_turn_is_empty_answer_with_usage_not_reported(hermes_python: Path, tmp_path: Path,
                                                                      local_model: LocalModel) -> None:
    home = write_hermes_home(tmp_path / "home", local_model.base_url, local_model.model)
    result, sink = run_hermes_turn(hermes_python, home, "Tell me a story.")

    assert result.outcome == "errored" and result.error is not None, result
    assert result.error.kind == "empty_answer" and result.error.message == ERRORS["empty_answer"].message
    assert "too long" in result.error.message
    assert sink.payloads("token") == [] and result.final_text == ""
    usage = usage_payload(result.usage, duration_s=1.0, model=local_model.model)
    assert usage["input_tokens"] is None and usage["output_tokens"] is None, usage
