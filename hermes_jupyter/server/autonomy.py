"""Choosing a session's autonomy over HTTP: only a person, and never above the server's cap (docs/autonomy.md)."""

from __future__ import annotations

from typing import Any, Final

from ..autonomy import AUTONOMY_LEVELS, AUTONOMY_WORDS, DEFAULT_AUTONOMY, Autonomy, is_autonomy, within
from .errors import user_error
from .principals import require_person

#: tornado setting: the highest autonomy a person may choose (`c.HermesJupyter.max_autonomy`).
MAX_SETTING: Final = "hermes_max_autonomy"


def max_autonomy(handler: Any) -> Autonomy:
    cap = handler.settings.get(MAX_SETTING, "agent")
    return cap if is_autonomy(cap) else DEFAULT_AUTONOMY


async def chosen_autonomy(handler: Any, value: Any) -> Autonomy:
    """The autonomy a PATCH asks for, checked: 403 unless a person asks, 400 unknown, 403 above the cap."""
    await require_person(handler, "autonomy")
    if not is_autonomy(value):
        raise user_error(400, "Choose Ask, Propose, Agent or Agent, no asking.",
                         f"autonomy must be one of {', '.join(AUTONOMY_LEVELS)}; got {value!r}")
    cap = max_autonomy(handler)
    if not within(value, cap):
        raise user_error(
            403, f"The administrator does not allow “{AUTONOMY_WORDS[value]}” on this server; "
            f"the most it allows is “{AUTONOMY_WORDS[cap]}”.",
            f"autonomy {value!r} is above c.HermesJupyter.max_autonomy = {cap!r}",
        )
    return value
