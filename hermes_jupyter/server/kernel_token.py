"""The kernel token: a per-server secret that opens the hermes routes and nothing else.

Why: kernels run the user's code and the code an agent gets approved, and `%hermes` needs
to reach this server. Handing kernels the full server token gave every cell (and every model
that could read a kernel variable) the whole Jupyter API: contents, terminals, other kernels.
Kernels now get `HERMES_JUPYTER_SERVER_TOKEN` = this token instead (docs/agent-reach.md).

How: the hermes handlers take `KernelTokenAuth` as a base. Its identity provider accepts the
token in an `Authorization: token …` (or `Bearer …`) header as a `KernelUser`; its authorizer
allows a `KernelUser` `hermes` and `hermes:*` resources only and asks the server's own
authorizer about everyone else. Every other Jupyter route uses the server's identity provider,
which has never heard of the token: 403. Requests without it go to the server's provider
unchanged, so JupyterHub and custom identity providers keep working.
"""

from __future__ import annotations

import hmac
import re
import secrets
from typing import Any, cast

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User
from jupyter_server.base.handlers import JupyterHandler

#: A prefix that makes the token recognisable to the redactor (redact.py), whichever server made it.
PREFIX = "hjk_"
#: Where the server keeps this process's token (tornado settings).
SETTING = "hermes_kernel_token"
_HEADER = re.compile(r"(?i)^\s*(?:token|bearer)\s+(\S+)\s*$")


def new_kernel_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


class KernelUser(User):
    """Who a kernel-token request is: allowed the hermes resources, nothing else."""


KERNEL_USER = KernelUser(username="hermes-kernel", name="Hermes (notebook kernel)")


def carries_kernel_token(handler: JupyterHandler) -> bool:
    """Whether the request's Authorization header holds this server's kernel token (never the URL)."""
    token = handler.settings.get(SETTING)
    match = _HEADER.match(handler.request.headers.get("Authorization", ""))
    return bool(token and match and hmac.compare_digest(match.group(1).encode(), str(token).encode()))


def is_hermes_resource(resource: str) -> bool:
    return resource == "hermes" or resource.startswith("hermes:")


class _KernelIdentity:
    """The server's identity provider, plus the kernel token (everything else is delegated)."""

    def __init__(self, inner: IdentityProvider) -> None:
        self._inner = inner

    def get_user(self, handler: JupyterHandler) -> Any:
        return KERNEL_USER if carries_kernel_token(handler) else self._inner.get_user(handler)

    def is_token_authenticated(self, handler: JupyterHandler) -> bool:
        return carries_kernel_token(handler) or self._inner.is_token_authenticated(handler)

    def should_check_origin(self, handler: JupyterHandler) -> bool:
        return not carries_kernel_token(handler) and self._inner.should_check_origin(handler)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _KernelAuthorizer:
    """The server's authorizer, except that a `KernelUser` gets the hermes resources and nothing else."""

    def __init__(self, inner: Authorizer) -> None:
        self._inner = inner

    def is_authorized(self, handler: JupyterHandler, user: Any, action: str, resource: str) -> Any:
        if isinstance(user, KernelUser):
            return is_hermes_resource(resource)
        return self._inner.is_authorized(handler, user, action, resource)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KernelTokenAuth(JupyterHandler):
    """Base for the hermes handlers (REST and WebSocket): they also accept the kernel token."""

    @property
    def identity_provider(self) -> IdentityProvider:
        return cast(IdentityProvider, _KernelIdentity(super().identity_provider))

    @property
    def authorizer(self) -> Authorizer:
        return cast(Authorizer, _KernelAuthorizer(super().authorizer))
