"""The `openai` backend against the scripted stub server: streaming, tool loop, cancel, failures.

Each test drives `OpenAIAgent.run_turn` directly with a recording sink over real HTTP.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any, Iterator

import pytest

from hermes_jupyter.agents.base import AgentBackend, TurnRequest, TurnResult
from hermes_jupyter.agents.errors import ERRORS
from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.agents.tools_registry import ToolRegistry
from tests.fakes.openai_stub_server import OpenAIStubServer, choose_reply
from tests.fakes.recording_sink import RecordingSink

LIST_FILES_SCHEMA = {
    "type": "function",
    "function": {
        "name": "list_files",
        "description": "List the files of a directory.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}


class FakeTools:
    """A tool registry with one tool, `list_files`; `delay_s` keeps a call busy, `fail` makes it raise."""

    def __init__(self, *, delay_s: float = 0.0, fail: bool = False) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.delay_s = delay_s
        self.fail = fail

    def schemas(self) -> list[dict[str, Any]]:
        return [LIST_FILES_SCHEMA]

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.calls.append((name, args))
        await asyncio.sleep(self.delay_s)
        if self.fail:
            raise RuntimeError("disk on fire")
        if name != "list_files":
            return f"Unknown tool {name}.", True
        return ("data.csv notes.md" if args.get("path") == "." else "raw.parquet"), False


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(slow_chunk_delay_s=0.05) as server:
        yield server


def _request(message: str, history: list[dict[str, Any]] | None = None, run_id: str = "run1",
             attachments: list[dict[str, Any]] | None = None) -> TurnRequest:
    return TurnRequest(session_id="s1", run_id=run_id, message=message, history=history or [],
                       attachments=attachments or [])


def _agent(stub: OpenAIStubServer, tools: ToolRegistry | None = None, **traits: Any) -> OpenAIAgent:
    traits.setdefault("base_url", stub.base_url)
    traits.setdefault("model", "stub-model")
    traits.setdefault("api_key", "sk-test")
    return OpenAIAgent(tools=tools, **traits)


def _turn(agent: OpenAIAgent, message: str, sink: RecordingSink, **request: Any) -> TurnResult:
    async def go() -> TurnResult:
        try:
            return await agent.run_turn(_request(message, **request), sink)
        finally:
            await agent.aclose()

    return asyncio.run(go())


async def _wait_until(predicate: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


def test_agent_satisfies_the_backend_protocol(stub: OpenAIStubServer) -> None:
    assert isinstance(_agent(stub), AgentBackend)
    assert OpenAIAgent.name == "openai"


def test_streamed_text_becomes_token_events(stub: OpenAIStubServer) -> None:
    sink = RecordingSink()
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello."}]
    result = _turn(_agent(stub), "count to 5", sink, history=history)

    assert sink.events == [("token", {"text": t}) for t in ["1", " 2", " 3", " 4", " 5"]]
    assert result.outcome == "completed"
    assert result.final_text == "1 2 3 4 5"
    assert result.context == [{"role": "assistant", "content": "1 2 3 4 5"}]
    assert result.usage["completion_tokens"] == 5
    [sent] = stub.requests[-1:]
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert sent.body["messages"] == [*history, {"role": "user", "content": "count to 5"}]
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert "tools" not in sent.body


def test_the_provider_reads_the_attachments_after_the_message(stub: OpenAIStubServer) -> None:
    attachment = {"kind": "variable", "label": "df", "text": "DataFrame 3x2"}
    _turn(_agent(stub), "count to 2", RecordingSink(), attachments=[attachment])
    content = stub.requests[-1].body["messages"][-1]["content"]
    assert content.startswith("count to 2\n\nThe user attached this context")
    assert content.endswith("[variable: df]\n```\nDataFrame 3x2\n```")


@pytest.mark.parametrize("prompt", ["think first", "ponder first"])
def test_reasoning_deltas_become_reasoning_events(stub: OpenAIStubServer, prompt: str) -> None:
    sink = RecordingSink()
    result = _turn(_agent(stub), prompt, sink)

    assert sink.text("reasoning") == "The user wants me to reason first."
    assert sink.names().index("token") > max(i for i, n in enumerate(sink.names()) if n == "reasoning")
    assert result.final_text == "Thought about it."


def test_tool_call_round_trip(stub: OpenAIStubServer) -> None:
    sink, tools = RecordingSink(), FakeTools()
    result = _turn(_agent(stub, tools), "please use a tool", sink)

    assert tools.calls == [("list_files", {"path": "."})]
    names = sink.names()
    assert names.index("tool") < names.index("tool_complete")
    [tool], [complete] = sink.payloads("tool"), sink.payloads("tool_complete")
    assert tool == {"tid": "call_stub_0", "name": "list_files", "args": {"path": "."}, "preview": "."}
    assert complete["tid"] == tool["tid"] and complete["name"] == "list_files"
    assert complete["preview"] == "data.csv notes.md" and complete["is_error"] is False
    assert complete["duration"] >= 0
    # the first text after a tool round opens a new paragraph, as Hermes Agent streams it
    assert result.final_text == "Let me check.\n\nTool result: data.csv notes.md"
    assert sink.text() == result.final_text

    first, second = stub.chat_requests()
    assert first["tools"] == [LIST_FILES_SCHEMA]
    call_row = {"role": "assistant", "content": "Let me check.", "tool_calls": [{
        "id": "call_stub_0", "type": "function", "function": {"name": "list_files", "arguments": '{"path": "."}'},
    }]}
    tool_row = {"role": "tool", "tool_call_id": "call_stub_0", "content": "data.csv notes.md"}
    assert second["messages"][-2:] == [call_row, tool_row]
    assert result.context == [call_row, tool_row, {"role": "assistant", "content": "Tool result: data.csv notes.md"}]
    # usage is summed over both requests of the turn
    assert result.usage["completion_tokens"] == sum(len(choose_reply(body).deltas) for body in (first, second))


def test_parallel_tool_calls_are_assembled_and_paired_by_tid(stub: OpenAIStubServer) -> None:
    sink, tools = RecordingSink(), FakeTools()
    result = _turn(_agent(stub, tools), "use two tools", sink)

    assert tools.calls == [("list_files", {"path": "."}), ("list_files", {"path": "data"})]
    tids = [p["tid"] for p in sink.payloads("tool")]
    assert len(set(tids)) == 2 and tids == [p["tid"] for p in sink.payloads("tool_complete")]
    tool_rows = [m for m in stub.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_rows] == [
        (tids[0], "data.csv notes.md"), (tids[1], "raw.parquet"),
    ]
    assert result.final_text.endswith("Tool result: data.csv notes.md | raw.parquet")


def test_failing_tool_is_reported_to_the_model_and_the_turn_goes_on(stub: OpenAIStubServer) -> None:
    sink = RecordingSink()
    result = _turn(_agent(stub, FakeTools(fail=True)), "use a tool", sink)

    [complete] = sink.payloads("tool_complete")
    assert complete["is_error"] is True and "disk on fire" in complete["preview"]
    assert result.outcome != "errored"
    assert "disk on fire" in stub.chat_requests()[1]["messages"][-1]["content"]


def test_tool_loop_is_bounded_by_max_iterations(stub: OpenAIStubServer) -> None:
    result = _turn(_agent(stub, FakeTools(), max_iterations=1), "use a tool", RecordingSink())

    assert result.outcome == "errored" and result.error.kind == "tool_limit_reached"
    assert len(stub.chat_requests()) == 1


def test_interrupt_closes_a_slow_stream_and_keeps_the_partial_text(stub: OpenAIStubServer) -> None:
    sink = RecordingSink()

    async def go() -> tuple[TurnResult, float]:
        agent = _agent(stub)
        turn = asyncio.create_task(agent.run_turn(_request("count to 200 slowly"), sink))
        await _wait_until(lambda: len(sink.events) >= 3)
        started = time.monotonic()
        await agent.interrupt("run1")
        result = await turn
        elapsed_s = time.monotonic() - started
        await agent.aclose()
        return result, elapsed_s

    result, elapsed_s = asyncio.run(go())

    assert result.outcome == "interrupted"
    assert elapsed_s < 1.0  # the whole stream would take 10 s
    assert result.final_text == sink.text() and result.final_text.startswith("1 2 3")
    assert result.context == [{"role": "assistant", "content": result.final_text}]
    deadline = time.monotonic() + 5
    while stub.aborted_streams < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stub.aborted_streams == 1  # the server saw the client leave


def test_interrupt_during_a_tool_settles_its_card(stub: OpenAIStubServer) -> None:
    sink = RecordingSink()

    async def go() -> TurnResult:
        agent = _agent(stub, FakeTools(delay_s=30))
        turn = asyncio.create_task(agent.run_turn(_request("use a tool"), sink))
        await _wait_until(lambda: "tool" in sink.names())
        await agent.interrupt("run1")
        result = await turn
        await agent.aclose()
        return result

    result = asyncio.run(go())

    assert result.outcome == "interrupted"
    event, complete = sink.events[-1]
    assert event == "tool_complete" and complete["is_error"] is True
    assert complete["tid"] == sink.payloads("tool")[0]["tid"]
    assert result.context == [{"role": "assistant", "content": "Let me check."}]


def test_cancelling_run_turn_itself_propagates(stub: OpenAIStubServer) -> None:
    async def go() -> None:
        agent = _agent(stub)
        sink = RecordingSink()
        turn = asyncio.create_task(agent.run_turn(_request("count to 200 slowly"), sink))
        await _wait_until(lambda: len(sink.events) >= 1)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await agent.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(500, "provider_error"), (401, "authentication"), (429, "rate_limit"), (404, "model_not_found")],
)
def test_http_error_fails_the_turn_with_a_kind_plain_words_and_the_status_in_detail(
    stub: OpenAIStubServer, status: int, error_type: str
) -> None:
    result = _turn(_agent(stub, max_retries=0), f"error {status}", RecordingSink())

    assert result.outcome == "errored" and result.error is not None and result.error.kind == error_type
    assert result.error.message == ERRORS[error_type].message and "HTTP" not in result.error.message
    assert result.error.detail is not None and f"HTTP {status}" in result.error.detail
    assert "Stub error" in result.error.detail


def test_wrong_api_key_is_an_auth_failure() -> None:
    with OpenAIStubServer(api_key="right") as stub:
        result = _turn(_agent(stub, api_key="wrong"), "hello", RecordingSink())

    assert result.outcome == "errored" and result.error is not None and result.error.kind == "authentication"
    assert "key" in result.error.message


def test_connection_refused_fails_the_turn() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = OpenAIAgent(base_url=f"http://127.0.0.1:{port}/v1", model="m")
    result = _turn(agent, "hello", RecordingSink())

    assert result.outcome == "errored" and result.error is not None and result.error.kind == "provider_unreachable"
    assert result.error.detail is not None and f"127.0.0.1:{port}" in result.error.detail


def test_stream_cut_short_fails_with_the_partial_text(stub: OpenAIStubServer) -> None:
    result = _turn(_agent(stub), "count to 10 and drop after 3", RecordingSink())

    assert result.outcome == "errored" and result.error is not None and result.error.kind == "stream_cut"
    assert result.final_text == "1 2 3"


def test_chunk_that_is_not_json_fails_the_turn(stub: OpenAIStubServer) -> None:
    result = _turn(_agent(stub), "send bad json", RecordingSink())

    assert result.outcome == "errored" and result.error.kind == "bad_response"
    assert result.final_text == "Almost"


def test_server_that_ignores_stream_still_answers(stub: OpenAIStubServer) -> None:
    sink = RecordingSink()
    result = _turn(_agent(stub, extra_body={"stream": False}), "count to 3", sink)

    assert stub.chat_requests()[0]["stream"] is False
    assert sink.text() == "1 2 3" and result.final_text == "1 2 3" and result.outcome != "errored"
    assert result.usage["completion_tokens"] == 3


def test_without_a_model_the_first_listed_model_is_used(stub: OpenAIStubServer) -> None:
    result = _turn(_agent(stub, model=""), "hello", RecordingSink())

    assert result.final_text == "Hello from the stub model."
    assert stub.chat_requests()[0]["model"] == "stub-model"


def test_defaults_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.invalid/v1")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    agent = OpenAIAgent()

    assert (agent.base_url, agent.model, agent.api_key) == ("http://example.invalid/v1", "env-model", "env-key")


def test_named_tool_the_registry_does_not_know_is_an_error_result(stub: OpenAIStubServer) -> None:
    sink, tools = RecordingSink(), FakeTools()
    result = _turn(_agent(stub, tools), 'use the terminal tool with {"command": "ls -la"}', sink)

    [tool], [complete] = sink.payloads("tool"), sink.payloads("tool_complete")
    assert tool["args"] == {"command": "ls -la"} and tool["preview"] == "ls -la"
    assert complete["is_error"] is True and complete["preview"] == "Unknown tool terminal."
    assert result.final_text.endswith("Tool result: Unknown tool terminal.")


def test_tool_ids_stay_unique_across_tool_rounds(stub: OpenAIStubServer) -> None:
    sink, tools = RecordingSink(), FakeTools()
    result = _turn(_agent(stub, tools), "use a tool 3 times", sink)

    # the stub names every round's call `call_stub_0`, as servers that number calls per reply do
    tids = [p["tid"] for p in sink.payloads("tool")]
    assert len(tools.calls) == 3 and len(set(tids)) == 3
    assert tids == [p["tid"] for p in sink.payloads("tool_complete")]
    last_messages = stub.chat_requests()[-1]["messages"]
    sent_call_ids = [c["id"] for m in last_messages if m.get("tool_calls") for c in m["tool_calls"]]
    assert sent_call_ids == tids == [m["tool_call_id"] for m in last_messages if m["role"] == "tool"]
    assert result.outcome != "errored"
    assert result.final_text.endswith("Tool result: " + " | ".join(["data.csv notes.md"] * 3))
