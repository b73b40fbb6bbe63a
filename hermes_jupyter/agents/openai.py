"""The `openai` backend: any OpenAI-compatible chat-completions endpoint, streamed, with a tool loop.

Each turn streams one request per model reply; tool calls are run through a
`ToolRegistry` and their results sent back until the model answers in text.
Expected failures (HTTP errors, refused connections, bad chunks) end the turn
as a failed `TurnResult`, never as an exception, and keep the partial text.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import httpx
from traitlets import Bool, Dict, Enum, Float, Int, Unicode, default
from traitlets.config import Configurable

from ..events import REASONING, STATUS, TOKEN, TOOL, TOOL_COMPLETE
from .base import EventSink, TurnRequest, TurnResult
from .continuing import OverlapTrim, continuation_history, continuation_messages
from .errors import failed_turn
from .models import model_entry
from .openai_stream import (
    RETRYABLE_STATUSES,
    SseData,
    ToolCall,
    ToolCallAccumulator,
    TurnFailure,
    add_usage,
    classify_http_error,
    parse_chunk,
    parse_retry_after,
    retry_delay,
    retry_notice,
)
from .tool_images import MAX_IMAGES, image_message, takes_images
from .tools_registry import ToolRegistry, ToolsFactory, call_tool, tool_image_urls
from .waiting import WaitingNote

#: Characters of a tool's arguments shown on its card before the result arrives.
_ARGS_PREVIEW_CHARS = 200


@dataclass(slots=True)
class _TurnState:
    """What a turn has produced so far; read back whether it ends well, fails or is interrupted."""

    text: list[str] = field(default_factory=list)
    reply: list[str] = field(default_factory=list)
    context: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    after_tools: bool = False
    call_ids: set[str] = field(default_factory=set)
    #: A continuation's filter of text the user already sees (None: not continuing, or done).
    trim: OverlapTrim | None = None
    #: Text deltas the model sent this turn (trimmed repeats included).
    heard: int = 0
    #: Waits for a reply's first data so far (each is one waiting note, `wait_id` "wait-<n>").
    waits: int = 0
    #: Image messages sent after tool results, by their place in `context`; never kept in the conversation.
    images: dict[int, dict[str, Any]] = field(default_factory=dict)

    def sent_context(self) -> list[dict[str, Any]]:
        """`context` as the next request sends it: with this turn's image messages in their places."""
        if not self.images:
            return self.context
        sent: list[dict[str, Any]] = []
        for index, row in enumerate(self.context):
            sent.append(row)
            if index + 1 in self.images:
                sent.append(self.images[index + 1])
        return sent

    def add_text(self, text: str) -> str:
        """Record a text delta; return it as streamed, with a paragraph break if tools ran since the last text."""
        if self.trim is not None:
            text = self.trim.feed(text)
            if not text:
                return ""
            self.trim = None
        streamed = "\n\n" + text if self.after_tools and self.text else text
        self.after_tools = False
        self.text.append(streamed)
        self.reply.append(text)
        return streamed

    def result(self, **kwargs: Any) -> TurnResult:
        """The TurnResult, with the reply cut short (if any) as a last assistant row."""
        context = list(self.context)
        if self.reply:
            context.append({"role": "assistant", "content": "".join(self.reply)})
        return TurnResult(final_text="".join(self.text), context=context, usage=dict(self.usage), **kwargs)

    def release_held(self) -> str:
        """Text a continuation's trim still holds, recorded as streamed ("" when none)."""
        if self.trim is None:
            return ""
        held, self.trim = self.trim.flush(), None
        return self.add_text(held) if held else ""

    def failure(self, failure: TurnFailure) -> TurnResult:
        """An errored TurnResult that keeps the partial text (worded by the error table)."""
        result = self.result()
        return failed_turn(failure.error_type, failure.message, final_text=result.final_text,
                           context=result.context, usage=result.usage, wait_s=failure.wait_s)


