"""Continue after a length stop and after a cut stream (docs/api.md "How an answer ends"), through the
run engine against LLMock: the turn settles errored with its partial kept, Continue is admitted (not
409), and the continuation's text never repeats what the user already sees, though the model restarts."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_jupyter.agents.openai import OpenAIAgent
from hermes_jupyter.runs.manager import NothingToContinue, RunManager

from ..hermes_fixtures import Core

llmock_scenarios = pytest.importorskip("llmock.scenarios")
Match, Reply = llmock_scenarios.Match, llmock_scenarios.Reply

pytestmark = pytest.mark.asyncio

KEPT = "Once upon a time there was a friendly dragon named E"
CHAT = Match(stream=True)


def _manager(core: Core, llmock: Any) -> tuple[RunManager, OpenAIAgent]:
    agent = OpenAIAgent(base_url=llmock.base_url("openai"), model="gpt-4o-mini", api_key="sk-test",
                        retry_backoff=0.01)
    manager = RunManager(core.store, core.journals, core.recovery, core.live, {"openai": agent},
                         default_backend="openai", cancel_grace_s=0.5)
    return manager, agent


async def _stopped_then_continued(hermes_core: Core, llmock: Any) -> tuple[Any, str]:
    manager, agent = _manager(hermes_core, llmock)
    session = hermes_core.store.create(backend="openai")
    try:
        run = await manager.start_run(session.session_id, "Tell me a story.")
        await run.done.wait()
        assert manager.run_status(run.run_id)["status"] == "errored"
        llmock.add(Reply(text=KEPT + "mber who loved tea.", match=CHAT))  # the model restarts its answer
        cont, continues = await manager.continue_turn(session.session_id)
        await cont.done.wait()
        assert continues == run.run_id and manager.run_status(cont.run_id)["status"] == "completed"
    finally:
        await agent.aclose()
    return hermes_core.store.load(session.session_id), run.run_id


async def test_continue_after_a_length_stop_adds_only_the_rest(hermes_core: Core, llmock: Any) -> None:
    llmock.add(Reply(text=KEPT, finish_reason="length", match=CHAT))
    saved, first = await _stopped_then_continued(hermes_core, llmock)

    answer = [m for m in saved.messages if m["role"] == "assistant" and not m.get("_error")]
    assert [m["content"] for m in answer] == [KEPT, "mber who loved tea."]
    marker = next(m for m in saved.messages if m.get("_error"))
    assert marker["_error_type"] == "length_limit" and "length limit" in marker["content"]
    assert [m["role"] for m in saved.messages].count("user") == 1 and answer[-1]["_continues"] == first


async def test_continue_after_a_cut_stream_adds_only_the_rest(hermes_core: Core, llmock: Any) -> None:
    llmock.add(Reply(text=KEPT + "mber who loved tea.", match=CHAT))
    llmock.truncate(after_chunks=11)  # the role chunk, then the 10 words of KEPT
    saved, _ = await _stopped_then_continued(hermes_core, llmock)

    answer = [m["content"] for m in saved.messages if m["role"] == "assistant" and not m.get("_error")]
    assert "Once upon" not in answer[1]  # rows are shown stripped: compare the words
    assert (answer[0] + " " + answer[1]).split() == (KEPT + "mber who loved tea.").split()
    assert next(m for m in saved.messages if m.get("_error"))["_error_type"] == "stream_cut"


async def test_other_errors_are_retried_not_continued(hermes_core: Core, llmock: Any) -> None:
    manager, agent = _manager(hermes_core, llmock)
    session = hermes_core.store.create(backend="openai")
    llmock.add(Reply(text="I can tell you that", finish_reason="content_filter", match=CHAT))
    try:
        run = await manager.start_run(session.session_id, "Tell me a story.")
        await run.done.wait()
        with pytest.raises(NothingToContinue):
            await manager.continue_turn(session.session_id)
    finally:
        await agent.aclose()
