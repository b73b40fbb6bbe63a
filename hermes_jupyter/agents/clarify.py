"""Clarifying questions: the agent asks the user, waits for the answer (journaled), never invents one.

The request is journaled as `clarify {status: pending, question, choices}`; the sidebar, a
cell or the API answers through `ClarifyBroker.answer`; the outcome is journaled
`clarify {status: resolved, answer, answered_by}` (agents/answered.py). No answer before
the timeout, or a run that ends first, resolves it with `answer: null` answered by nobody
(`timeout`), and the agent is told nobody answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..events import CLARIFY
from .answered import TIMEOUT, Answer, AnsweredBy
from .asks import Questions, journaled, wait_answer
from .base import EventSink

#: Longest answer accepted, in characters.
MAX_ANSWER_CHARS = 8000


@dataclass(frozen=True, slots=True)
class ClarifyRequest:
    run_id: str
    session_id: str
    clarify_id: str
    question: str
    choices: tuple[str, ...] = ()
    timeout_s: float = 300.0


#: Answers a question: a broker's `Answer` (who answered), or a plain string (a program: `policy`).
ClarifyHandler = Callable[[ClarifyRequest], Awaitable["str | Answer"]]


def pending_payload(request: ClarifyRequest) -> dict[str, Any]:
    return {"clarify_id": request.clarify_id, "status": "pending", "question": request.question,
            "choices": list(request.choices), "timeout_s": request.timeout_s}


def resolved_payload(clarify_id: str, answer: str | None, reason: str, by: AnsweredBy) -> dict[str, Any]:
    return {"clarify_id": clarify_id, "status": "resolved", "answer": answer, "reason": reason,
            "answered_by": by.to_json()}


def unanswered_payload(clarify_id: str, reason: str) -> dict[str, Any]:
    """A question the run ended (or was stopped) before anyone answered."""
    return resolved_payload(clarify_id, None, reason, TIMEOUT)


async def collect(handler: ClarifyHandler | None, request: ClarifyRequest) -> tuple[str | None, str, AnsweredBy]:
    """The user's answer, why, and who gave it; (None, reason, by) when nobody answered in time."""
    return await wait_answer(handler, request, request.timeout_s, f"clarify {request.clarify_id}")


class ClarifyBroker:
    """Clarifying questions waiting for the user, by run and clarify id. `ask` is a `ClarifyHandler`."""

    def __init__(self) -> None:
        self._questions: Questions[ClarifyRequest] = Questions()

    async def ask(self, request: ClarifyRequest) -> Answer:
        return await self._questions.wait(request.run_id, request.clarify_id, request)

    def answer(self, run_id: str, clarify_id: str, answer: str, by: AnsweredBy) -> None:
        """Answer a waiting question as `by`. UnknownQuestion (404) if never asked, AlreadyAnswered (409) if closed."""
        if not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
            raise ValueError(f"answer must be a non-empty string of at most {MAX_ANSWER_CHARS} characters")
        self._questions.answer(run_id, clarify_id, answer, by)

    def pending(self, run_id: str) -> list[ClarifyRequest]:
        return self._questions.pending(run_id)

    async def request(self, sink: EventSink, request: ClarifyRequest) -> str | None:
        """For our own agents (the demo): journal the question, wait, journal the outcome; the answer or None."""
        return await ask_journaled(sink, self.ask, request)


async def ask_journaled(sink: EventSink, handler: ClarifyHandler | None, request: ClarifyRequest) -> str | None:
    """Journal the question, collect the answer through `handler`, journal the outcome; the answer or None."""
    async def resolve() -> dict[str, Any]:
        return resolved_payload(request.clarify_id, *await collect(handler, request))

    resolved = await journaled(sink, CLARIFY, pending_payload(request), resolve)
    answer = resolved["answer"]
    return answer if isinstance(answer, str) else None
