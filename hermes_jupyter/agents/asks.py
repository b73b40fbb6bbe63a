"""Questions an agent puts to a person (approvals, clarifying questions): journaled, answered once, expiring visibly.

A question is journaled `pending`, waits in a `Questions` broker until someone answers
it through the API (or its timeout passes), and is journaled `resolved`. Both kinds
share this machinery; `approvals.py` and `clarify.py` add only their payloads and what
counts as a valid answer. The broker remembers recently closed questions, so a late
or second answer is told "already answered" (HTTP 409) rather than "unknown" (404).
Every answer travels with who gave it (`answered.AnsweredBy`), and is journaled so.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from .answered import POLICY, TIMEOUT, Answer, AnsweredBy
from .base import EventSink

log = logging.getLogger(__name__)

R = TypeVar("R")

#: How many closed questions a broker remembers for its 409 answers.
_REMEMBER_CLOSED = 4096


class UnknownQuestion(KeyError):
    """No question with that id was asked in that run (or it is long gone): HTTP 404."""


class AlreadyAnswered(UnknownQuestion):
    """The question was answered, expired or ended with its run: HTTP 409."""


class Questions(Generic[R]):
    """Questions waiting for an answer, by (run id, question id). `wait` blocks until `answer` is called."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], tuple[R, asyncio.Future[Answer]]] = {}
        self._closed: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def wait(self, run_id: str, question_id: str, request: R) -> Answer:
        key = (run_id, question_id)
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (request, answer)
        try:
            return await answer
        finally:
            self._waiting.pop(key, None)
            self._closed[key] = None
            while len(self._closed) > _REMEMBER_CLOSED:
                self._closed.popitem(last=False)

    def answer(self, run_id: str, question_id: str, value: str, by: AnsweredBy) -> R:
        """Hand `value`, answered `by` someone, to the waiting question; returns its request."""
        key = (run_id, question_id)
        waiting = self._waiting.get(key)
        if waiting is None or waiting[1].done():
            if key in self._closed or waiting is not None:
                raise AlreadyAnswered(f"question {question_id} of run {run_id} was already answered or has expired")
            raise UnknownQuestion(f"no question {question_id} is waiting in run {run_id}")
        waiting[1].set_result(Answer(value, by))
        return waiting[0]

    def request_of(self, run_id: str, question_id: str) -> R | None:
        waiting = self._waiting.get((run_id, question_id))
        return waiting[0] if waiting is not None else None

    def pending(self, run_id: str) -> list[R]:
        return [request for (rid, _), (request, _) in self._waiting.items() if rid == run_id]


async def wait_answer(
    handler: Callable[[R], Awaitable[str | Answer]] | None, request: R, timeout_s: float, label: str
) -> tuple[str | None, str, AnsweredBy]:
    """The handler's answer, why, and who gave it: (answer, "answered", by), or (None, reason, by) with no
    handler (policy), on expiry or failure (timeout: nobody answered). A handler that answers a plain
    string is a program the server was configured with: policy."""
    if handler is None:
        return None, "nobody can answer here", POLICY
    try:
        answer = await asyncio.wait_for(handler(request), timeout_s)
    except TimeoutError:
        return None, "expired", TIMEOUT
    except Exception:  # a broken handler must not wedge the turn
        log.exception("answering %s failed", label)
        return None, "the answer could not be collected", TIMEOUT
    if isinstance(answer, Answer):
        return answer.value, "answered", answer.by
    return answer, "answered", POLICY


async def journaled(
    sink: EventSink, event: str, pending: dict[str, Any], resolve: Callable[[], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """Journal `pending`, await `resolve` (which returns the resolved payload), journal that; return it."""
    sink.emit(event, pending)
    resolved = await resolve()
    sink.emit(event, resolved)
    return resolved
