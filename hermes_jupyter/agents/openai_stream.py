"""Wire helpers of the OpenAI-compatible backend: SSE framing, chunk deltas, tool-call assembly, errors.

Pure functions and small accumulators, kept apart from `openai.py` so that the
streaming protocol can be read (and tested) without the agent loop around it.
"""

from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Final

from .errors import ErrorKind, classify, kind_for_status, retry_text

#: How much of an error body we quote back to the user.
_ERROR_QUOTE_CHARS = 300


class TurnFailure(Exception):
    """An expected failure of a turn, carried to `run_turn` which turns it into a failed TurnResult.

    `error_type` is a kind of `errors.ERRORS` (which words it for the user); `message` is the
    technical detail (HTTP status, the provider's own text) for the details fold and the log.
    `status` is the HTTP status of a refused request, `retry_after` its `Retry-After` in seconds;
    `wait_s` is set when that wait was longer than we are willing to wait (the words then say so).
    """

    def __init__(
        self, error_type: ErrorKind, message: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.error_type: ErrorKind = error_type
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.wait_s: float | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete tool call as the model sent it (arguments still a JSON string)."""

    id: str
    name: str
    arguments: str

    def as_message_part(self) -> dict[str, Any]:
        """The entry of an assistant message's `tool_calls` list."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Assembles streamed `tool_calls` deltas by their `index`.

    Servers send the id and name once and the arguments in pieces; some omit the
    index (one call at a time) or the id (llama.cpp builds, older vLLM), so both
    get a fallback: index 0, and an id made from `id_prefix` and the position.
    """

    def __init__(self, id_prefix: str) -> None:
        self._id_prefix = id_prefix
        self._calls: dict[int, _PartialCall] = {}

    def add(self, deltas: list[Any]) -> None:
        for position, delta in enumerate(deltas):
            if not isinstance(delta, dict):
                continue
            index = delta.get("index", position)
            call = self._calls.setdefault(index if isinstance(index, int) else position, _PartialCall())
            if delta.get("id"):
                call.id = str(delta["id"])
            function = delta.get("function") or {}
            if function.get("name"):
                call.name = str(function["name"])
            if function.get("arguments"):
                arguments = function["arguments"]
                call.arguments.append(arguments if isinstance(arguments, str) else json.dumps(arguments))

    def __bool__(self) -> bool:
        return bool(self._calls)

    def finish(self, taken: set[str] | None = None) -> list[ToolCall]:
        """The complete calls in index order, with ids unique among themselves and `taken`.

        `taken` (updated in place) holds the ids already used this turn: some servers
        number calls per reply (`call_0` every time), and a tool card is paired by id.
        """
        calls: list[ToolCall] = []
        seen = taken if taken is not None else set()
        for n, index in enumerate(sorted(self._calls)):
            partial = self._calls[index]
            call_id = partial.id if partial.id and partial.id not in seen else f"{self._id_prefix}-{n}"
            seen.add(call_id)
            calls.append(ToolCall(call_id, partial.name, "".join(partial.arguments)))
        return calls


@dataclass(frozen=True, slots=True)
class ChunkDelta:
    """What one streamed chunk carries, with the server dialects already folded together."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[Any] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None


def parse_chunk(data: str) -> ChunkDelta:
    """Decode one SSE `data:` payload (a chat.completion.chunk or a whole chat.completion).

    `reasoning_content` (llama.cpp, deepseek) and `reasoning` (vLLM, OpenRouter)
    both become reasoning. A payload with an `error` object, which some servers
    send mid-stream instead of an HTTP status, is a failure.
    """
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise TurnFailure("bad_response", f"a chunk that is not JSON: {data[:80]!r}") from exc
    if not isinstance(chunk, dict):
        raise TurnFailure("bad_response", f"an unexpected chunk: {data[:80]!r}")
    if chunk.get("error"):
        error_type, message = _describe_error_body(chunk, status=None)
        raise TurnFailure(error_type, f"error reported mid-stream: {message}")
    choices = chunk.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or choice.get("message") or {}
    usage = chunk.get("usage")
    return ChunkDelta(
        text=_as_text(delta.get("content")),
        reasoning=_as_text(delta.get("reasoning_content") or delta.get("reasoning")),
        tool_calls=list(delta.get("tool_calls") or []),
        usage=usage if isinstance(usage, dict) else None,
        finish_reason=choice.get("finish_reason"),
    )


def _as_text(value: Any) -> str:
    """Content may be a string, null, or (some servers) a list of text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part.get("text", "")) for part in value if isinstance(part, dict))
    return ""


class SseData:
    """The `data` of each server-sent event until `[DONE]` or the end of the stream.

    `done` tells afterwards whether the stream ended with `[DONE]` (a stream that stops
    without it, and without a finish reason, was cut). Multi-line data fields are joined
    with newlines as the SSE spec says; comments (`: keep-alive`) and `event:`/`id:`
    fields are ignored.
    """

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self.done = False

    async def __aiter__(self) -> AsyncIterator[str]:
        buffer: list[str] = []
        async for line in self._lines:
            if line == "":
                if buffer:
                    data = "\n".join(buffer)
                    buffer = []
                    if data.strip() == "[DONE]":
                        self.done = True
                        return
                    yield data
                continue
            if line.startswith("data:"):
                value = line[5:]
                buffer.append(value[1:] if value.startswith(" ") else value)
        if buffer:
            if "\n".join(buffer).strip() == "[DONE]":
                self.done = True
            else:
                yield "\n".join(buffer)


async def iter_sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """`SseData` without the end flag."""
    async for data in SseData(lines):
        yield data


def add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    """Sum the numeric counters of one request's usage into the turn's usage.

    The cached part of the prompt (`prompt_tokens_details.cached_tokens`) is summed as `cached_tokens`.
    """
    for key, value in usage.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if isinstance(cached, int) and not isinstance(cached, bool):
        total["cached_tokens"] = total.get("cached_tokens", 0) + cached


def classify_http_error(status: int, body: bytes, retry_after: float | None = None) -> TurnFailure:
    """An HTTP error response as a failure: its kind, and the status and the provider's words as detail."""
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error_type, detail = _describe_error_body(parsed, status)
    else:
        text = body.decode("utf-8", "replace").strip()
        error_type, detail = _type_for(status, text), text[:_ERROR_QUOTE_CHARS]
    return TurnFailure(error_type, f"HTTP {status}: {detail or '(no details)'}", retry_after, status)


def _describe_error_body(body: dict[str, Any], status: int | None) -> tuple[ErrorKind, str]:
    error = body.get("error")
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("type") or error)
        code = str(error.get("code") or error.get("type") or "")
    else:
        message, code = str(error or body.get("message") or body.get("detail") or ""), ""
    return _type_for(status, f"{code} {message}"), message[:_ERROR_QUOTE_CHARS]


