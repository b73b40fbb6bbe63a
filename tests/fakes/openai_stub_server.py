"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, standard library only.

It exists so that the `openai` backend, the server end to end, benchmarks and Hermes Agent
(which talks chat completions to its model) run offline, deterministically and at full
speed, against real HTTP: real sockets, SSE framing, chunked encoding and disconnects.
It records every request, so a test can check what the client sent back (tool results).

The reply is chosen by the last user message (first match wins):

| the message contains              | reply                                                     |
|-----------------------------------|-----------------------------------------------------------|
| `error NNN`                       | HTTP NNN with an OpenAI-style error body                  |
| `bad json`                        | one token, then a `data:` line that is not JSON           |
| `error chunk: TEXT`               | one token, then a `data: {"error": {"message": TEXT}}`    |
| `count to N` (+ `drop after K`)   | tokens `1`, ` 2`, … ` N` (the connection closes after K)  |
| `think` / `ponder`                | `reasoning_content` / `reasoning` deltas, then text       |
| `use two tools`                   | two parallel `list_files` calls                           |
| `use the NAME tool with {json}`   | one call of NAME with those arguments                     |
| `use these tools in turn: [json]` | one call per round, from a list of `[NAME, {args}]`       |
| `use a tool` (+ `N times`)        | one `list_files {"path": "."}` call (in N rounds)         |
| `<CURSOR>` (an inline completion) | `STUB_COMPLETION`, whatever else the code says             |
| anything else                     | `Hello from the stub model.`                              |

Once tool results follow the last user message, the reply is `Tool result: <results>`.
A user message of image parts after tool results (images of a plot) is not the prompt; in `use these
tools in turn`, the argument value `$cell_id` is the last `cell_id=…` an earlier tool result named.
`slowly` anywhere paces the chunks by `slow_chunk_delay_s` (for cancel tests).
Run it alone with `python -m tests.fakes.openai_stub_server [--port N] [--chunk-delay S]`.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STUB_MODEL = "stub-model"
#: Hermes Agent refuses a model whose reported context is below 64K.
STUB_CONTEXT_LENGTH = 131072
DEFAULT_REPLY = "Hello from the stub model."
#: The inline completion (docs/editor.md) of any prompt holding the cursor marker.
STUB_COMPLETION = "(a, b):\n    return a + b"

_ERROR_RE = re.compile(r"error (\d{3})")
_COUNT_RE = re.compile(r"count to (\d+)")
_DROP_RE = re.compile(r"drop after (\d+)")
_ROUNDS_RE = re.compile(r"use a tool (\d+) times")
_NAMED_TOOL_RE = re.compile(r"use the (\w+) tool(?: with (\{.*\}))?", re.DOTALL)
_ERROR_CODES = {401: "invalid_api_key", 403: "forbidden", 404: "model_not_found", 429: "rate_limit_exceeded"}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the stub received it; `body` is the parsed JSON (None if absent or invalid)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(slots=True)
class Reply:
    """A scripted reply: deltas streamed one per chunk, or an HTTP error."""

    deltas: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    status: int = 200
    error: dict[str, Any] | None = None
    slow: bool = False
    drop_after: int | None = None
    bad_json_after: int | None = None
    #: After this many deltas, an `{"error": …}` chunk in the stream (as LiteLLM sends a provider's failure).
    error_chunk: tuple[int, str] | None = None


def choose_reply(body: dict[str, Any]) -> Reply:
    """The scripted reply for a chat-completions request body (see the module docstring)."""
    messages = body.get("messages") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user" and not _images_only(m)),
                    default=-1)
    prompt = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    lowered = prompt.lower()
    slow = "slowly" in lowered
    tool_results = [_text(m.get("content")) for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    if "<CURSOR>" in prompt:  # an inline completion: the code may say anything, the answer is fixed
        return Reply(_text_deltas(STUB_COMPLETION), slow=slow)
    if (in_turn := _in_turn(prompt)) is not None:
        if len(tool_results) < len(in_turn):
            name, args = in_turn[len(tool_results)]
            return _tool_reply([(name, _with_cell_id(args, tool_results))], slow, len(tool_results))
    rounds = _ROUNDS_RE.search(lowered)
    if rounds and len(tool_results) < int(rounds.group(1)):
        return _tool_reply([("list_files", {"path": "."})], slow)
    if tool_results:
        return Reply(_text_deltas("Tool result: " + " | ".join(tool_results)), slow=slow)
    return _reply_for_prompt(prompt, lowered, slow)


def _images_only(message: dict[str, Any]) -> bool:
    """A user message carrying tool results' images (`image_url` parts), not a prompt."""
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content)


def _with_cell_id(args: dict[str, Any], tool_results: list[str]) -> dict[str, Any]:
    """`$cell_id` replaced by the last `cell_id=…` the tool results so far named."""
    found = [m for r in tool_results for m in re.findall(r"cell_id=([\w-]+)", r)]
    return {k: (found[-1] if v == "$cell_id" and found else v) for k, v in args.items()}


