"""The one table of error kinds: Hermes' and providers' error texts map onto kinds with plain wording."""

from __future__ import annotations

import pytest

from hermes_jupyter.agents.errors import (
    ERROR_KINDS, ERRORS, classify, duration_words, failed_turn, turn_error, waiting_text,
)


@pytest.mark.parametrize(("text", "kind"), [
    ("HTTP 401: Unauthorized.", "authentication"),
    ("Non-retryable error (HTTP 401): Incorrect API key provided", "authentication"),
    ("API call failed after 3 retries: HTTP 500: mock failure", "provider_error"),
    ("Rate limited after 3 retries — HTTP 429", "rate_limit"),
    ("This model's maximum context length is 8192 tokens", "context_too_long"),
    ("Request payload too large (413). Cannot compress further.", "context_too_long"),
    ("Connection error.", "provider_unreachable"),
    ("Response remained truncated after 4 continuation attempts", "stream_cut"),
    ("Request timed out.", "timeout"),
    ("something odd", "agent_error"),
    ("/chat/completions: Invalid model name passed in model=gpt-9", "model_not_found"),
    ("request (9000 tokens) exceeds the available context size (8192 tokens)", "context_too_long"),
])
def test_error_texts_are_classified(text: str, kind: str) -> None:
    assert classify(text) == kind


def test_every_kind_has_a_plain_sentence_and_what_to_do() -> None:
    assert set(ERRORS) == ERROR_KINDS
    for entry in ERRORS.values():
        assert entry.what.endswith(".") and entry.todo.endswith(".") and "HTTP" not in entry.message


def test_turn_error_keeps_technical_text_in_detail_redacted() -> None:
    error = turn_error("authentication", "HTTP 401: bad key sk-proj-abcdefghijklmnopqrstuvwxyz012345")
    assert error.message == ERRORS["authentication"].message
    assert error.detail == "HTTP 401: bad key [redacted]"
    assert failed_turn("agent_crashed", "exit 9").outcome == "crashed"
    assert turn_error("weird_kind").message == ERRORS["agent_error"].message


def test_waits_are_said_in_words() -> None:
    assert [duration_words(s) for s in (0.2, 1, 45, 120, 3900)] == [
        "1 second", "1 second", "45 seconds", "2 minutes", "1 hour 5 minutes"]
    assert waiting_text(15) == "Waiting for the model (15 s)…"
    error = turn_error("rate_limit", "HTTP 429", wait_s=120)
    assert error.message.startswith("The model provider asked to wait 2 minutes") and "HTTP" not in error.message
