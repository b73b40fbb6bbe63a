"""Wire helpers of the `openai` backend: SSE framing, tool-call assembly, error classification."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

from hermes_jupyter.agents.openai_stream import (
    ToolCall,
    ToolCallAccumulator,
    TurnFailure,
    add_usage,
    classify_http_error,
    iter_sse_data,
    parse_chunk,
)


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


def _events(*lines: str) -> list[str]:
    async def go() -> list[str]:
        return [data async for data in iter_sse_data(_lines(*lines))]

    return asyncio.run(go())


def test_sse_joins_multiline_data_skips_comments_and_stops_at_done() -> None:
    lines = [": keep-alive", "", "event: chunk", "data: {\"a\":", "data: 1}", "", "data:[DONE]", "", "data: late", ""]
    assert _events(*lines) == ['{"a":\n1}']


def test_sse_yields_a_last_event_without_a_trailing_blank_line() -> None:
    assert _events("data: one", "", "data: two") == ["one", "two"]


def test_tool_call_pieces_are_joined_by_index() -> None:
    acc = ToolCallAccumulator("call-x")
    acc.add([{"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}])
    acc.add([{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\""}}])
    acc.add([{"index": 1, "function": {"arguments": "{}"}}, {"index": 0, "function": {"arguments": ": 1}"}}])
    assert acc.finish() == [ToolCall("a", "f", '{"x": 1}'), ToolCall("b", "g", "{}")]


def test_tool_calls_without_index_or_id_get_fallbacks() -> None:
    acc = ToolCallAccumulator("call-x")
    acc.add([{"function": {"name": "f", "arguments": {"already": "parsed"}}}])
    acc.add([{"id": "dup", "index": 1, "function": {"name": "g"}}])
    acc.add([{"id": "dup", "index": 2, "function": {"name": "h"}}])
    calls = acc.finish()
    assert [c.id for c in calls] == ["call-x-0", "dup", "call-x-2"]
    assert calls[0].arguments == '{"already": "parsed"}'


def test_ids_already_used_this_turn_are_not_reused() -> None:
    taken = {"call_0"}
    acc = ToolCallAccumulator("call-run-1")
    acc.add([{"index": 0, "id": "call_0", "function": {"name": "f"}}])
    assert [c.id for c in acc.finish(taken)] == ["call-run-1-0"]
    assert taken == {"call_0", "call-run-1-0"}


def test_chunk_dialects_fold_into_one_delta() -> None:
    delta = parse_chunk('{"choices": [{"delta": {"content": [{"type": "text", "text": "hi"}], "reasoning": "r"}}]}')
    assert (delta.text, delta.reasoning) == ("hi", "r")
    usage_only = parse_chunk('{"choices": [], "usage": {"prompt_tokens": 3}}')
    assert usage_only.usage == {"prompt_tokens": 3} and usage_only.text == ""


def test_error_object_mid_stream_is_a_failure() -> None:
    with pytest.raises(TurnFailure) as caught:
        parse_chunk('{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}')
    assert caught.value.error_type == "rate_limit" and "Rate limit reached" in caught.value.message


@pytest.mark.parametrize(
    ("status", "body", "error_type"),
    [
        (400, b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}', "context_too_long"),
        (404, b'{"error": {"message": "The model `nope` does not exist"}}', "model_not_found"),
        (404, b"404 page not found", "bad_response"),
        (403, b"", "authentication"),
        (502, b"<html>Bad Gateway</html>", "provider_error"),
    ],
)
def test_http_errors_are_classified(status: int, body: bytes, error_type: str) -> None:
    failure = classify_http_error(status, body)
    assert failure.error_type == error_type and f"HTTP {status}" in failure.message


def test_usage_is_summed_over_requests() -> None:
    total: dict[str, Any] = {}
    add_usage(total, {"prompt_tokens": 3, "completion_tokens": 2, "details": {"cached": 1}})
    add_usage(total, {"prompt_tokens": 5, "completion_tokens": 1})
    assert total == {"prompt_tokens": 8, "completion_tokens": 3}
