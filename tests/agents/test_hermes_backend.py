"""HermesAgent against a real hermes-agent install (its own cached venv), offline.

The agent process is the real runner under the real hermes-agent; its model is the
scripted OpenAI stub on 127.0.0.1. Each test spawns its own agent process (about 1 s) and
its own HERMES_HOME. If the install is impossible the hermes tests are skipped with a
banner on stderr (set HERMES_JUPYTER_REQUIRE_HERMES=1 to make that a failure).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.base import TurnRequest, TurnResult
from hermes_jupyter.agents.hermes import ApprovalRequest, HermesAgent, scrubbed_env
from hermes_jupyter.agents.hermes.process import RUNNER
from hermes_jupyter.agents.hermes.protocol import TurnTranslator, plan_entries
from tests.agents.hermes_fixtures import write_hermes_home
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink

SCRIPTED_RUNNER = Path(__file__).parent / "hermes_fixtures" / "scripted_runner.py"
TODO_PROMPT = 'use the todo tool with {"todos": [{"id": "1", "content": "Write tests", "status": "in_progress"}]}'
Factory = Callable[..., HermesAgent]


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer(slow_chunk_delay_s=0.1) as server:
        yield server


@pytest.fixture
def hermes_agent(hermes_python: Path, stub: OpenAIStubServer, tmp_path: Path) -> Factory:
    """Build a HermesAgent on the real install, with a HERMES_HOME pointing at the stub."""
    home = write_hermes_home(tmp_path / "hermes_home", stub.base_url, STUB_MODEL)

    def make(**traits: Any) -> HermesAgent:
        traits.setdefault("toolsets", ["todo"])
        return HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)}, **traits)

    return make


def _request(message: str, run_id: str, history: list[dict[str, Any]] | None = None,
             backend_session_id: str | None = None) -> TurnRequest:
    return TurnRequest(session_id="sess-1", run_id=run_id, message=message, history=history or [],
                       backend_session_id=backend_session_id)


async def _turn(agent: HermesAgent, message: str, run_id: str, **kwargs: Any) -> tuple[TurnResult, RecordingSink]:
    sink = RecordingSink()
    result = await agent.run_turn(_request(message, run_id, **kwargs), sink)
    return result, sink


async def _until_tokens(sink: RecordingSink, count: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(sink.payloads("token")) < count:
        assert time.monotonic() < deadline, f"fewer than {count} tokens after {timeout_s} s: {sink.events}"
        await asyncio.sleep(0.02)


def test_streamed_turn_becomes_tokens_and_keeps_the_engine_history(hermes_agent: Factory,
                                                                   stub: OpenAIStubServer) -> None:
    async def scenario() -> None:
        agent = hermes_agent()
        try:
            first, sink = await _turn(agent, "count to 5", "run-1")
            assert sink.names() == ["token"] * 5
            assert sink.text() == first.final_text == "1 2 3 4 5"
            assert first.outcome == "completed"
            assert first.usage["output_tokens"] == 5 and first.usage["api_calls"] == 1
            assert [(m["role"], m["content"]) for m in first.context] == [("assistant", "1 2 3 4 5")]
            assert first.backend_session_id

            history = [{"role": "user", "content": "count to 5"}, *first.context]
            second, _ = await _turn(agent, "count to 2", "run-2", history=history,
                                    backend_session_id=first.backend_session_id)
            assert second.final_text == "1 2"
            assert second.backend_session_id == first.backend_session_id
            sent = [(m["role"], m.get("content")) for m in stub.chat_requests()[-1]["messages"]]
            assert sent[-3:] == [("user", "count to 5"), ("assistant", "1 2 3 4 5"), ("user", "count to 2")]
        finally:
            await agent.aclose()

    asyncio.run(scenario())


def test_tool_call_is_paired_by_id_and_todo_becomes_a_plan(hermes_agent: Factory) -> None:
    async def scenario() -> None:
        agent = hermes_agent()
        try:
            result, sink = await _turn(agent, TODO_PROMPT, "run-tool")
        finally:
            await agent.aclose()
        names = sink.names()
        assert names.index("tool") < names.index("tool_complete") < names.index("plan")
        (start,), (done,) = sink.payloads("tool"), sink.payloads("tool_complete")
        assert start["tid"] == done["tid"] == "call_stub_0"
        assert start["name"] == done["name"] == "todo"
        assert start["args"]["todos"][0]["content"] == "Write tests"
        assert done["is_error"] is False and done["duration"] >= 0 and "Write tests" in done["preview"]
        assert sink.payloads("plan") == [{"items": [{"text": "Write tests", "status": "in_progress"}],
                                          "entries": [{"content": "Write tests", "status": "in_progress"}]}]
        assert result.final_text.startswith("Let me check.\n\nTool result:")
        assert [m["role"] for m in result.context] == ["assistant", "tool", "assistant"]
        assert result.context[0]["tool_calls"][0]["id"] == "call_stub_0"

    asyncio.run(scenario())


def test_dangerous_command_asks_for_approval_denied_without_a_handler(hermes_agent: Factory,
                                                                       tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    prompt = f'use the terminal tool with {{"command": "rm -rf {victim}"}}'
    asked: list[ApprovalRequest] = []

    async def allow(request: ApprovalRequest) -> str:
        asked.append(request)
        return "allow_once"

    async def scenario() -> None:
        agent = hermes_agent(toolsets=["terminal"], cwd=str(tmp_path))  # in the sandbox it writes only there
        try:
            denied, sink = await _turn(agent, prompt, "run-deny")
            pending, resolved = sink.payloads("approval")
            assert pending["status"] == "pending" and str(victim) in pending["command"]
            assert pending["choices"] == ["allow_once", "allow_session", "allow_always", "deny"]
            assert resolved == {"approval_id": pending["approval_id"], "status": "resolved",
                                "choice": "deny", "reason": "no approval handler", "answered_by": {"kind": "policy"}}
            assert sink.payloads("tool_complete")[0]["is_error"] is True
            assert victim.exists() and denied.outcome != "errored"

            agent.approval_handler = allow
            _, sink = await _turn(agent, prompt, "run-allow")
            assert [a["status"] for a in sink.payloads("approval")] == ["pending", "resolved"]
            assert sink.payloads("approval")[1]["choice"] == "allow_once"
            assert sink.payloads("tool_complete")[0]["is_error"] is False
        finally:
            await agent.aclose()
        assert not victim.exists()
        assert [(a.run_id, a.command) for a in asked] == [("run-allow", f"rm -rf {victim}")]

    asyncio.run(scenario())


def test_cancel_mid_stream_keeps_partial_text_and_the_session_usable(hermes_agent: Factory) -> None:
    async def scenario() -> None:
        agent = hermes_agent()
        try:
            sink = RecordingSink()
            running = asyncio.create_task(agent.run_turn(_request("count to 300 slowly", "run-slow"), sink))
            await _until_tokens(sink, 3)
            pid = agent.pid
            started = time.monotonic()
            await agent.interrupt("run-slow")
            stopped = await running
            assert time.monotonic() - started < agent.interrupt_timeout
            assert stopped.outcome == "interrupted"
            assert stopped.final_text.startswith("1 2 3") and stopped.final_text == sink.text()
            assert len(sink.payloads("token")) < 300

            again, _ = await _turn(agent, "count to 3", "run-after")
            assert again.final_text == "1 2 3" and again.outcome == "completed"
            assert agent.pid == pid  # cancel needed no respawn
        finally:
            await agent.aclose()

    asyncio.run(scenario())


@pytest.mark.crash
def test_killed_agent_process_fails_the_turn_then_respawns(hermes_agent: Factory) -> None:
    async def scenario() -> None:
        agent = hermes_agent()
        try:
            sink = RecordingSink()
            running = asyncio.create_task(agent.run_turn(_request("count to 300 slowly", "run-doomed"), sink))
            await _until_tokens(sink, 3)
            doomed_pid = agent.pid
            assert doomed_pid is not None
            os.kill(doomed_pid, signal.SIGKILL)
            crashed = await asyncio.wait_for(running, 30)
            assert crashed.outcome == "crashed" and crashed.error.kind == "agent_crashed"
            assert crashed.error is not None and "signal 9" in (crashed.error.detail or "")
            assert crashed.final_text.startswith("1 2 3")
            assert crashed.backend_session_id

            history = [{"role": "user", "content": "count to 300 slowly"}, *crashed.context]
            after, _ = await _turn(agent, "count to 3", "run-respawned", history=history,
                                   backend_session_id=crashed.backend_session_id)
            assert after.final_text == "1 2 3" and after.outcome != "errored"
            assert agent.pid not in (None, doomed_pid)
            assert after.backend_session_id == crashed.backend_session_id
        finally:
            await agent.aclose()

    asyncio.run(scenario())


def test_compression_split_replaces_the_context_and_rotates_the_session_id(hermes_python: Path,
                                                                          stub: OpenAIStubServer,
                                                                          tmp_path: Path) -> None:
    # About 57k tokens of history pass the compression threshold (0.75 of the 64K window);
    # `in_place: false` makes Hermes split the session instead of compacting it in place.
    home = write_hermes_home(tmp_path / "home", stub.base_url, STUB_MODEL, "compression:\n  in_place: false\n")
    words = " ".join(f"word{i}" for i in range(1800))
    history = [{"role": role, "content": f"{role} {i} {words}"}
               for i in range(12) for role in ("user", "assistant")]

    async def scenario() -> tuple[TurnResult, TurnResult, RecordingSink]:
        agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                            toolsets=["todo"])
        try:
            first, _ = await _turn(agent, "count to 2", "run-small")
            big, sink = await _turn(agent, "count to 3", "run-big", history=history,
                                    backend_session_id=first.backend_session_id)
            return first, big, sink
        finally:
            await agent.aclose()

    first, big, sink = asyncio.run(scenario())
    assert big.final_text == "1 2 3" and big.outcome != "errored"
    (compaction,) = sink.payloads("compaction")
    assert (compaction["messages_before"], compaction["messages_after"]) == (len(history) + 1, len(big.context))
    assert compaction["text"].startswith("The conversation was compacted")
    assert big.replace_context and len(big.context) < len(history)
    assert big.context[-1] == {**big.context[-1], "role": "assistant", "content": "1 2 3"}
    assert big.backend_session_id and big.backend_session_id != first.backend_session_id


def _scripted_agent(**traits: Any) -> HermesAgent:
    """A HermesAgent over the misbehaving stand-in runner (no hermes-agent needed)."""
    return HermesAgent(command=[sys.executable, str(SCRIPTED_RUNNER)], **traits)


def test_turn_that_ignores_interrupt_gets_its_process_killed_and_respawned() -> None:
    async def scenario() -> None:
        agent = _scripted_agent(interrupt_timeout=0.3)
        try:
            sink = RecordingSink()
            running = asyncio.create_task(agent.run_turn(_request("wedge", "run-wedged"), sink))
            await _until_tokens(sink, 1)
            wedged_pid = agent.pid
            await agent.interrupt("run-wedged")
            stopped = await asyncio.wait_for(running, 10)
            assert stopped.outcome == "interrupted" and stopped.final_text == "stuck"
            after, _ = await _turn(agent, "hello", "run-next")
            assert after.final_text == "ok" and agent.pid not in (None, wedged_pid)
        finally:
            await agent.aclose()

    asyncio.run(scenario())


def test_silent_turn_fails_after_the_idle_timeout() -> None:
    async def scenario() -> TurnResult:
        agent = _scripted_agent(idle_timeout=0.3)
        try:
            result, _ = await _turn(agent, "wedge", "run-silent")
            return result
        finally:
            await agent.aclose()

    result = asyncio.run(scenario())
    assert result.outcome == "errored" and result.error.kind == "agent_timeout" and result.final_text == "stuck"
    assert result.backend_session_id == "scripted-session"


def test_a_crash_quotes_only_the_stderr_of_its_own_turn() -> None:
    async def scenario() -> TurnResult:
        agent = _scripted_agent()
        try:
            await _turn(agent, "warn Traceback of an earlier turn in another session", "run-old")
            crashed, _ = await _turn(agent, "die", "run-crash")
            return crashed
        finally:
            await agent.aclose()

    crashed = asyncio.run(scenario())
    assert crashed.outcome == "crashed" and crashed.error is not None and crashed.error.detail
    assert "dying during this turn" in crashed.error.detail and "earlier turn" not in crashed.error.detail
    assert "stopped unexpectedly" in crashed.error.message


def test_repeated_crashes_back_off_before_the_respawn() -> None:
    async def scenario() -> None:
        agent = _scripted_agent(respawn_backoff=0.5)
        try:
            first, _ = await _turn(agent, "die", "run-1")
            assert first.outcome == "crashed" and first.error is not None and "code 7" in (first.error.detail or "")
            started = time.monotonic()
            await _turn(agent, "die", "run-2")  # the first respawn is immediate
            assert time.monotonic() - started < 0.5
            started = time.monotonic()
            third, _ = await _turn(agent, "hello", "run-3")  # the second waits respawn_backoff
            assert time.monotonic() - started >= 0.5 and third.final_text == "ok"
        finally:
            await agent.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize(("answer", "interrupt", "choice", "reason", "by"), [
    ("allow_once", False, "allow_once", "answered", "policy"),  # a program answered, not a person
    ("allow_always", False, "deny", "invalid choice 'allow_always'", "policy"),
    (None, False, "deny", "expired", "timeout"),
    (None, True, "deny", "interrupted", "timeout"),  # stopped before anyone answered: not answered
])
def test_approval_is_journaled_and_settled_exactly_once(answer: str | None, interrupt: bool, choice: str,
                                                        reason: str, by: str) -> None:
    async def handler(request: ApprovalRequest) -> str:
        if answer is None:
            await asyncio.sleep(3600)  # nobody clicks
        return str(answer)

    async def scenario() -> tuple[TurnResult, RecordingSink]:
        agent = _scripted_agent(approval_handler=handler, approval_timeout=0.3)
        sink = RecordingSink()
        try:
            running = asyncio.create_task(agent.run_turn(_request("ask", "run-ask"), sink))
            if interrupt:
                while not sink.payloads("approval"):
                    await asyncio.sleep(0.01)
                await agent.interrupt("run-ask")
            return await asyncio.wait_for(running, 10), sink
        finally:
            await agent.aclose()

    result, sink = asyncio.run(scenario())
    pending, resolved = sink.payloads("approval")
    assert pending["status"] == "pending" and pending["approval_id"] == "run-ask-a1"
    assert resolved == {"approval_id": "run-ask-a1", "status": "resolved", "choice": choice, "reason": reason,
                        "answered_by": {"kind": by}}
    assert (result.outcome == "interrupted") is interrupt
    assert result.final_text == ("stopped" if interrupt else choice)


def test_agent_process_starts_without_server_secrets(hermes_agent: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "service-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "provider-key")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")

    async def scenario() -> dict[str, str]:
        agent = hermes_agent()
        try:
            await agent.start()
            assert agent.pid is not None
            raw = Path(f"/proc/{agent.pid}/environ").read_bytes()
        finally:
            await agent.aclose()
        return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)

    child = asyncio.run(scenario())
    assert "JUPYTERHUB_API_TOKEN" not in child and "MY_SERVICE_TOKEN" not in child
    assert "PYTHONPATH" not in child
    assert child["OPENAI_API_KEY"] == "provider-key"  # allow-listed by default
    assert child["HERMES_HOME"].endswith("hermes_home")


def test_scrubbed_env_drops_secrets_unless_allow_listed() -> None:
    environ = {
        "PATH": "/usr/bin", "HOME": "/root", "JUPYTERHUB_API_TOKEN": "a", "JPY_API_TOKEN": "b",
        "JUPYTER_TOKEN": "c", "GITHUB_TOKEN": "d", "AWS_SECRET": "e", "STRIPE_KEY": "f",
        "DB_PASSWORD": "g", "OPENAI_API_KEY": "h", "hermes_jupyter_token": "i",
    }
    env = scrubbed_env(environ, allow=["OPENAI_*", "JUPYTERHUB_API_TOKEN"],
                       extra={"HERMES_HOME": "/tmp/h", "JUPYTER_TOKEN": "again"})
    assert env == {"PATH": "/usr/bin", "HOME": "/root", "OPENAI_API_KEY": "h", "HERMES_HOME": "/tmp/h"}


def test_missing_install_fails_the_turn_as_unavailable(tmp_path: Path) -> None:
    async def scenario(command: list[str]) -> TurnResult:
        agent = HermesAgent(command=command, env={"HERMES_HOME": str(tmp_path)})
        try:
            return await agent.run_turn(_request("hello", "run-x"), RecordingSink())
        finally:
            await agent.aclose()

    no_python = asyncio.run(scenario([str(tmp_path / "no-python"), str(RUNNER)]))
    no_hermes = asyncio.run(scenario([sys.executable, str(RUNNER)]))  # our venv has no hermes-agent
    for result in (no_python, no_hermes):
        assert result.outcome == "errored" and result.error.kind == "agent_unavailable"
    assert no_hermes.error is not None and "cannot import hermes-agent" in (no_hermes.error.detail or "")


def test_translator_closes_tools_left_open_by_a_dead_process() -> None:
    sink = RecordingSink()
    translator = TurnTranslator(sink)
    translator.feed({"ev": "started", "session_id": "hs-1"})
    translator.feed({"ev": "delta", "text": "Working"})
    translator.feed({"ev": "progress", "event": "tool.started", "name": "terminal", "preview": "make"})
    translator.feed({"ev": "tool_start", "tid": "call_1", "name": "terminal", "args": {"command": "make"}})
    result = translator.cut_short(kind="agent_crashed", detail="the Hermes Agent process was killed by signal 9",
                                  interrupted=False)
    assert sink.names() == ["token", "tool", "tool_complete"]
    assert sink.payloads("tool")[0]["preview"] == "make"
    assert sink.payloads("tool_complete")[0]["tid"] == "call_1"
    assert sink.payloads("tool_complete")[0]["is_error"] is True
    assert result.error is not None
    assert (result.outcome, result.error.kind, result.final_text) == ("crashed", "agent_crashed", "Working")
    assert result.backend_session_id == "hs-1"


def test_plan_entries_read_the_todo_result() -> None:
    result = '{"todos": [{"id": "1", "content": "A", "status": "completed"}, {"id": "2", "content": ""}]} hint'
    assert plan_entries(result) == [{"content": "A", "status": "completed"}]
    assert plan_entries("not json") is None
