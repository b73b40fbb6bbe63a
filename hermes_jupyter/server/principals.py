"""Who sent a request to a hermes route: a person, a kernel, or just a token (docs/agent-reach.md).

Why: approvals, clarify answers, proposal decisions, revoking "allowed always", renames,
bindings and deletes are the person's. A kernel runs user code and approved agent code, and a
token a kernel could read (the server token in the runtime dir, `JUPYTERHUB_API_TOKEN` in the
server's environment) proves nothing about a person being there. So:

- `person`: a signed-in browser session (the login cookie, with an XSRF check we make ourselves:
  jupyter_server skips it when the page also sends its token, as JupyterLab does), or an API
  client whose token is listed by digest in `c.HermesJupyter.person_token_sha256`;
- `kernel`: a per-kernel token (server/kernel_token.py), scoped to its kernel (server/scope.py);
- `token`: anything else that authenticated, e.g. the server token or a hub token without a cookie.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal, TypeVar

from jupyter_core.utils import ensure_async
from tornado import web

from .errors import user_error
from .kernel_token import KernelUser, PersonTokenUser

PrincipalKind = Literal["person", "kernel", "token"]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
_CACHE = "_hermes_principal"


@dataclass(frozen=True)
class Principal:
    """Who a request is. `user` is the identity provider's name; `how` says how it was told (logs, details)."""

    kind: PrincipalKind
    user: str
    how: str
    kernel_id: str | None = None


def user_name(user: Any) -> str:
    """The name the identity provider gives: display name, else name, else user name."""
    if isinstance(user, dict):  # JupyterHub's user model
        return str(user.get("name") or "")
    return str(getattr(user, "display_name", "") or getattr(user, "name", "") or getattr(user, "username", "") or "")


async def principal_of(handler: Any) -> Principal:
    """Classify the request once (cached on the handler)."""
    cached = getattr(handler, _CACHE, None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    principal = await _classify(handler)
    setattr(handler, _CACHE, principal)
    return principal


async def _classify(handler: Any) -> Principal:
    user = handler.current_user
    if isinstance(user, KernelUser):
        return Principal("kernel", user_name(user), "the token of a notebook kernel", user.kernel_id)
    if isinstance(user, PersonTokenUser):
        return Principal("person", user_name(user), "a person token (person_token_sha256)")
    inner = getattr(handler.identity_provider, "inner", handler.identity_provider)
    cookie_user = await _cookie_user(handler, inner)
    if cookie_user is None:
        return Principal("token", user_name(user), "a token without a signed-in browser session")
    if not _xsrf_ok(handler, inner):
        return Principal("token", user_name(user), "a browser session whose XSRF check failed")
    return Principal("person", user_name(cookie_user) or user_name(user), "a signed-in browser session")


async def _cookie_user(handler: Any, inner: Any) -> Any:
    """The user of the request's login cookie (the identity provider's own), or None."""
    hub_auth = getattr(inner, "hub_auth", None)
    try:
        if hub_auth is not None:  # JupyterHub: the OAuth cookie holds a hub token of the user's browser
            token = hub_auth._get_token_cookie(handler)
            if not token:
                return None
            return await hub_auth.user_for_token(token, session_id=hub_auth.get_session_id(handler), sync=False)
        get_user_cookie = getattr(inner, "get_user_cookie", None)
        return None if get_user_cookie is None else await ensure_async(get_user_cookie(handler))
    except Exception:  # noqa: BLE001 - an unreadable cookie is no person
        return None


def _xsrf_ok(handler: Any, inner: Any) -> bool:
    """The XSRF check the server makes for cookie requests, made even when a token came along."""
    if handler.settings.get("disable_check_xsrf", False):
        return True  # the administrator turned XSRF protection off for the whole server
    try:
        if getattr(inner, "hub_auth", None) is not None:
            from jupyterhub._xsrf_utils import check_xsrf_cookie

            check_xsrf_cookie(handler)
        else:
            if not handler.check_origin():
                return False
            web.RequestHandler.check_xsrf_cookie(handler)
    except web.HTTPError:
        return False
    return True


#: What each person-only action is called in the refusal.
ACTIONS = {
    "approval": "answer this approval",
    "clarify": "answer this question",
    "proposal": "accept or reject a proposed cell",
    "revoke": "stop allowing a command",
    "edit": "rename a session or change its notebook",
    "delete": "delete a session",
    "settings": "change or test the model settings",
    "backend": "switch a session to another kind of agent",
    "complete": "ask for inline completions",
    "review": "undo or keep what the agent changed in a notebook",
    "autonomy": "choose how much the agent may do on its own",
}


async def require_person(handler: Any, action: str) -> Principal:
    """The person who sent the request, or a 403 in plain words saying where to do it instead."""
    principal = await principal_of(handler)
    if principal.kind != "person":
        raise user_error(
            403, f"Only a person can {ACTIONS[action]}: do it in JupyterLab.",
            f"this request came with {principal.how}; it needs a signed-in browser session (cookie and XSRF) "
            "or a token listed in c.HermesJupyter.person_token_sha256 (docs/agent-reach.md)",
        )
    return principal


def person_only(action: str) -> Callable[[F], F]:
    """A handler method only a person may call (403 for kernels and bare tokens)."""
    def decorate(method: F) -> F:
        @functools.wraps(method)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            await require_person(self, action)
            return await method(self, *args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate
