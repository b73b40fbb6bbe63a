"""Wire helpers of the OpenAI-compatible backend: SSE framing, chunk deltas, tool-call assembly, errors.

Pure functions and small accumulators, kept apart from `openai.py` so that the
streaming protocol can be read (and tested) without the agent loop around it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

#: How much of an error body we quote back to the user.
_ERROR_QUOTE_CHARS = 300


class TurnFailure(Exception):
    """An expected failure of a turn, carried to `run_turn` which turns it into a failed TurnResult."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


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
        raise TurnFailure("bad_response", f"The model server sent a chunk that is not JSON: {data[:80]!r}") from exc
    if not isinstance(chunk, dict):
        raise TurnFailure("bad_response", f"The model server sent an unexpected chunk: {data[:80]!r}")
    if chunk.get("error"):
        error_type, message = _describe_error_body(chunk, status=None)
        raise TurnFailure(error_type, f"The model server reported an error mid-stream: {message}")
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


async def iter_sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield the `data` of each server-sent event until `[DONE]` or the end of the stream.

    Multi-line data fields are joined with newlines as the SSE spec says;
    comments (`: keep-alive`) and `event:`/`id:` fields are ignored.
    """
    buffer: list[str] = []
    async for line in lines:
        if line == "":
            if buffer:
                data = "\n".join(buffer)
                buffer = []
                if data.strip() == "[DONE]":
                    return
                yield data
            continue
        if line.startswith("data:"):
            value = line[5:]
            buffer.append(value[1:] if value.startswith(" ") else value)
    if buffer and "\n".join(buffer).strip() != "[DONE]":
        yield "\n".join(buffer)


def add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    """Sum the numeric counters of one request's usage into the turn's usage."""
    for key, value in usage.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value


def classify_http_error(status: int, body: bytes) -> TurnFailure:
    """Turn an HTTP error response into a failure with a short type and a message a user can act on."""
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error_type, detail = _describe_error_body(parsed, status)
    else:
        text = body.decode("utf-8", "replace").strip()
        error_type, detail = _type_for(status, text), text[:_ERROR_QUOTE_CHARS]
    hint = _HINTS.get(error_type, "")
    return TurnFailure(error_type, f"The model server answered HTTP {status}: {detail or '(no details)'}{hint}")


_HINTS = {
    "auth": " (check OpenAIAgent.api_key / OPENAI_API_KEY)",
    "model_not_found": " (check OpenAIAgent.model / OPENAI_MODEL)",
    "rate_limit": " (the server is rate limiting; try again later)",
}


def _describe_error_body(body: dict[str, Any], status: int | None) -> tuple[str, str]:
    error = body.get("error")
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("type") or error)
        code = str(error.get("code") or error.get("type") or "")
    else:
        message, code = str(error or body.get("message") or body.get("detail") or ""), ""
    return _type_for(status, f"{code} {message}"), message[:_ERROR_QUOTE_CHARS]


def _type_for(status: int | None, text: str) -> str:
    lowered = text.lower()
    if status in (401, 403) or "invalid_api_key" in lowered or "unauthorized" in lowered:
        return "auth"
    if status == 429 or "rate_limit" in lowered or "rate limit" in lowered:
        return "rate_limit"
    if "model_not_found" in lowered or (status == 404 and "model" in lowered):
        return "model_not_found"
    if "context_length" in lowered or "context length" in lowered or "maximum context" in lowered:
        return "context_length"
    return "http_error"
