"""The approval broker: answers, bad options, unknown ids, expiry as a visible deny."""

from __future__ import annotations

import asyncio

import pytest

from hermes_jupyter.agents.answered import POLICY, person
from hermes_jupyter.agents.approvals import ApprovalBroker, ApprovalRequest, UnknownApproval, decide
from hermes_jupyter.agents.clarify import ClarifyBroker, ClarifyRequest

from ..fakes.recording_sink import RecordingSink

pytestmark = pytest.mark.asyncio


def _request(timeout_s: float = 5.0) -> ApprovalRequest:
    return ApprovalRequest(run_id="r1", session_id="s1", approval_id="a1", command="rm -rf x",
                           description="delete", timeout_s=timeout_s)


async def test_answer_reaches_the_waiting_tool_and_is_journaled() -> None:
    broker, sink = ApprovalBroker(), RecordingSink()
    task = asyncio.create_task(broker.request(sink, _request()))
    while not broker.pending("r1"):
        await asyncio.sleep(0)
    with pytest.raises(ValueError):
        broker.answer("r1", "a1", "always", person("alice"))
    broker.answer("r1", "a1", "allow_once", person("alice"))
    assert await task == "allow_once"
    statuses = [(p["status"], p.get("choice")) for p in sink.payloads("approval")]
    assert statuses == [("pending", None), ("resolved", "allow_once")]
    with pytest.raises(UnknownApproval):
        broker.answer("r1", "a1", "deny", person("alice"))


async def test_unanswered_approval_expires_as_a_visible_deny() -> None:
    broker, sink = ApprovalBroker(), RecordingSink()
    assert await broker.request(sink, _request(timeout_s=0.05)) == "deny"
    resolved = sink.payloads("approval")[-1]
    assert resolved["choice"] == "deny" and resolved["reason"] == "expired"
    assert broker.pending("r1") == []


async def test_each_answer_is_journaled_with_who_gave_it() -> None:
    broker, sink = ApprovalBroker(), RecordingSink()
    task = asyncio.create_task(broker.request(sink, _request()))
    while not broker.pending("r1"):
        await asyncio.sleep(0)
    broker.answer("r1", "a1", "allow_once", person("alice"))
    await task
    assert sink.payloads("approval")[-1]["answered_by"] == {"kind": "person", "user": "alice"}
    assert (await broker.request(sink, _request(timeout_s=0.01)), sink.payloads("approval")[-1]["answered_by"]) == (
        "deny", {"kind": "timeout"})


async def test_an_answer_no_person_gave_is_policy() -> None:
    async def program(request: ApprovalRequest) -> str:
        return "allow_once"

    assert await decide(program, _request()) == ("allow_once", "answered", POLICY)
    assert await decide(None, _request()) == ("deny", "no approval handler", POLICY)
    clarify_sink = RecordingSink()
    question = ClarifyRequest(run_id="r1", session_id="s1", clarify_id="q1", question="Why?", timeout_s=0.01)
    assert await ClarifyBroker().request(clarify_sink, question) is None
    assert clarify_sink.payloads("clarify")[-1]["answered_by"] == {"kind": "timeout"}