def _in_turn(prompt: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of `use these tools in turn: [[NAME, {args}], …]`, or None."""
    marker = "use these tools in turn:"
    if marker not in prompt:
        return None
    try:
        calls = json.loads(prompt[prompt.index(marker) + len(marker):])
        return [(str(name), dict(args)) for name, args in calls]
    except (ValueError, TypeError):
        return None


def _reply_for_prompt(prompt: str, lowered: str, slow: bool) -> Reply:
    if match := _ERROR_RE.search(lowered):
        status = int(match.group(1))
        code = _ERROR_CODES.get(status, "server_error")
        error = {"message": f"Stub error {status} ({code}).", "type": code, "code": code}
        return Reply(status=status, error=error)
    if "error chunk:" in lowered:
        text = prompt[lowered.index("error chunk:") + len("error chunk:"):].strip()
        return Reply([{"content": "Almost"}, {"content": " there"}], error_chunk=(1, text), slow=slow)
    if "bad json" in lowered:
        return Reply([{"content": "Almost"}, {"content": " there"}], bad_json_after=1, slow=slow)
    if match := _COUNT_RE.search(lowered):
        n = int(match.group(1))
        deltas = [{"content": str(i) if i == 1 else f" {i}"} for i in range(1, n + 1)]
        drop = _DROP_RE.search(lowered)
        return Reply(deltas, slow=slow, drop_after=int(drop.group(1)) if drop else None)
    if "think" in lowered or "ponder" in lowered:
        key = "reasoning_content" if "think" in lowered else "reasoning"
        thoughts = [{key: word} for word in _words("The user wants me to reason first.")]
        return Reply(thoughts + _text_deltas("Thought about it."), slow=slow)
    if "use two tools" in lowered:
        return _tool_reply([("list_files", {"path": "."}), ("list_files", {"path": "data"})], slow)
    if match := _NAMED_TOOL_RE.search(prompt):
        try:
            args = json.loads(match.group(2) or "{}")
        except ValueError:
            return Reply(status=400, error={"message": "The tool arguments in the prompt are not JSON.",
                                            "type": "invalid_request_error", "code": "bad_prompt"})
        return _tool_reply([(match.group(1), args)], slow)
    if "use a tool" in lowered:
        return _tool_reply([("list_files", {"path": "."})], slow)
    return Reply(_text_deltas(DEFAULT_REPLY), slow=slow)


def _tool_reply(calls: list[tuple[str, dict[str, Any]]], slow: bool, round_no: int = 0) -> Reply:
    """Some text, then the calls: ids and names first, arguments in 8-character pieces, interleaved.

    Ids are numbered per reply (`call_stub_0`), except in later rounds of `use these tools in turn`
    (`call_stub_<round>_0`): hermes-agent drops a later round's result whose id repeats an earlier one,
    and calls the tool again and again."""
    deltas = _text_deltas("Let me check.")
    pieces: list[list[str]] = []
    for index, (name, args) in enumerate(calls):
        call_id = f"call_stub_{index}" if round_no == 0 else f"call_stub_{round_no}_{index}"
        call = {"index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}}
        deltas.append({"tool_calls": [call]})
        raw = json.dumps(args)
        pieces.append([raw[i : i + 8] for i in range(0, len(raw), 8)])
    for step in range(max(len(p) for p in pieces)):
        for index, parts in enumerate(pieces):
            if step < len(parts):
                deltas.append({"tool_calls": [{"index": index, "function": {"arguments": parts[step]}}]})
    return Reply(deltas, finish_reason="tool_calls", slow=slow)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


def _text_deltas(text: str) -> list[dict[str, Any]]:
    return [{"content": word} for word in _words(text)]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def fold_message(deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming `message` equivalent to a list of deltas."""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(d.get("content", "") for d in deltas) or None}
    for key in ("reasoning_content", "reasoning"):
        if any(key in d for d in deltas):
            message[key] = "".join(d.get(key, "") for d in deltas)
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        for part in delta.get("tool_calls", []):
            call = calls.setdefault(part["index"], {"type": "function", "function": {"name": "", "arguments": ""}})
            call["id"] = part.get("id", call.get("id"))
            call["function"]["name"] += part.get("function", {}).get("name", "")
            call["function"]["arguments"] += part.get("function", {}).get("arguments", "")
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _StubHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: tests read the recorded requests instead of a log."""

    def handle(self) -> None:
        """Serve a keep-alive connection; a client that resets it between requests is no error."""
        try:
            super().handle()
        except ConnectionError:
            self.close_connection = True

    def do_GET(self) -> None:
        stub = self.server.stub
        stub.record(RecordedRequest("GET", self.path, dict(self.headers), None))
        model = {"id": stub.model, "object": "model", "owned_by": "stub", "created": 0,
                 "context_length": stub.context_length, "max_model_len": stub.context_length}
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [model]})
        elif self.path == f"/v1/models/{stub.model}":
            self._send_json(200, model)
        elif self.path == "/health":
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        stub = self.server.stub
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        stub.record(RecordedRequest("POST", self.path, dict(self.headers), body))
        if self.path != "/v1/chat/completions":
            self._send_json(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})
        elif stub.api_key and self.headers.get("Authorization") != f"Bearer {stub.api_key}":
            self._send_json(401, {"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key"}})
        elif not isinstance(body, dict):
            self._send_json(400, {"error": {"message": "The body is not a JSON object.", "type": "invalid_request"}})
        else:
            self._complete(body, choose_reply(body))

    def _complete(self, body: dict[str, Any], reply: Reply) -> None:
        if reply.error is not None:
            note = self.server.stub.error_note
            self._send_json(reply.status, {"error": {**reply.error, "message": reply.error["message"] + note}})
            return
        usage = {"prompt_tokens": sum(len(_text(m.get("content")).split()) for m in body["messages"]),
                 "completion_tokens": len(reply.deltas)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        model = str(body.get("model") or self.server.stub.model)
        if not body.get("stream"):
            choice = {"index": 0, "message": fold_message(reply.deltas), "finish_reason": reply.finish_reason}
            self._send_json(200, {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
                                  "model": model, "choices": [choice], "usage": usage})
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            self._stream(reply, model, usage if include_usage else None)
        except (BrokenPipeError, ConnectionResetError):
            self.server.stub.note_abort()
            self.close_connection = True

    def _stream(self, reply: Reply, model: str, usage: dict[str, Any] | None) -> None:
        """SSE over chunked encoding, one delta per chunk, paced as the reply asks."""
        stub = self.server.stub
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        delay_s = stub.slow_chunk_delay_s if reply.slow else stub.chunk_delay_s
        base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        for n, delta in enumerate(reply.deltas):
            if n == reply.drop_after or stub.stopping.is_set():
                self.close_connection = True  # no terminating chunk: the client sees a cut stream
                return
            if n == reply.bad_json_after:
                self._send_event("{this is not json")
                break
            if reply.error_chunk is not None and n == reply.error_chunk[0]:
                self._send_event(json.dumps({"error": {"message": reply.error_chunk[1], "code": None}}))
                break
            if n and delay_s > 0:
                stub.stopping.wait(delay_s)
            self._send_event(json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
        else:
            final = {"index": 0, "delta": {}, "finish_reason": reply.finish_reason}
            self._send_event(json.dumps({**base, "choices": [final]}))
            if usage is not None:
                self._send_event(json.dumps({**base, "choices": [], "usage": usage}))
            self._send_event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")

    def _send_event(self, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _StubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, stub: OpenAIStubServer, port: int) -> None:
        self.stub = stub
        super().__init__(("127.0.0.1", port), _Handler)


class OpenAIStubServer:
    """Start with `start()` or `with OpenAIStubServer() as stub:`; point clients at `stub.base_url`.

    `chunk_delay_s` paces every stream, `slow_chunk_delay_s` the ones whose prompt says
    `slowly`; `api_key`, if set, is required as a Bearer token. `error_note` is added to the message
    of every scripted error (as a proxy may add its upstream's words, key included).
    """

    def __init__(
        self, *, port: int = 0, chunk_delay_s: float = 0.0, slow_chunk_delay_s: float = 0.05,
        api_key: str | None = None, model: str = STUB_MODEL, context_length: int = STUB_CONTEXT_LENGTH,
    ) -> None:
        self.chunk_delay_s = chunk_delay_s
        self.slow_chunk_delay_s = slow_chunk_delay_s
        self.api_key = api_key
        self.model = model
        self.context_length = context_length
        self.error_note = ""
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._aborted = 0
        self._httpd = _StubHTTPServer(self, port)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat-completions requests received so far, in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"]

    @property
    def aborted_streams(self) -> int:
        """Streams the client closed before the stub finished writing them."""
        with self._lock:
            return self._aborted

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def note_abort(self) -> None:
        with self._lock:
            self._aborted += 1

    def start(self) -> OpenAIStubServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; streams in progress end at their next chunk."""
        self.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the scripted OpenAI-compatible stub on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between chunks (default 0)")
    parser.add_argument("--api-key", default=None, help="require this Bearer token (default: none)")
    args = parser.parse_args(argv)
    stub = OpenAIStubServer(port=args.port, chunk_delay_s=args.chunk_delay, api_key=args.api_key)
    print(stub.base_url, flush=True)
    try:
        stub._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stub._httpd.server_close()


if __name__ == "__main__":
    main()
