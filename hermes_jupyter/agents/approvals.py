"""Approvals: a tool call that needs a person's yes waits here, journaled, until answered or expired.

A backend (or a tool) asks; the request is journaled as an `approval` event
(`status: pending`), the sidebar, the cell widget or the API answers through
`ApprovalBroker.answer`, and the outcome is journaled (`status: resolved`, with
`choice` and `reason`). No answer within the timeout is a visible deny, so a
forgotten approval never wedges a run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .base import EventSink

log = logging.getLogger(__name__)

APPROVAL_OPTIONS = ("allow_once", "deny")


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


ApprovalHandler = Callable[[ApprovalRequest], Awaitable[str]]


class UnknownApproval(KeyError):
    """No approval with that id is waiting (never asked, already answered or expired): HTTP 404."""


def pending_payload(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "approval_id": request.approval_id, "status": "pending", "kind": request.kind,
        "command": request.command, "description": request.description,
        "options": list(request.options), "timeout_s": request.timeout_s,
    }


def resolved_payload(approval_id: str, choice: str, reason: str) -> dict[str, Any]:
    return {"approval_id": approval_id, "status": "resolved", "choice": choice, "reason": reason}


async def decide(handler: ApprovalHandler | None, request: ApprovalRequest) -> tuple[str, str]:
    """The handler's answer as (choice, reason); deny when there is none, it fails, expires or answers off-menu."""
    if handler is None:
        return "deny", "no approval handler"
    try:
        choice = await asyncio.wait_for(handler(request), request.timeout_s)
    except TimeoutError:
        return "deny", "expired"
    except Exception:  # a broken handler must deny, not wedge the turn
        log.exception("approval handler failed for %s", request.approval_id)
        return "deny", "approval handler failed"
    if choice not in request.options:
        return "deny", f"invalid choice {choice!r}"
    return choice, "answered"


@dataclass
class _Waiting:
    request: ApprovalRequest
    answer: asyncio.Future[str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ApprovalBroker:
    """Approvals waiting for a person, by run and approval id. `ask` is an `ApprovalHandler`."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], _Waiting] = {}

    async def ask(self, request: ApprovalRequest) -> str:
        waiting = _Waiting(request)
        key = (request.run_id, request.approval_id)
        self._waiting[key] = waiting
        try:
            return await waiting.answer
        finally:
            self._waiting.pop(key, None)

    def answer(self, run_id: str, approval_id: str, choice: str) -> None:
        """Answer a waiting approval; ValueError for an option it does not offer."""
        waiting = self._waiting.get((run_id, approval_id))
        if waiting is None or waiting.answer.done():
            raise UnknownApproval(f"no approval {approval_id} is waiting in run {run_id}")
        if choice not in waiting.request.options:
            raise ValueError(f"choice must be one of {list(waiting.request.options)}")
        waiting.answer.set_result(choice)

    def pending(self, run_id: str) -> list[ApprovalRequest]:
        return [w.request for (rid, _), w in self._waiting.items() if rid == run_id]

    async def request(self, sink: EventSink, request: ApprovalRequest) -> str:
        """For our own tools: journal the request, wait for the answer, journal the outcome."""
        sink.emit("approval", pending_payload(request))
        choice, reason = await decide(self.ask, request)
        sink.emit("approval", resolved_payload(request.approval_id, choice, reason))
        return choice
