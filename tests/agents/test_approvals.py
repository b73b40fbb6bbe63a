"""The approval broker: answers, bad options, unknown ids, expiry as a visible deny."""

from __future__ import annotations

import asyncio

import pytest

from hermes_jupyter.agents.approvals import ApprovalBroker, ApprovalRequest, UnknownApproval

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
        broker.answer("r1", "a1", "always")
    broker.answer("r1", "a1", "allow_once")
    assert await task == "allow_once"
    statuses = [(p["status"], p.get("choice")) for p in sink.payloads("approval")]
    assert statuses == [("pending", None), ("resolved", "allow_once")]
    with pytest.raises(UnknownApproval):
        broker.answer("r1", "a1", "deny")


async def test_unanswered_approval_expires_as_a_visible_deny() -> None:
    broker, sink = ApprovalBroker(), RecordingSink()
    assert await broker.request(sink, _request(timeout_s=0.05)) == "deny"
    resolved = sink.payloads("approval")[-1]
    assert resolved["choice"] == "deny" and resolved["reason"] == "expired"
    assert broker.pending("r1") == []
