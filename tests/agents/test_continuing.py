"""The backends hand the model its own unfinished answer: once, as its last message, then one instruction."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_jupyter.agents.base import Continuation, TurnRequest
from hermes_jupyter.agents.continuing import CONTINUE_INSTRUCTION
from hermes_jupyter.agents.demo import demo_script
from hermes_jupyter.agents.hermes import protocol
from hermes_jupyter.agents.openai import OpenAIAgent
from tests.agents.test_hermes_backend import hermes_agent, stub  # noqa: F401 - the real install's fixtures

HISTORY = [
    {"role": "user", "content": "earlier"}, {"role": "assistant", "content": "earlier answer"},
    {"role": "user", "content": "write a poem"},
    {"role": "assistant", "content": "Roses are"}, {"role": "assistant", "content": "red, violets"},
]


def request(partial: str = "Roses are red, violets") -> TurnRequest:
    return TurnRequest(session_id="s", run_id="r2", message="write a poem", history=list(HISTORY),
                       continues=Continuation(run_id="r1", partial=partial))


def test_openai_sends_the_partial_answer_as_an_assistant_prefix_then_the_instruction() -> None:
    messages = OpenAIAgent(system_prompt="be brief")._opening_messages(request())
    assert messages == [
        {"role": "system", "content": "be brief"}, *HISTORY[:3],
        {"role": "assistant", "content": "Roses are red, violets"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    assert sum(m["content"] == "write a poem" for m in messages) == 1  # the prompt is not sent again


def test_openai_without_a_continuation_sends_the_prompt_as_before() -> None:
    plain = TurnRequest(session_id="s", run_id="r", message="hi", history=HISTORY[:2])
    assert OpenAIAgent()._opening_messages(plain) == [*HISTORY[:2], {"role": "user", "content": "hi"}]


def test_hermes_gets_the_partial_answer_through_its_history() -> None:
    op = protocol.turn_op(request(), model=None, toolsets=[], persist=False, approval_timeout_s=1)
    assert op["message"] == CONTINUE_INSTRUCTION
    assert op["history"] == [*HISTORY[:3], {"role": "assistant", "content": "Roses are red, violets"}]


def test_a_continuation_with_nothing_recovered_sends_no_empty_prefix() -> None:
    op = protocol.turn_op(request(partial=""), model=None, toolsets=[], persist=False, approval_timeout_s=1)
    assert op["history"] == HISTORY[:3]


def test_the_demo_resumes_a_count_after_the_last_number() -> None:
    tokens = [p["text"] for _, p in demo_script("count to 12", 100, partial="1 2 3 4 5 6 7")]
    assert tokens == [" 8", " 9", " 10", " 11", " 12"]
    assert [p["text"] for _, p in demo_script("count to 3", 100, partial="1 2 3")] == []
    assert "".join(p["text"] for _, p in demo_script("count to 3", 100, partial="")) == "1 2 3"


def test_hermes_agent_sends_the_partial_answer_to_its_model_as_its_own(hermes_agent: Any, stub: Any) -> None:
    """The real Hermes Agent, its model a stub: the answer so far is the model's last message, then the instruction."""
    from tests.fakes.recording_sink import RecordingSink

    async def scenario() -> None:
        agent = hermes_agent()
        try:
            history = [{"role": "user", "content": "count to 9"}, {"role": "assistant", "content": "1 2 3"}]
            turn = TurnRequest(session_id="sess-c", run_id="run-c2", message="count to 9", history=history,
                               continues=Continuation(run_id="run-c1", partial="1 2 3"))
            result = await agent.run_turn(turn, RecordingSink())
            assert result.outcome == "completed", result
        finally:
            await agent.aclose()

    asyncio.run(scenario())
    sent = [(m["role"], m.get("content")) for m in stub.chat_requests()[-1]["messages"]]
    assert sent[-3:] == [("user", "count to 9"), ("assistant", "1 2 3"), ("user", CONTINUE_INSTRUCTION)]


def test_the_overlap_is_the_longest_suffix_of_the_kept_text_the_continuation_begins_with() -> None:
    from hermes_jupyter.agents.continuing import OverlapTrim, overlap

    kept = "The dragon was named E"
    assert overlap(kept, "The dragon was named Ember.") == len(kept)  # restarted the whole answer
    assert overlap(kept, "dragon was named Ember.") == len("dragon was named E")  # restarted the sentence
    assert overlap(kept, " named Ember.") == 0  # two words: too few to call it a repeat
    trim = OverlapTrim(kept)
    assert [trim.feed(t) for t in ("The", " dragon", " was named Ember", ".")] == ["", "", "mber", "."]
