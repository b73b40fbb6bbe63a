"""How a Hermes turn ended, onto the one endings table (agents/errors.py; docs/transcript.md "How an answer ends").

hermes-agent reports an ending in its own words: an `error` text, a `turn_exit_reason`, and a
`completed: false` for an answer it gave up continuing. What the runner saw of each request to the
model (`call_end`: finish reason, a stubbed stream cut, an HTTP status with its `Retry-After`) says
what those words alone do not: whether a "remained truncated" answer hit the length limit or lost
its stream, and how long the provider asked us to wait.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..errors import ErrorKind, classify, retry_text

#: Hermes' exit reason when every retry of an empty reply came back empty ("(empty)" sentinel answer).
EMPTY_EXIT: Final = "empty_response_exhausted"
#: Longest Retry-After hermes-agent honours on a rate limit (conversation_loop caps it at 10 minutes).
HERMES_MAX_RETRY_AFTER_S: Final = 600.0

_CONTENT_FILTER = re.compile(r"^content_policy_blocked\b|content[_ ]filter|safety refusal", re.I)
_LENGTH = re.compile(r"output length limit|max(imum)? output tokens", re.I)
_TRUNCATED = re.compile(r"remained truncated|truncated", re.I)
#: hermes-agent's words for a reply with nothing in it (llama.cpp's answer to a context overflow is one).
_EMPTY = re.compile(r"empty stream|returned no content|empty response|no content after", re.I)
_HTTP_4XX = re.compile(r"\bHTTP 4\d\d\b|\b(400|404|422) ", re.I)

Cut = Literal["length", "stream"]


@dataclass(slots=True)
class CallLog:
    """What the runner reported about the turn's requests to the model, as far as endings need it."""

    #: How the last answered request ended, when Hermes would continue it: a length stop or a stubbed cut.
    last_cut: Cut | None = None
    #: The last refused request: HTTP status and Retry-After in seconds (None when not said).
    refused_status: int | None = None
    retry_after: float | None = None
    #: Refused requests in a row (reset by an answered one): which attempt Hermes makes next.
    refusals: int = 0

    def note(self, message: dict[str, Any]) -> Cut | None:
        """Record one `call_end`; the cut Hermes is about to continue, if any."""
        if not message.get("ok"):
            status, after = message.get("status"), message.get("retry_after")
            self.refused_status = status if isinstance(status, int) else None
            self.retry_after = float(after) if isinstance(after, (int, float)) and after > 0 else None
            self.refusals += 1
            return None
        self.refused_status = self.retry_after = None
        self.refusals = 0
        if message.get("finish") == "length" and not message.get("tool_calls"):
            self.last_cut = "stream" if message.get("stub") else "length"
        else:
            self.last_cut = None
        return self.last_cut


def failure_kind(error: str, calls: CallLog) -> ErrorKind:
    """The kind of a failed Hermes turn from its error text and what its requests showed."""
    if _CONTENT_FILTER.search(error):
        return "content_filter"
    if _LENGTH.search(error):
        return "length_limit"
    if _TRUNCATED.search(error) and calls.last_cut is not None:
        return "length_limit" if calls.last_cut == "length" else "stream_cut"
    if _EMPTY.search(error):
        return "empty_answer"
    kind = classify(error, default="agent_error")
    if kind == "agent_error" and (_HTTP_4XX.search(error) or calls.refused_status in (400, 404, 422)):
        return "bad_request"
    return kind


def wait_asked(kind: str, calls: CallLog) -> float | None:
    """The provider's Retry-After, when it asked for a longer wait than Hermes gave it before failing:
    Hermes honours it on a rate limit up to HERMES_MAX_RETRY_AFTER_S, and not at all on a server error."""
    after = calls.retry_after
    if after is None or kind not in ("rate_limit", "provider_error"):
        return None
    if kind == "rate_limit" and after <= HERMES_MAX_RETRY_AFTER_S:
        return None
    return after


def slow_down_note(message: dict[str, Any], refusals: int) -> str | None:
    """The `status` words when a provider's 429 asks Hermes to wait (`Retry-After`) and Hermes will: it
    waits that long (up to 600 s) before its next attempt, and says nothing of it until a turn fails."""
    after, attempts = message.get("retry_after"), message.get("max_retries")
    if message.get("ok") or message.get("status") != 429 or not isinstance(after, (int, float)) or after <= 0:
        return None
    if not isinstance(attempts, int) or refusals >= attempts:
        return None  # no attempt left: the turn's error says the rest
    return retry_text("rate_limit", min(float(after), HERMES_MAX_RETRY_AFTER_S), refusals, attempts, asked=True)


def empty_answer(message: dict[str, Any]) -> bool:
    """Hermes ended with its "(empty)" sentinel: the model wrote nothing after every retry."""
    return message.get("exit_reason") == EMPTY_EXIT
