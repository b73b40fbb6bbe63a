"""Who answered a question the agent put (an approval, a clarifying question, a proposed cell).

Every resolved answer is journaled with `answered_by`, so a card says "Allowed once by
alice" and one person's answers on a shared server are told apart from another's
(docs/transcript.md). `person` is a user of the server, named by its identity
provider; `timeout` is nobody (the wait expired, or the run ended first); `policy` is
the server's own rule (no one can answer here, or a program answered for it).
"""

from __future__ import annotations

from typing import Any, Final, Literal, NamedTuple

import msgspec

AnsweredByKind = Literal["person", "timeout", "policy"]
ANSWERED_BY_KINDS: Final = frozenset({"person", "timeout", "policy"})


class AnsweredBy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """`{kind, user?}`: `user` is the person's name (only for `person`, when the server knows one)."""

    kind: AnsweredByKind
    user: str | None = None

    def to_json(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]


#: Nobody answered: the wait expired, or the run ended before an answer.
TIMEOUT: Final = AnsweredBy(kind="timeout")
#: The server answered by its own rule (nobody can answer here; a configured handler answered).
POLICY: Final = AnsweredBy(kind="policy")


def person(user: str | None) -> AnsweredBy:
    return AnsweredBy(kind="person", user=user or None)


class Answer(NamedTuple):
    """What a broker hands the question that waits: the answer and who gave it."""

    value: str
    by: AnsweredBy


def answered_by_of(value: Any) -> AnsweredBy | None:
    """An `answered_by` read from a journal payload or a stored card; None when absent or malformed (old rows)."""
    if isinstance(value, AnsweredBy):
        return value
    if not isinstance(value, dict) or value.get("kind") not in ANSWERED_BY_KINDS:
        return None
    user = value.get("user")
    if value["kind"] != "person" or not isinstance(user, str) or not user:
        user = None
    return AnsweredBy(kind=value["kind"], user=user)
