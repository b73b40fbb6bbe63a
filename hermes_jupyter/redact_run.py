"""One run's redactor: the server's, plus every value the run has seen masked by its name.

A tool result that says `aws_secret_access_key = XYZ…` has `XYZ…` masked where it is assigned,
by name (redact.py). The same value printed bare two lines below, echoed by the model later, or
shown in the next tool result has no name next to it: only knowing the value catches it. So a
run's redactor learns each value it masks by name (in tool results and tool events, in a variable
previewed under a secret name) and masks it exactly for the rest of the run (docs/agent-reach.md).
"""

from __future__ import annotations

import threading
from typing import Any, Final, Iterable, Iterator, Mapping

from .redact import MASK, MIN_KNOWN_SECRET_CHARS, Redactor, assigned_values, is_secret_name

#: Values one run learns at most; later ones are still masked where they are assigned.
MAX_LEARNED: Final = 64
#: Longer values are not learned (a whole file assigned to `token` is no key).
MAX_LEARNED_CHARS: Final = 4096


class RunRedactor:
    """`Redactor`'s interface (`text`, `value`, `named`) over a frozen redactor that grows as the run
    learns values. Thread-safe: a lookup reads one attribute; learning swaps it under a lock."""

    def __init__(self, base: Redactor, *, limit: int = MAX_LEARNED) -> None:
        self._base = base
        self._current = base
        self._learned: set[str] = set()
        self._limit = limit
        self._lock = threading.Lock()

    @property
    def current(self) -> Redactor:
        """The redactor as it stands (base plus learned values)."""
        return self._current

    @property
    def learned(self) -> frozenset[str]:
        return frozenset(self._learned)

    def text(self, text: str) -> str:
        return self._current.text(text)

    def value(self, value: Any) -> Any:
        return self._current.value(value)

    def named(self, name: str, value: Any) -> Any:
        """As `Redactor.named`; a value masked because of its name is learned."""
        if is_secret_name(name) and isinstance(value, str) and value:
            self.learn([value, value.strip("'\"")])
        return self._current.named(name, value)

    def contains_secret(self, text: str) -> bool:
        return self.text(text) != text

    def learn_from(self, value: Any) -> None:
        """Learn the values `value` (a text or a JSON-like payload) assigns to secret names."""
        found = list(_secret_values(value))
        if found:
            self.learn(found)

    def learn(self, values: Iterable[str]) -> None:
        fresh = [v for v in values if _worth_learning(v) and v not in self._current.known]
        if not fresh:
            return
        with self._lock:
            for value in fresh:
                if len(self._learned) >= self._limit:
                    break
                self._learned.add(value)
            self._current = Redactor(self._base.known | self._learned)


def _secret_values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from assigned_values(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and is_secret_name(key):
                yield item
            else:
                yield from _secret_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _secret_values(item)


def _worth_learning(value: str) -> bool:
    """Long enough to be a secret, not already masked, not a plain word and not code: `auth: required`,
    `author = Shakespeare` or `token = get_token()` is masked where it stands, but "required" and
    "get_token()" stay readable elsewhere."""
    if not MIN_KNOWN_SECRET_CHARS <= len(value) <= MAX_LEARNED_CHARS or MASK in value:
        return False
    if any(c in value for c in "()[]{}<>"):
        return False
    return not (value.isalpha() and (value.islower() or value.istitle()))
