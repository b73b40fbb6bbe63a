"""Credentials the hermes routes know besides the server's own: per-kernel tokens and person tokens.

Why: kernels run the user's code and the code an agent gets approved, and `%hermes` needs to
reach this server. Each kernel this server launches gets a token of its own
(`HERMES_JUPYTER_SERVER_TOKEN` = `hjk_<kernel id>_<mac>`, server/kernel_launch.py) that names its
kernel, so the server can keep it to that kernel's sessions (server/scope.py) and never let it
answer for the person (server/principals.py). A person's API client may instead present a token
whose sha256 the administrator listed (`c.HermesJupyter.person_token_sha256`): a kernel can read
the hash in the config, never the token. docs/agent-reach.md has the table.

How: the hermes handlers take `KernelTokenAuth` as a base. Its identity provider accepts either
token in an `Authorization: token …` (or `Bearer …`) header, never in the URL; its authorizer
allows those identities the `hermes` and `hermes:*` resources only and asks the server's own
authorizer about everyone else. Every other Jupyter route uses the server's identity provider,
which has never heard of these tokens: 403. Requests without them go to the server's provider
unchanged, so cookies, the server token, JupyterHub and custom identity providers keep working.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any, cast

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User
from jupyter_server.base.handlers import JupyterHandler

#: A prefix that makes the token recognisable to the redactor (redact.py), whichever server made it.
PREFIX = "hjk_"
#: Where the server keeps its `KernelTokens` (tornado settings).
SETTING = "hermes_kernel_tokens"
#: Where the server keeps the sha256 digests of person tokens (tornado settings).
PERSON_SETTING = "hermes_person_tokens"
_HEADER = re.compile(r"(?i)^\s*(?:token|bearer)\s+(\S+)\s*$")
#: Kernel ids a token is made for: jupyter's are uuids; the redactor's `hjk_` pattern covers these characters.
_KERNEL_ID = re.compile(r"^[A-Za-z0-9-]{1,128}$")
_MAC_CHARS = 43  # base64url of a 32-byte HMAC-SHA256, unpadded


class KernelTokens:
    """Makes and checks per-kernel tokens: `hjk_<kernel id>_<HMAC-SHA256(secret, kernel id), base64url>`.

    The secret lives only in this server process, so a token is valid for this server's
    lifetime, and a kernel restart (same kernel id) keeps its token.
    """

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)

    def _mac(self, kernel_id: str) -> str:
        digest = hmac.new(self._secret, kernel_id.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def token_for(self, kernel_id: str) -> str | None:
        """The kernel's token, or None for an id no token is made for (not a plain uuid-like id)."""
        if not _KERNEL_ID.match(kernel_id):
            return None
        return f"{PREFIX}{kernel_id}_{self._mac(kernel_id)}"

    def kernel_of(self, token: str) -> str | None:
        """The kernel id a valid token names, else None."""
        if not token.startswith(PREFIX) or len(token) < len(PREFIX) + _MAC_CHARS + 2:
            return None
        kernel_id, sep, mac = token[len(PREFIX):-_MAC_CHARS - 1], token[-_MAC_CHARS - 1], token[-_MAC_CHARS:]
        if sep != "_" or not _KERNEL_ID.match(kernel_id):
            return None
        return kernel_id if hmac.compare_digest(mac.encode(), self._mac(kernel_id).encode()) else None


@dataclass
class KernelUser(User):
    """Who a kernel-token request is: allowed the hermes resources of its own kernel, nothing else."""

    kernel_id: str = ""


@dataclass
class PersonTokenUser(User):
    """Who a request with a listed person token is: the person, through an API client (hermes routes only)."""


def _header_token(handler: JupyterHandler) -> str | None:
    match = _HEADER.match(handler.request.headers.get("Authorization", ""))
    return match.group(1) if match else None


def kernel_of_request(handler: JupyterHandler) -> str | None:
    """The kernel whose token the Authorization header holds (never the URL), else None."""
    tokens = handler.settings.get(SETTING)
    token = _header_token(handler)
    return tokens.kernel_of(token) if isinstance(tokens, KernelTokens) and token else None


def carries_person_token(handler: JupyterHandler) -> bool:
    """Whether the Authorization header holds a token whose sha256 is listed in `person_token_sha256`."""
    listed = handler.settings.get(PERSON_SETTING) or frozenset()
    token = _header_token(handler)
    if not listed or not token:
        return False
    digest = hashlib.sha256(token.encode()).hexdigest()
    return any(hmac.compare_digest(digest, known) for known in listed)


def person_digests(values: list[str]) -> frozenset[str]:
    """The configured digests, normalised (lower-case hex; anything else is ignored by the caller's check)."""
    return frozenset(v.strip().lower() for v in values if re.fullmatch(r"[0-9a-fA-F]{64}", v.strip()))


def is_hermes_resource(resource: str) -> bool:
    return resource == "hermes" or resource.startswith("hermes:")


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        return "person"


class _KernelIdentity:
    """The server's identity provider, plus kernel and person tokens (everything else is delegated)."""

    def __init__(self, inner: IdentityProvider) -> None:
        self._inner = inner

    def _own(self, handler: JupyterHandler) -> User | None:
        kernel_id = kernel_of_request(handler)
        if kernel_id is not None:
            return KernelUser(username=f"kernel-{kernel_id}", name="Hermes (notebook kernel)", kernel_id=kernel_id)
        if carries_person_token(handler):
            return PersonTokenUser(username=_login_name())
        return None

    def get_user(self, handler: JupyterHandler) -> Any:
        user = self._own(handler)
        if user is None:
            return self._inner.get_user(handler)
        # as jupyter_server's own token login does: XSRF checks (jupyter_server's, and JupyterHub's patched
        # one, which reads this flag) do not apply to a request authenticated by a header token
        handler._token_authenticated = True  # type: ignore[attr-defined]
        return user

    def is_token_authenticated(self, handler: JupyterHandler) -> bool:
        return self._own(handler) is not None or self._inner.is_token_authenticated(handler)

    def should_check_origin(self, handler: JupyterHandler) -> bool:
        return self._own(handler) is None and self._inner.should_check_origin(handler)

    @property
    def inner(self) -> IdentityProvider:
        return self._inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _KernelAuthorizer:
    """The server's authorizer, except that our own identities get the hermes resources and nothing else."""

    def __init__(self, inner: Authorizer) -> None:
        self._inner = inner

    def is_authorized(self, handler: JupyterHandler, user: Any, action: str, resource: str) -> Any:
        if isinstance(user, (KernelUser, PersonTokenUser)):
            return is_hermes_resource(resource)
        return self._inner.is_authorized(handler, user, action, resource)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KernelTokenAuth(JupyterHandler):
    """Base for the hermes handlers (REST and WebSocket): they also accept kernel and person tokens."""

    @property
    def identity_provider(self) -> IdentityProvider:
        return cast(IdentityProvider, _KernelIdentity(super().identity_provider))

    @property
    def authorizer(self) -> Authorizer:
        return cast(Authorizer, _KernelAuthorizer(super().authorizer))
