"""Why a turn failed, in one table: a closed set of error kinds, each with a plain sentence and what to do.

Every backend names its failure with one of these kinds; the words a user reads come
from here only (`TurnError.message`), while the provider's own text, HTTP status and
exit codes go to `TurnError.detail` for a details fold or the log. `classify` maps a
provider's error text (Hermes reports only text) onto a kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from ..events import WAITING
from ..redact import PATTERNS_ONLY, Redactor
from ..wording import WAITING_WORDS
from .base import TurnError, TurnResult

ErrorKind = Literal[
    "authentication",
    "rate_limit",
    "context_too_long",
    "model_not_found",
    "provider_unreachable",
    "provider_error",
    "timeout",
    "stream_cut",
    "length_limit",
    "content_filter",
    "empty_answer",
    "bad_request",
    "bad_response",
    "tool_limit_reached",
    "config",
    "agent_crashed",
    "agent_timeout",
    "agent_unavailable",
    "agent_error",
    "internal",
]

ERROR_KINDS: Final = frozenset(get_args(ErrorKind))


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """What happened and what the user can do about it, each one plain sentence."""

    what: str
    todo: str

    @property
    def message(self) -> str:
        return f"{self.what} {self.todo}"


ERRORS: Final[dict[ErrorKind, ErrorClass]] = {
    "authentication": ErrorClass(
        "The model provider did not accept the API key.",
        "Check the key configured for this backend, then try again."),
    "rate_limit": ErrorClass(
        "The model provider is limiting how often it can be called.",
        "Wait a minute and try again."),
    "context_too_long": ErrorClass(
        "The conversation is too long for the model.",
        "Start a new session, or undo a few turns, and try again."),
    "model_not_found": ErrorClass(
        "The model provider does not offer the configured model.",
        "Choose another model or check its name, then try again."),
    "provider_unreachable": ErrorClass(
        "The model provider could not be reached.",
        "Check that it is running and that its address is right, then try again."),
    "provider_error": ErrorClass(
        "The model provider failed with a server error.",
        "Try again in a moment; if it keeps failing, the provider may be down."),
    "timeout": ErrorClass(
        "The model provider stopped answering.",
        "Try again; if it keeps happening, the provider may be overloaded."),
    "stream_cut": ErrorClass(
        "The answer was cut off before the model finished; the part that arrived is kept.",
        "Use Continue to let the model go on from where it stopped, or try again."),
    "length_limit": ErrorClass(
        "The answer reached the model's length limit before it was finished; the part that arrived is kept.",
        "Use Continue to let the model go on from where it stopped, or ask for a shorter answer."),
    "content_filter": ErrorClass(
        "The model provider's content filter stopped this answer; the part that arrived is kept.",
        "Rephrase the request and try again."),
    "empty_answer": ErrorClass(
        "The model ended its answer without writing anything; this often means the conversation is too long "
        "for the model.",
        "Start a new session, or undo a few turns, and try again."),
    "bad_request": ErrorClass(
        "The model provider refused the request.",
        "The details say why; check the backend's settings (model, options), then try again."),
    "bad_response": ErrorClass(
        "The model provider sent an answer that could not be read.",
        "Try again; if it keeps happening, the provider may not be fully OpenAI-compatible."),
    "tool_limit_reached": ErrorClass(
        "The model kept calling tools and was stopped before it answered.",
        "Ask again with a narrower request, or raise the backend's limit on tool rounds."),
    "config": ErrorClass(
        "The backend is not configured well enough to run a turn.",
        "Check its settings (the details say which one), then try again."),
    "agent_crashed": ErrorClass(
        "The agent stopped unexpectedly during this turn.",
        "Send the message again; the agent is restarted for the next turn."),
    "agent_timeout": ErrorClass(
        "The agent stopped responding, so it was restarted.",
        "Send the message again."),
    "agent_unavailable": ErrorClass(
        "The agent could not be started.",
        "Check that hermes-agent is installed for this server, then try again."),
    "agent_error": ErrorClass(
        "The agent reported an error.",
        "Try again; the details say what it reported."),
    "internal": ErrorClass(
        "Something went wrong in the server while it ran this turn.",
        "Try again; the server log has the details."),
}

#: Provider error text → kind, first match wins (order matters: a 429 body often also says "error").
_RULES: Final[tuple[tuple[ErrorKind, re.Pattern[str]], ...]] = (
    ("context_too_long", re.compile(
        r"context[_ ]length|maximum context|context window|context size|prompt is too long|too many tokens|"
        r"exceed_context|payload too large|\b413\b", re.I)),
    ("authentication", re.compile(
        r"\b40[13]\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|incorrect api key|authentication|"
        r"permission denied|forbidden|no llm provider configured", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate[_ ]limit|too many requests|quota|billing|credits exhausted", re.I)),
    ("model_not_found", re.compile(
        r"model[_ ]not[_ ]found|model .{0,80}(does not exist|not found)|unknown model|invalid model|no such model|"
        r"not a valid model", re.I)),
    ("stream_cut", re.compile(
        r"connection (lost|reset|closed)|incomplete chunked read|peer closed|stream (ended|cut|closed)|"
        r"remoteprotocolerror|truncated", re.I)),
    ("provider_unreachable", re.compile(
        r"connection (error|refused)|connecterror|failed to establish|name or service not known|"
        r"nodename nor servname|unreachable|could not connect", re.I)),
    ("timeout", re.compile(r"timed? ?out|timeout", re.I)),
    ("provider_error", re.compile(
        r"\b5\d\d\b|server error|bad gateway|service unavailable|overloaded|internal error", re.I)),
)


def classify(text: str, *, default: ErrorKind = "agent_error") -> ErrorKind:
    """The kind a provider's or agent's error text describes; `default` when nothing matches."""
    for kind, pattern in _RULES:
        if pattern.search(text or ""):
            return kind
    return default


def kind_for_status(status: int) -> ErrorKind:
    """The kind of an HTTP error status from a model provider."""
    if status in (401, 403):
        return "authentication"
    if status == 429:
        return "rate_limit"
    if status == 413:
        return "context_too_long"
    if status >= 500:
        return "provider_error"
    if status in (400, 422):
        return "bad_request"
    return "bad_response"


def turn_error(
    kind: str, detail: str | None = None, *, redactor: Redactor = PATTERNS_ONLY, wait_s: float | None = None
) -> TurnError:
    """A TurnError with the table's wording; `detail` (technical text) is redacted. Unknown kinds read as agent_error.

    `wait_s`: the provider asked to wait that long before the next request, longer than we wait (the words say so).
    """
    known: ErrorKind = kind if kind in ERROR_KINDS else "agent_error"  # type: ignore[assignment]
    message = wait_too_long_message(wait_s) if wait_s is not None else ERRORS[known].message
    return TurnError(kind, message, redactor.text(detail) if detail else None)


def failed_turn(
    kind: str, detail: str | None = None, *, redactor: Redactor = PATTERNS_ONLY, wait_s: float | None = None,
    **fields: Any,
) -> TurnResult:
    """An errored (or crashed) TurnResult worded by the table; `fields` are the TurnResult's other fields."""
    error = turn_error(kind, detail, redactor=redactor, wait_s=wait_s)
    return TurnResult.failure(error.kind, error.message, error.detail, **fields)


