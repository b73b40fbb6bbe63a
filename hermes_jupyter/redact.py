"""Secret redaction: the one place that decides what looks like a secret.

Everything that leaves the server's trust boundary (a journal row, a log line, an error
shown to a user, a tool result sent to a model, a notebook output) passes through
`Redactor.text` or `Redactor.value` first. Known secrets (configured keys, the server
token) are replaced exactly; anything token-shaped is replaced by pattern.
"""

from __future__ import annotations

import logging
import math
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

#: Words one of which every name `_ASSIGNMENT` masks contains (lower case).
SECRET_WORDS: Final = ("key", "secret", "token", "passw", "credential", "auth", "cookie")


def has_secret_word(text: str) -> bool:
    """Whether `text` has a word a secret's name needs (a cheap gate before `_ASSIGNMENT`'s costly scan)."""
    low = text.lower()
    for word in SECRET_WORDS:
        if word in low:
            return True
    return False


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
        if not has_secret_word(text):  # and one of its names' words
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
        if is_secret_name(name) and isinstance(value, str) and value:
            return MASK
        return self.value(value)

    def contains_secret(self, text: str) -> bool:
        return self.text(text) != text


def assigned_values(text: str) -> list[str]:
    """The values `text` assigns to secret names (`password = hunter2x`, `"api_key": "…"`), unmasked ones only."""
    if "=" not in text and ":" not in text:
        return []
    return [m.group("value") for m in _ASSIGNMENT.finditer(text) if MASK not in m.group("value")]


def _mask_assignment(match: re.Match[str]) -> str:
    if match.group("value") == MASK:
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{MASK}"


def is_secret_name(name: str) -> bool:
    """Whether a key or variable name says its value is a secret (`api_token`, `db_password`; not `max_tokens`)."""
    return bool(_SECRET_ENV_NAME.search(name)) and not name.lower().endswith(("_tokens", "tokens"))


def looks_secret(text: str) -> bool:
    """Whether `text` carries a secret by its shape alone: a key format, a JWT, an Authorization
    value, or credentials in a URL (`scheme://user:password@host`, `?token=…`)."""
    return any(p.search(text) for p in _PATTERNS) or ("://" in text and _ASSIGNMENT.search(text) is not None)


#: A run of key characters in provider error text, and what makes one look random (`mask_shapes`).
_SHAPE_RUN: Final = re.compile(r"[A-Za-z0-9_\-+/=]{20,}")
_HEX_RUN: Final = re.compile(r"[0-9a-fA-F]{32,}")
#: Bits per character above which a long run of letters and digits is taken for a random key.
SHAPE_ENTROPY_BITS: Final = 4.4


def mask_shapes(text: str) -> str:
    """`text` (a provider's error or status words, never model text) with key-like runs masked.

    A proxy may echo an upstream key the server never saw; no pattern or known value catches it.
    In error text a long run that mixes upper case, lower case and digits (20+ characters), a
    long hex run (32+), or a long (28+) run of letters and digits whose characters are spread like
    random ones (Shannon entropy ≥ `SHAPE_ENTROPY_BITS` bits a character) is masked. Model text is
    left alone: it would mask the code and hashes users asked for.
    """
    if len(text) < 20:
        return text
    text = _HEX_RUN.sub(MASK, text)
    return _SHAPE_RUN.sub(_mask_random_run, text)


def _mask_random_run(match: re.Match[str]) -> str:
    run = match.group(0)
    return MASK if looks_random(run) else run


def looks_random(run: str) -> bool:
    """Whether a run of key characters looks like a generated key rather than words, a path or a name."""
    upper = any(c.isupper() for c in run)
    lower = any(c.islower() for c in run)
    digit = any(c.isdigit() for c in run)
    if upper and lower and digit:
        return True
    return len(run) >= 28 and digit and (upper or lower) and _entropy(run) >= SHAPE_ENTROPY_BITS


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for c in text:
        counts[c] = counts.get(c, 0) + 1
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def mask_error_value(redactor: Redactor, value: Any) -> Any:
    """An error or status payload redacted, then masked by shape in every string (`mask_shapes`)."""
    return _shapes_in(redactor.value(value))


def _shapes_in(value: Any) -> Any:
    if isinstance(value, str):
        return mask_shapes(value)
    if isinstance(value, Mapping):
        return {k: _shapes_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shapes_in(v) for v in value]
    return value


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
