"""Approvals: a tool call that needs a person's yes waits here, journaled, until answered or expired.

A backend (or a tool) asks; the request is journaled as an `approval` event
(`status: pending`), the sidebar, the cell widget or the API answers through
`ApprovalBroker.answer`, and the outcome is journaled (`status: resolved`, with
`choice`, `reason` and `answered_by`: who answered, agents/answered.py). No answer
within the timeout is a visible deny answered by nobody (`timeout`), so a forgotten
approval never wedges a run.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..events import APPROVAL
from .answered import POLICY, TIMEOUT, Answer, AnsweredBy
from .asks import Questions, UnknownQuestion, journaled, wait_answer
from .base import EventSink

log = logging.getLogger(__name__)

APPROVAL_OPTIONS = ("allow_once", "deny")
#: A run of code in `agent` autonomy: `allow_turn` lets every later run of this turn go without asking.
TURN_OPTIONS = ("allow_once", "allow_turn", "deny")
#: Every choice an approval may offer (docs/journal.md); a backend offers the subset it honours.
APPROVAL_CHOICES = ("allow_once", "allow_turn", "allow_session", "allow_always", "deny")
#: The choices that let the asked-for action go ahead.
ALLOWING = frozenset({"allow_once", "allow_turn", "allow_session", "allow_always"})


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call waiting for a person (e.g. Hermes wants to run a dangerous command)."""

    run_id: str
    session_id: str
    approval_id: str
    command: str
    description: str
    options: tuple[str, ...] = APPROVAL_OPTIONS
    timeout_s: float = 300.0
    kind: str = "command"


#: Answers an approval: a broker's `Answer` (who answered), or a plain choice (a program: `policy`).
ApprovalHandler = Callable[[ApprovalRequest], Awaitable["str | Answer"]]

#: No approval with that id is waiting (never asked, or long gone): HTTP 404.
UnknownApproval = UnknownQuestion


def pending_payload(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "approval_id": request.approval_id, "status": "pending", "kind": request.kind,
        "command": request.command, "description": request.description,
        "choices": list(request.options), "options": list(request.options), "timeout_s": request.timeout_s,
    }


def resolved_payload(approval_id: str, choice: str, reason: str, by: AnsweredBy) -> dict[str, Any]:
    return {"approval_id": approval_id, "status": "resolved", "choice": choice, "reason": reason,
            "answered_by": by.to_json()}


def unanswered_payload(approval_id: str, reason: str) -> dict[str, Any]:
    """An approval the run ended (or was stopped) before anyone answered: deny for the agent, by nobody."""
    return resolved_payload(approval_id, "deny", reason, TIMEOUT)


async def decide(handler: ApprovalHandler | None, request: ApprovalRequest) -> tuple[str, str, AnsweredBy]:
    """The answer as (choice, reason, who); deny when there is no handler (policy), it fails or expires
    (timeout), or it answers off-menu."""
    label = f"approval {request.approval_id}"
    choice, reason, by = await wait_answer(handler, request, request.timeout_s, label)
    if choice is None:
        return "deny", "no approval handler" if handler is None else reason, by
    if choice not in request.options:
        return "deny", f"invalid choice {choice!r}", POLICY
    return choice, reason, by


class ApprovalBroker:
    """Approvals waiting for a person, by run and approval id. `ask` is an `ApprovalHandler`."""

    def __init__(self) -> None:
        self._questions: Questions[ApprovalRequest] = Questions()

    async def ask(self, request: ApprovalRequest) -> Answer:
        return await self._questions.wait(request.run_id, request.approval_id, request)

    def answer(self, run_id: str, approval_id: str, choice: str, by: AnsweredBy) -> None:
        """Answer a waiting approval as `by`; ValueError for an option it does not offer."""
        request = self._questions.request_of(run_id, approval_id)
        if request is not None and choice not in request.options:
            raise ValueError(f"choice must be one of {list(request.options)}")
        self._questions.answer(run_id, approval_id, choice, by)

    def pending(self, run_id: str) -> list[ApprovalRequest]:
        return self._questions.pending(run_id)

    async def request(self, sink: EventSink, request: ApprovalRequest) -> str:
        """For our own tools: journal the request, wait for the answer, journal the outcome; the choice."""
        return str((await self.resolve(sink, request))["choice"])

    async def resolve(self, sink: EventSink, request: ApprovalRequest) -> dict[str, Any]:
        """As `request`, answering the whole resolved payload (`choice`, `reason`, `answered_by`)."""
        async def resolve() -> dict[str, Any]:
            return resolved_payload(request.approval_id, *await decide(self.ask, request))

        return await journaled(sink, APPROVAL, pending_payload(request), resolve)