# -- waiting, in words ----------------------------------------------------------------------------

def duration_words(seconds: float) -> str:
    """`45 seconds`, `2 minutes`, `1 hour 5 minutes`: a wait as a person says it (rounded)."""
    total = max(1, round(seconds))
    if total < 90:
        return f"{total} second{'s' if total != 1 else ''}"
    minutes = round(total / 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{hours} hour{'s' if hours != 1 else ''}"] if hours else []
    if minutes:
        parts.append(f"{minutes} minute{'s' if minutes != 1 else ''}")
    return " ".join(parts)


def wait_too_long_message(wait_s: float) -> str:
    """A refusal whose `Retry-After` is longer than the backend waits: say the time, do not pretend we retried."""
    return (f"The model provider asked to wait {duration_words(wait_s)} before the next request, longer than "
            "this backend waits. Try again after that time.")


def retry_text(kind: str, delay_s: float, attempt: int, attempts: int, *, asked: bool) -> str:
    """The `status` note before a retry: what happened, and that we are waiting (and how long) to try again."""
    what = ("The model provider asked us to slow down" if kind == "rate_limit"
            else "The model provider had a server error")
    wait = duration_words(delay_s) if delay_s >= 1 else "a moment"
    how = ", as it asked," if asked else ""
    return f"{what}; waiting {wait}{how} before trying again (attempt {attempt + 1} of {attempts})."


def waiting_text(seconds: float) -> str:
    """The quiet note while the provider sends nothing: how long we have been waiting so far."""
    return WAITING_WORDS["waiting"].format(s=round(seconds))


def waited_text(seconds: float) -> str:
    """What the waiting note ends as once the model starts answering: how long it took."""
    return WAITING_WORDS["waited"].format(s=round(seconds))


def waiting_note(text: str, wait_id: str) -> dict[str, Any]:
    """A `status` payload of one wait: the folds show every row of `wait_id` as one note, the latest words."""
    return {"text": text, "level": "info", "kind": WAITING, "wait_id": wait_id}
