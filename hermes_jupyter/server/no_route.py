"""Any other address under `hermes/api/`: a JSON 404, routed last.

Why: without it such a request falls through to jupyter_server's own 404 handler, which
answers its HTML page template (with the server's token in it for a signed-in browser) or a
redirect to the login page. Every hermes address answers JSON instead (docs/api.md, Errors).
"""

from __future__ import annotations

from typing import Any

from tornado import web

from .errors import BY_STATUS, user_error
from .handlers import HermesHandler

#: Matched after every other hermes route (server/app.py appends it last).
PATTERN = r"hermes/api/.*"


class NoRouteHandler(HermesHandler):
    """404 for every method, after the usual authentication (so it tells nobody which addresses exist)."""

    auth_resource = "hermes"

    @web.authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        raise user_error(404, BY_STATUS[404])

    post = put = patch = delete = head = get
