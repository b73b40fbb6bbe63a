"""How much the agent may do in a session's notebook on its own (docs/autonomy.md).

Four levels, least to most: `ask` (the agent only reads), `propose` (every change is a proposal
the person accepts or rejects; nothing runs in a cell: the default), `agent` (changes are applied;
each run of code asks the person: once, for the rest of the turn, or not), `agent_auto` (applied and
run without asking). The server's `max_autonomy` caps what a person may choose.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard

Autonomy = Literal["ask", "propose", "agent", "agent_auto"]
#: Every level, least to most.
AUTONOMY_LEVELS: Final[tuple[Autonomy, ...]] = ("ask", "propose", "agent", "agent_auto")
DEFAULT_AUTONOMY: Final[Autonomy] = "propose"
#: What each level is called where people read it.
AUTONOMY_WORDS: Final[dict[str, str]] = {
    "ask": "Ask", "propose": "Propose", "agent": "Agent", "agent_auto": "Agent, no asking",
}


def is_autonomy(value: object) -> TypeGuard[Autonomy]:
    return isinstance(value, str) and value in AUTONOMY_LEVELS


def within(level: Autonomy, cap: Autonomy) -> bool:
    """Whether `level` is at most `cap`."""
    return AUTONOMY_LEVELS.index(level) <= AUTONOMY_LEVELS.index(cap)


def capped(level: Autonomy, cap: Autonomy) -> Autonomy:
    """`level`, lowered to `cap` when above it (a session chosen before the administrator lowered the cap)."""
    return level if within(level, cap) else cap
