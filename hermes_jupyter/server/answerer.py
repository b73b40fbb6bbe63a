"""Who is answering: the person behind a request, named as the identity provider names them.

Approvals, clarifying questions and proposals are journaled with who answered
(agents/answered.py), so two people on a shared server are told apart. Only a person
reaches the answering routes (server/principals.py guards them); the name is the
principal's: the display name, else the name, else the username.
"""

from __future__ import annotations

from typing import Any

from ..agents.answered import AnsweredBy, person
from .principals import principal_of


async def answering_person(handler: Any) -> AnsweredBy:
    """`{kind: person, user}` for the request's person."""
    return person((await principal_of(handler)).user)