#: Kinds a provider's error text may name for a 4xx status (other texts leave the status to decide).
_TEXT_KINDS: Final = frozenset({"authentication", "rate_limit", "context_too_long", "model_not_found", "provider_error"})


def _type_for(status: int | None, text: str) -> ErrorKind:
    """The status decides auth, rate limit and server errors; the text refines a 4xx.

    A mid-stream error (no status) is read by its text alone, a provider failure when it names
    nothing we know: it is the provider's report, never a sign that its answer was unreadable. Its
    "Connection error" is the provider's own upstream failing (a proxy's), not us failing to reach
    the provider, which did answer: a provider failure too.
    """
    if status is None:
        kind = classify(text, default="provider_error")
        return "provider_error" if kind == "provider_unreachable" else kind
    if status in (401, 403, 429) or status >= 500:
        return kind_for_status(status)
    by_text = classify(text, default="bad_response")
    if status == 404 and by_text == "bad_response" and "model" in text.lower():
        return "model_not_found"
    if by_text in _TEXT_KINDS:
        return by_text
    return kind_for_status(status)


#: HTTP statuses worth another attempt: rate limiting and the provider's own failures.
RETRYABLE_STATUSES: Final = frozenset({429, 500, 502, 503, 504, 529})


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` in seconds: a number, or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_delay(attempt: int, retry_after: float | None, *, base_s: float, max_wait_s: float) -> float | None:
    """Seconds to wait before retry `attempt` (1-based): `Retry-After` if the provider sent it, else
    exponential backoff from `base_s`; None when the wait would exceed `max_wait_s` (give up now)."""
    delay = retry_after if retry_after is not None else base_s * 2 ** (attempt - 1)
    return delay if delay <= max_wait_s else None


def retry_notice(failure: TurnFailure, delay_s: float, attempt: int, attempts: int) -> dict[str, Any]:
    """The `status` payload journaled before a retry: what happened, in plain words, and how long we wait."""
    text = retry_text(failure.error_type, delay_s, attempt, attempts, asked=failure.retry_after is not None)
    return {"text": text, "level": "warning"}
