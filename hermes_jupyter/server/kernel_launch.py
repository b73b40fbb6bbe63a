"""Each kernel this server launches gets its own token, and none of the credentials that act as the user.

Why: `%hermes` in a kernel needs to reach this server, and the server must know which kernel
is asking (server/scope.py) and that it is not a person (server/principals.py). So the kernel
manager's `start_kernel` is wrapped once, at extension load: the kernel id is chosen first
(when the caller gave none), its token (`KernelTokens.token_for`) is put in the kernel's
environment as `HERMES_JUPYTER_SERVER_TOKEN`, and the variables of `kernel_env_drop`
(`JUPYTERHUB_API_TOKEN`, `JPY_API_TOKEN`, `JUPYTER_TOKEN` by default) are left out of it.
A restart keeps the kernel id, its launch environment and therefore its token.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable
from typing import Any

from .kernel_token import KernelTokens

log = logging.getLogger(__name__)
TOKEN_VAR = "HERMES_JUPYTER_SERVER_TOKEN"
_WRAPPED = "_hermes_kernel_tokens"


def kernel_env(base: dict[str, str] | None, token: str | None, drop: Iterable[str]) -> dict[str, str]:
    """The environment a kernel starts with: the one given (else ours), its token in, the user's credentials out."""
    env = dict(os.environ if base is None else base)
    for name in drop:
        env.pop(name, None)
    env.pop(TOKEN_VAR, None)
    if token is not None:
        env[TOKEN_VAR] = token
    return env


def give_kernels_tokens(kernel_manager: Any, tokens: KernelTokens, drop: Iterable[str]) -> None:
    """Wrap `kernel_manager.start_kernel` (once) so every kernel it starts carries its own token."""
    if getattr(kernel_manager, _WRAPPED, None) is not None:
        setattr(kernel_manager, _WRAPPED, tokens)  # a second server in the same process (tests): the newest wins
        return
    original = kernel_manager.start_kernel
    dropped = tuple(drop)
    setattr(kernel_manager, _WRAPPED, tokens)

    @functools.wraps(original)
    async def start_kernel(*args: Any, kernel_id: str | None = None, **kwargs: Any) -> Any:
        if kernel_id is None or kernel_id not in kernel_manager:  # an existing kernel is reused as it is
            kernel_id = kernel_id or kernel_manager.new_kernel_id()
            token = getattr(kernel_manager, _WRAPPED).token_for(kernel_id)
            if token is None:
                log.warning("hermes_jupyter: kernel %s gets no hermes token (unusual kernel id)", kernel_id)
            kwargs["env"] = kernel_env(kwargs.get("env"), token, dropped)
        return await original(*args, kernel_id=kernel_id, **kwargs)

    kernel_manager.start_kernel = start_kernel
