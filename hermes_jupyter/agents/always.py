"""What "allow always" allows, and taking it back.

An approval answered "always" is remembered by the agent that asked (Hermes keeps
it in its config.yaml `command_allowlist`), so later turns of every session run
that kind of command without asking. The sidebar lists these and can revoke one;
a backend that remembers nothing of the kind simply has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class AllowsAlways(Protocol):
    """A backend that remembers "allow always" answers; both calls return what is allowed now."""

    async def allowed_always(self) -> list[str]: ...

    async def revoke_always(self, pattern: str) -> list[str]: ...


class AlwaysUnavailable(RuntimeError):
    """The agent that keeps the list cannot be asked now (it does not start, or does not answer): HTTP 409."""


class NotAllowedAlways(LookupError):
    """Nothing of that name is allowed always by that backend (HTTP 404)."""


def _rows(name: str, patterns: list[str]) -> list[dict[str, str]]:
    return [{"backend": name, "pattern": p} for p in patterns]


async def allowed_always(backends: Mapping[str, Any]) -> dict[str, Any]:
    """`{always: [{backend, pattern}], unavailable: [backend]}` over every backend that remembers such
    answers; one that cannot be asked now (not installed, not starting) is named, not guessed empty."""
    rows: list[dict[str, str]] = []
    unavailable: list[str] = []
    for name, backend in backends.items():
        if isinstance(backend, AllowsAlways):
            try:
                rows += _rows(name, await backend.allowed_always())
            except AlwaysUnavailable:
                unavailable.append(name)
    return {"always": rows, "unavailable": unavailable}


async def revoke_always(backends: Mapping[str, Any], name: str, pattern: str) -> list[dict[str, str]]:
    """Revoke one pattern of one backend; what that backend still allows always."""
    backend = backends.get(name)
    if not isinstance(backend, AllowsAlways) or pattern not in await backend.allowed_always():
        raise NotAllowedAlways(f"{name!r} does not allow {pattern!r} always")
    return _rows(name, await backend.revoke_always(pattern))
