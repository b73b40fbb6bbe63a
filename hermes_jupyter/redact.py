"""Secret redaction: the one place that decides what looks like a secret.

Everything that leaves the server's trust boundary (a journal row, a log line, an error
shown to a user, a tool result sent to a model, a notebook output) passes through
`Redactor.text` or `Redactor.value` first. Known secrets (configured keys, the server
token) are replaced exactly; anything token-shaped is replaced by pattern.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Iterable, Mapping

MASK: Final = "[redacted]"

#: Shorter known values are not masked exactly: they would hit ordinary words.
MIN_KNOWN_SECRET_CHARS: Final = 8

#: (a literal every match contains, whether to look for it case-insensitively, the pattern). The literal
#: lets `Redactor.text` skip a pattern that cannot match, which keeps redaction cheap on the hot path
#: (every journaled token passes through it).
_GATED: Final[tuple[tuple[str, bool, re.Pattern[str]], ...]] = (
    # Provider keys with a recognisable prefix (OpenAI, Anthropic, GitHub, Slack, AWS, Google, HF).
    ("-", False, re.compile(r"\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}")),
    ("_", False, re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("xox", False, re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("AKIA", False, re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("AIza", False, re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("hf_", False, re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    # The hermes routes' kernel token (server/kernel_token.py), of this server or any other.
    ("hjk_", False, re.compile(r"\bhjk_[A-Za-z0-9_\-]{32,}")),
    # JSON Web Tokens.
    ("eyJ", False, re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    # Authorization headers.
    ("bearer ", True, re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/\-]{8,}=*")),
    ("token ", True, re.compile(r"(?i)(?<=\btoken )[A-Za-z0-9._~+/\-]{16,}=*")),
    # Credentials inside URLs: scheme://user:password@host
    ("://", False, re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
)
_PATTERNS: Final[tuple[re.Pattern[str], ...]] = tuple(pattern for _, _, pattern in _GATED)

#: `name=value` / `"name": "value"` where the name says it is a secret.
_ASSIGNMENT: Final = re.compile(
    r"""(?ix)
    (?P<name>[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|credential|auth|cookie)[A-Za-z0-9_.\-]*)
    (?P<sep>["']?\s*[:=]\s*["']?)
    (?P<value>[^\s"',;}&]{4,})
    """
)

#: Environment variables whose value is a secret by name.
_SECRET_ENV_NAME: Final = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|COOKIE|AUTH)")


@dataclass(frozen=True)
class Redactor:
    """Masks known secret values exactly and token-shaped text by pattern. Immutable and thread-safe."""

    known: frozenset[str] = field(default_factory=frozenset)

    @cached_property
    def _longest_first(self) -> tuple[str, ...]:
        """Known secrets, longest first (so a secret containing another is masked whole); sorted once."""
        return tuple(sorted(self.known, key=len, reverse=True))

    @classmethod
    def from_values(cls, values: Iterable[str | None]) -> Redactor:
        return cls(frozenset(v for v in values if v and len(v) >= MIN_KNOWN_SECRET_CHARS))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> Redactor:
        """Known secrets: every environment value whose name says it is secret, plus `extra`."""
        env = os.environ if environ is None else environ
        return cls.from_values([*(v for k, v in env.items() if _SECRET_ENV_NAME.search(k)), *extra])

    def with_values(self, values: Iterable[str | None]) -> Redactor:
        return Redactor(self.known | Redactor.from_values(values).known)

    def text(self, text: str) -> str:
        """`text` with every secret replaced by `[redacted]`."""
        if not text:
            return text
        for secret in self._longest_first:
            if secret in text:
                text = text.replace(secret, MASK)
        for needle, fold, pattern in _GATED:
            if needle in (text.lower() if fold else text):
                text = pattern.sub(MASK, text)
        if "=" not in text and ":" not in text:  # `_ASSIGNMENT` needs one (its `sep`), and is the costly scan
            return text
        return _ASSIGNMENT.sub(_mask_assignment, text)

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string redacted (keys kept, secret-named keys' values masked)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self.named(k, v) if isinstance(k, str) else self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value

    def named(self, name: str, value: Any) -> Any:
        """`value` shown under `name` (a key, a variable): masked whole when the name says it is a
        secret (`api_token`, `db_password`) and the value is a non-empty string, else redacted."""
        if _is_secret_name(name) and isinstance(value, str) and value:
            return MASK
        return self.value(value)

    def contains_secret(self, text: str) -> bool:
        return self.text(text) != text


def _mask_assignment(match: re.Match[str]) -> str:
    if match.group("value") == MASK:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{MASK}"


def _is_secret_name(name: str) -> bool:
    return bool(_SECRET_ENV_NAME.search(name)) and not name.lower().endswith(("_tokens", "tokens"))


def looks_secret(text: str) -> bool:
    """Whether `text` carries a secret by its shape alone: a key format, a JWT, an Authorization
    value, or credentials in a URL (`scheme://user:password@host`, `?token=…`)."""
    return any(p.search(text) for p in _PATTERNS) or ("://" in text and _ASSIGNMENT.search(text) is not None)


#: A redactor that knows no values, only patterns: for places without configuration.
PATTERNS_ONLY: Final = Redactor()


class RedactingLogFilter(logging.Filter):
    """Masks secrets in a log record's message and traceback before any handler formats it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self.redactor.text(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        record.exc_info = None if record.exc_text else record.exc_info
        return True


def redact_logs(redactor: Redactor, prefix: str = "hermes_jupyter") -> RedactingLogFilter:
    """Install one redacting filter on the `prefix` logger and every logger below it that exists now.

    A logger's filters see only records logged on that logger (not its children's), hence one per logger;
    our modules create theirs at import, before the server calls this.
    """
    log_filter = RedactingLogFilter(redactor)
    names = [prefix, *(n for n in logging.root.manager.loggerDict if n.startswith(prefix + "."))]
    for name in names:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, RedactingLogFilter)]:
            logger.removeFilter(old)
        logger.addFilter(log_filter)
    return log_filter