class OpenAIAgent(Configurable):
    """Streams chat completions from an OpenAI-compatible server (OpenAI, llama.cpp, vLLM, Ollama, LiteLLM)."""

    name = "openai"

    base_url = Unicode(
        config=True,
        help="Base URL of the API, up to and including `/v1` "
        "(default: $OPENAI_BASE_URL, else https://api.openai.com/v1).",
    )
    model = Unicode(
        config=True,
        help="Model name sent with each request (default: $OPENAI_MODEL; empty: the first model the server lists).",
    )
    api_key = Unicode(
        config=True,
        help="Bearer token for the API (default: $OPENAI_API_KEY; empty: no Authorization header).",
    )
    connect_timeout = Float(10.0, config=True, help="Seconds to wait for a connection to the server (default 10).")
    idle_timeout = Float(
        120.0,
        config=True,
        help="Seconds without a byte from the server, before or during a reply, after which the turn fails "
        "(default 120): an idle limit, not a cap on the whole reply.",
    )
    request_timeout = Float(
        None,
        allow_none=True,
        config=True,
        help="Longest time one model request may take in all, in seconds (default None: no cap; "
        "`idle_timeout` still ends a silent one).",
    )
    waiting_note_after = Float(
        15.0,
        config=True,
        help="Seconds without a byte of the model's reply after which a status note says it is being waited for, "
        "updated as often; one note per wait (default 15; 0: never).",
    )
    continue_prefill = Enum(
        ["auto", "on", "off"],
        "auto",
        config=True,
        help="How Continue hands the model its unfinished answer: `on` sends it as the final assistant message to "
        "continue (prefill; llama.cpp, vLLM); `off` adds an instruction to continue; `auto` (default) prefills "
        "when the server's `models` list names llama.cpp or vLLM.",
    )
    max_iterations = Int(
        10,
        config=True,
        help="Most model requests per turn, tool rounds included (default 10); past it the turn fails.",
    )
    system_prompt = Unicode("", config=True, help="System message sent before the history (default empty: none).")
    temperature = Float(None, allow_none=True, config=True, help="Sampling temperature (default None: the server's).")
    max_tokens = Int(
        None, allow_none=True, config=True, help="Reply length cap in tokens (default None: the server's)."
    )
    stream_usage = Bool(
        True,
        config=True,
        help="Ask for token usage at the end of the stream, `stream_options.include_usage` (default True; "
        "turn off for servers that reject the field).",
    )
    extra_body = Dict(
        config=True, help="Fields merged into every request body, e.g. vLLM sampling options (default {})."
    )
    extra_headers = Dict(config=True, help="Headers added to every request (default {}).")
    tool_preview_chars = Int(500, config=True, help="Characters of a tool result shown on its card (default 500).")
    send_images = Enum(
        ["auto", "always", "never"], default_value="auto", config=True,
        help="Whether images in tool results (plots a notebook cell drew) go to the model as image parts: always, "
        "never, or auto (when the model's name is one known to read images: gpt-4o, gpt-4.1, gpt-5, claude, "
        "gemini, llava, *-vl …). A model that gets none reads a one-line description (docs/autonomy.md).",
    )
    max_retries = Int(
        3, config=True,
        help="Retries of a request the provider refused with 429 or a 5xx (default 3; 0: none). Each retry is "
        "shown as a status note.",
    )
    retry_backoff = Float(
        1.0, config=True,
        help="Seconds before the first retry when the provider sent no Retry-After; doubles each retry (default 1).",
    )
    retry_max_wait = Float(
        60.0, config=True,
        help="Longest wait before one retry, in seconds (default 60); a longer Retry-After fails the turn at once.",
    )

    @default("base_url")
    def _default_base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    @default("model")
    def _default_model(self) -> str:
        return os.environ.get("OPENAI_MODEL", "")

    @default("api_key")
    def _default_api_key(self) -> str:
        return os.environ.get("OPENAI_API_KEY", "")

    def __init__(
        self, *, tools: ToolRegistry | None = None, tools_factory: ToolsFactory | None = None, **kwargs: Any
    ) -> None:
        """`tools` offers one registry to every turn; `tools_factory` builds one per turn (it wins if both)."""
        super().__init__(**kwargs)
        self._tools_factory = tools_factory
        self._tools = tools
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._interrupts: set[str] = set()
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._listed_model: str | None = None
        self._server_kind: str | None = None

    def use_endpoint(self, base_url: str, model: str, api_key: str) -> None:
        """Take the model settings saved in JupyterLab (docs/models.md): the next request goes there.

        What was learned about the old server (its first listed model, its kind) is forgotten.
        """
        if (base_url, api_key) != (self.base_url, self.api_key):
            self._listed_model, self._server_kind = None, None
        self.base_url, self.model, self.api_key = base_url, model, api_key

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult:
        state = _TurnState()
        task = asyncio.create_task(self._converse(request, sink, state))
        self._tasks[request.run_id] = task
        if request.run_id in self._interrupts:
            task.cancel()
        try:
            await task
            return state.result()
        except TurnFailure as exc:
            return state.failure(exc)
        except httpx.HTTPError as exc:
            return state.failure(self._transport_failure(exc))
        except asyncio.CancelledError:
            # Our own task was cancelled by `interrupt`; if the caller cancelled us, propagate.
            current = asyncio.current_task()
            if task.cancelled() and not (current and current.cancelling()):
                return state.result(outcome="interrupted")
            raise
        finally:
            self._tasks.pop(request.run_id, None)
            self._interrupts.discard(request.run_id)

    async def interrupt(self, run_id: str) -> None:
        """Cancel the run's task: the in-flight HTTP stream is closed as the cancellation unwinds it."""
        self._interrupts.add(run_id)
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()

    async def aclose(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._http is not None and self._http_loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._http = None

    async def _converse(self, request: TurnRequest, sink: EventSink, state: _TurnState) -> None:
        """Request, stream, run tools, repeat until the model answers without tool calls."""
        client = self._client()
        model = request.model or self.model or await self._listed_model_name(client)
        state.usage["model"] = model
        registry = self._registry_for(request, sink)
        prefill = request.continues is not None and await self._prefills(client)
        messages = self._opening_messages(request, prefill=prefill)
        if request.continues is not None:
            state.trim = OverlapTrim(request.continues.partial)
        for iteration in range(self.max_iterations):
            body = self._request_body(model, messages + state.sent_context(), registry)
            if prefill and iteration == 0:
                body.update(self._prefill_fields())
            calls = await self._stream_reply(client, body, sink, state, f"call-{request.run_id}-{iteration}")
            reply_text = "".join(state.reply)
            if not calls:
                state.reply.clear()
                if reply_text:
                    state.context.append({"role": "assistant", "content": reply_text})
                return
            assert registry is not None  # _stream_reply only returns calls when tools were offered
            assistant: dict[str, Any] = {"role": "assistant", "content": reply_text or None}
            assistant["tool_calls"] = [call.as_message_part() for call in calls]
            results, images = [], []
            for call in calls:
                results.append(await self._run_tool(call, registry, sink))
                images += tool_image_urls(registry)
            # The call row and its results land together, so history never holds unanswered
            # calls; until then an interruption keeps the reply's text as a plain row.
            state.reply.clear()
            state.context.extend([assistant, *results])
            if images and takes_images(model, self.send_images):
                state.images[len(state.context)] = image_message(images[:MAX_IMAGES])
            state.after_tools = True
        raise TurnFailure(
            "tool_limit_reached",
            f"still calling tools after {self.max_iterations} requests (OpenAIAgent.max_iterations)",
        )

    async def _stream_reply(
        self, client: httpx.AsyncClient, body: dict[str, Any], sink: EventSink, state: _TurnState, id_prefix: str
    ) -> list[ToolCall]:
        """One model reply, retrying a 429 or 5xx refusal (each retry journaled as a `status` note)."""
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._stream_once(client, body, sink, state, id_prefix)
            except TurnFailure as failure:
                delay = self._retry_delay(failure, attempt, attempts)
                if delay is None:
                    if failure.status in RETRYABLE_STATUSES and (failure.retry_after or 0) > self.retry_max_wait:
                        failure.wait_s = failure.retry_after  # asked to wait longer than we do: say so
                    raise
                sink.emit(STATUS, retry_notice(failure, delay, attempt, attempts))
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _retry_delay(self, failure: TurnFailure, attempt: int, attempts: int) -> float | None:
        if failure.status not in RETRYABLE_STATUSES or attempt >= attempts:
            return None
        return retry_delay(attempt, failure.retry_after, base_s=self.retry_backoff, max_wait_s=self.retry_max_wait)

    async def _stream_once(
        self, client: httpx.AsyncClient, body: dict[str, Any], sink: EventSink, state: _TurnState, id_prefix: str
    ) -> list[ToolCall]:
        """One model reply, capped by `request_timeout` when set (see `_stream_reply_body`)."""
        if self.request_timeout is None:
            return await self._stream_reply_body(client, body, sink, state, id_prefix)
        try:
            return await asyncio.wait_for(
                self._stream_reply_body(client, body, sink, state, id_prefix), self.request_timeout)
        except asyncio.TimeoutError as exc:
            raise TurnFailure("timeout", f"the reply took longer than {self.request_timeout} s "
                                         "(OpenAIAgent.request_timeout)") from exc

    async def _stream_reply_body(
        self, client: httpx.AsyncClient, body: dict[str, Any], sink: EventSink, state: _TurnState, id_prefix: str
    ) -> list[ToolCall]:
        """Stream one model reply: text and reasoning go out as they arrive; tool calls are returned.

        How it ended decides the rest: `length` and `content_filter` are their own failures
        (the partial text stays in `state`); a reply with nothing in it is `empty_answer`; a
        stream that stops without a finish reason and without `[DONE]`, or whose connection
        drops, is `stream_cut`. None of these is a completed answer.
        """
        accumulator = ToolCallAccumulator(id_prefix)
        url = self.base_url.rstrip("/") + "/chat/completions"
        finish: str | None = None
        before = state.heard
        state.waits += 1
        async with WaitingNote(sink, f"wait-{state.waits}", self.waiting_note_after) as wait:
            async with client.stream("POST", url, json=body, headers=self._headers()) as response:
                if response.status_code >= 400:
                    wait.stop()
                    raise classify_http_error(response.status_code, await response.aread(),
                                              parse_retry_after(response.headers.get("retry-after")))
                payloads = _ReplyPayloads(response)
                try:
                    async for data in payloads:
                        if not wait.heard:
                            wait.answered()
                        delta = parse_chunk(data)
                        finish = finish or delta.finish_reason
                        self._take_delta(delta, sink, state, accumulator)
                except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                    raise TurnFailure(
                        "stream_cut", f"the connection to {self.base_url} dropped mid-stream: {exc}") from exc
                finally:
                    held = state.release_held()
                    if held:
                        sink.emit(TOKEN, {"text": held})
        _check_ending(finish, payloads.done, wrote=state.heard > before or bool(accumulator),
                      answered=bool(state.heard))
        if accumulator and "tools" not in body:
            raise TurnFailure("bad_response", "The model called a tool although none was offered.")
        return accumulator.finish(state.call_ids)

    @staticmethod
    def _take_delta(delta: Any, sink: EventSink, state: _TurnState, accumulator: ToolCallAccumulator) -> None:
        if delta.reasoning:
            sink.emit(REASONING, {"text": delta.reasoning})
        if delta.text:
            state.heard += 1
            streamed = state.add_text(delta.text)
            if streamed:
                sink.emit(TOKEN, {"text": streamed})
        if delta.tool_calls:
            accumulator.add(delta.tool_calls)
        if delta.usage:
            add_usage(state.usage, delta.usage)

    async def _run_tool(self, call: ToolCall, registry: ToolRegistry, sink: EventSink) -> dict[str, Any]:
        """Announce, run and report one tool call; return the `tool` message for the model."""
        args, problem = _parse_arguments(call)
        sink.emit(TOOL, {"tid": call.id, "name": call.name, "args": args, "preview": _args_preview(args)})
        started = time.monotonic()
        try:
            if problem:
                result, is_error = problem, True
            else:
                result, is_error = await call_tool(registry, call.name, args, call.id)
        except asyncio.CancelledError:
            self._emit_tool_complete(sink, call, "Interrupted before the tool finished.", started, True)
            raise
        self._emit_tool_complete(sink, call, result, started, is_error)
        return {"role": "tool", "tool_call_id": call.id, "content": result}

    def _emit_tool_complete(
        self, sink: EventSink, call: ToolCall, result: str, started: float, is_error: bool
    ) -> None:
        preview = result if len(result) <= self.tool_preview_chars else result[: self.tool_preview_chars] + "…"
        sink.emit(TOOL_COMPLETE, {
            "tid": call.id, "name": call.name, "preview": preview,
            "duration": round(time.monotonic() - started, 6), "is_error": is_error,
        })

    def _opening_messages(self, request: TurnRequest, *, prefill: bool = False) -> list[dict[str, Any]]:
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        if request.continues is not None and prefill:
            return [*system, *continuation_history(request.history, request.continues)]
        if request.continues is not None:
            return [*system, *continuation_messages(request.history, request.continues)]
        return [*system, *request.history, {"role": "user", "content": request.model_message}]

    def _request_body(
        self, model: str, messages: list[dict[str, Any]], registry: ToolRegistry | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        schemas = registry.schemas() if registry is not None else []
        if schemas:
            body["tools"] = schemas
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)
        return body

    def _registry_for(self, request: TurnRequest, sink: EventSink) -> ToolRegistry | None:
        if self._tools_factory is not None:
            return self._tools_factory(request, sink)
        return self._tools

    def _headers(self) -> dict[str, str]:
        headers = {str(k): str(v) for k, v in self.extra_headers.items()}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _client(self) -> httpx.AsyncClient:
        """One pooled client per event loop (a client cannot outlive the loop its sockets belong to)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop:
            timeout = httpx.Timeout(self.idle_timeout, connect=self.connect_timeout)
            self._http = httpx.AsyncClient(timeout=timeout)
            self._http_loop = loop
        return self._http

    async def _listed_model_name(self, client: httpx.AsyncClient) -> str:
        """With no model configured, use the first the server lists (llama.cpp serves exactly one)."""
        if self._listed_model:
            return self._listed_model
        response = await client.get(self.base_url.rstrip("/") + "/models", headers=self._headers())
        if response.status_code >= 400:
            raise classify_http_error(response.status_code, response.content)
        try:
            self._listed_model = str(response.json()["data"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TurnFailure(
                "config", "No model is configured (OpenAIAgent.model / OPENAI_MODEL) and the server lists none."
            ) from exc
        return self._listed_model

    async def _prefills(self, client: httpx.AsyncClient) -> bool:
        """Whether a continuation is sent as a prefill (`continue_prefill`; `auto` asks the server once)."""
        if self.continue_prefill != "auto":
            return self.continue_prefill == "on"
        if self._server_kind is None:
            self._server_kind = await _server_kind(client, self.base_url.rstrip("/") + "/models", self._headers())
        return self._server_kind in ("llama.cpp", "vllm")

    def _prefill_fields(self) -> dict[str, Any]:
        """vLLM continues the final assistant message only when told; llama.cpp does it by itself."""
        return {"continue_final_message": True, "add_generation_prompt": False} if self._server_kind == "vllm" else {}

    async def list_models(self) -> tuple[str | None, list[dict[str, str]]]:
        """The server's `/models`; an unreachable server lists only the configured model."""
        configured = self.model or None
        try:
            response = await self._client().get(self.base_url.rstrip("/") + "/models", headers=self._headers())
            listed = [str(m["id"]) for m in response.json().get("data", []) if m.get("id")]
        except (httpx.HTTPError, ValueError, AttributeError, TypeError, KeyError):
            listed = []
        ids = listed or ([configured] if configured else [])
        if configured and configured not in ids:
            ids.insert(0, configured)
        return configured or (ids[0] if ids else None), [model_entry(i) for i in ids]

    def _transport_failure(self, exc: httpx.HTTPError) -> TurnFailure:
        where = self.base_url
        if isinstance(exc, httpx.ConnectError):
            return TurnFailure("provider_unreachable", f"could not connect to {where}: {exc}")
        if isinstance(exc, httpx.TimeoutException):
            return TurnFailure("timeout", f"{where} did not answer in time ({type(exc).__name__})")
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            return TurnFailure("provider_unreachable", f"{where} closed the connection: {exc}")
        return TurnFailure("provider_unreachable", f"request to {where} failed: {type(exc).__name__}: {exc}")


def _check_ending(finish: str | None, done: bool, *, wrote: bool, answered: bool) -> None:
    """Raise the failure a reply's ending is: a length or filter stop, nothing at all, or a cut stream."""
    if finish == "length":
        raise TurnFailure("length_limit", "the model stopped at its length limit (finish_reason=length)")
    if finish == "content_filter":
        raise TurnFailure("content_filter", "the provider's content filter stopped the answer "
                                            "(finish_reason=content_filter)")
    if not wrote and not answered:
        how = f"finish_reason={finish}" if finish else "[DONE]" if done else "the end of the stream"
        raise TurnFailure("empty_answer", f"the reply had no text and no tool call ({how})")
    if not (finish or done):
        raise TurnFailure("stream_cut", "the stream ended without a finish reason or [DONE]")


async def _server_kind(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> str:
    """`llama.cpp`, `vllm` or `other`, from the `models` list (`owned_by`) and the `Server` header."""
    try:
        response = await client.get(url, headers=headers)
        owners = {str(m.get("owned_by", "")).lower() for m in response.json().get("data", []) if isinstance(m, dict)}
        server = response.headers.get("server", "").lower()
    except (httpx.HTTPError, ValueError, AttributeError, TypeError):
        return "other"
    if "llamacpp" in owners or "llama.cpp" in server:
        return "llama.cpp"
    return "vllm" if "vllm" in owners else "other"


class _ReplyPayloads:
    """SSE data payloads, or the whole body once when the server ignored `stream` and sent JSON.

    `done` says whether the stream ended with `[DONE]` (a whole JSON body counts as ended).
    """

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.done = False

    async def __aiter__(self) -> AsyncIterator[str]:
        if "application/json" in self._response.headers.get("content-type", ""):
            self.done = True
            yield (await self._response.aread()).decode("utf-8", "replace")
            return
        sse = SseData(self._response.aiter_lines())
        async for data in sse:
            yield data
        self.done = sse.done


def _parse_arguments(call: ToolCall) -> tuple[dict[str, Any], str | None]:
    """The call's arguments as a dict, or a message for the model saying why they are unusable."""
    if not call.name:
        return {}, "The tool call had no tool name."
    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return {"_unparsed": call.arguments}, f"The arguments of {call.name} are not valid JSON: {call.arguments[:200]}"
    if not isinstance(args, dict):
        return {"_unparsed": call.arguments}, f"The arguments of {call.name} must be a JSON object."
    return args, None


def _args_preview(args: dict[str, Any]) -> str:
    """A one-line summary for the tool card: the lone string argument, else compact JSON."""
    values = list(args.values())
    text = values[0] if len(values) == 1 and isinstance(values[0], str) else json.dumps(args, ensure_ascii=False)
    return text if len(text) <= _ARGS_PREVIEW_CHARS else text[:_ARGS_PREVIEW_CHARS] + "…"
