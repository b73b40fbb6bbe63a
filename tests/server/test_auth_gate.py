"""CI gate: every hermes route refuses unauthenticated requests, for every verb its handler implements.

Routes are discovered from the running server's router, so a new handler cannot
slip in without auth; jupyter_server's own JupyterServerAuthWarning is an error here too.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

VERBS = ("get", "post", "patch", "put", "delete")


def hermes_routes(router: Any) -> list[tuple[str, type]]:
    """All (pattern, handler) rules under `router` whose path is a hermes API path (nested routers too)."""
    found = []
    for rule in getattr(router, "rules", []):
        if hasattr(rule.target, "rules"):
            found.extend(hermes_routes(rule.target))
            continue
        pattern = getattr(rule.matcher, "regex", None)
        if pattern is not None and "hermes/api" in pattern.pattern:
            found.append((pattern.pattern, rule.target))
    return found


def concrete(pattern: str) -> str:
    path = re.sub(r"\(\?P<action>[^)]*\)", "retry", pattern)
    path = re.sub(r"\(\?P<\w+>[^)]*\)", "abc123", path)
    return path.rstrip("$")


async def test_every_hermes_route_requires_authentication(jp_serverapp: Any, jp_fetch: Any) -> None:
    routes = hermes_routes(jp_serverapp.web_app.default_router)
    assert len(routes) >= 9, routes
    checked = 0
    for pattern, handler in routes:
        url = concrete(pattern)
        parts = url[url.index("hermes/api"):].split("/")
        for verb in VERBS:
            if not any(verb in vars(cls) for cls in handler.__mro__ if cls.__module__.startswith("hermes_jupyter")):
                continue
            body = "{}" if verb in ("post", "patch", "put") else None
            with pytest.raises(HTTPClientError) as info:
                await jp_fetch(*parts, method=verb.upper(), body=body, headers={"Authorization": ""},
                               allow_nonstandard_methods=True)
            assert info.value.code in (401, 403), (verb, url, info.value.code)
            checked += 1
    assert checked >= 12
