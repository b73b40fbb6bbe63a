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

from ..redact import PATTERNS_ONLY, Redactor
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
        "The model provider is limiting how often it can be called, and retrying did not help.",
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
        "The model provider failed with a server error, also after retrying.",
        "Try again in a moment; if it keeps failing, the provider may be down."),
    "timeout": ErrorClass(
        "The model provider stopped answering.",
        "Try again; if it keeps happening, the provider may be overloaded."),
    "stream_cut": ErrorClass(
        "The answer was cut off before the model finished; the part that arrived is kept.",
        "Try again, or ask the model to continue."),
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
        r"context[_ ]length|maximum context|context window|prompt is too long|too many tokens|"
        r"payload too large|\b413\b", re.I)),
    ("authentication", re.compile(
        r"\b40[13]\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|incorrect api key|authentication|"
        r"permission denied|forbidden|no llm provider configured", re.I)),
    ("rate_limit", re.compile(r"\b429\b|rate[_ ]limit|too many requests|quota|billing|credits exhausted", re.I)),
    ("model_not_found", re.compile(r"model[_ ]not[_ ]found|model .{0,80}(does not exist|not found)|unknown model", re.I)),
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
    return "bad_response"


def turn_error(kind: str, detail: str | None = None, *, redactor: Redactor = PATTERNS_ONLY) -> TurnError:
    """A TurnError with the table's wording; `detail` (technical text) is redacted. Unknown kinds read as agent_error."""
    known: ErrorKind = kind if kind in ERROR_KINDS else "agent_error"  # type: ignore[assignment]
    return TurnError(kind, ERRORS[known].message, redactor.text(detail) if detail else None)


def failed_turn(kind: str, detail: str | None = None, *, redactor: Redactor = PATTERNS_ONLY, **fields: Any) -> TurnResult:
    """An errored (or crashed) TurnResult worded by the table; `fields` are the TurnResult's other fields."""
    error = turn_error(kind, detail, redactor=redactor)
    return TurnResult.failure(error.kind, error.message, error.detail, **fields)
