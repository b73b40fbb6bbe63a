"""Look into a busy kernel through a subshell (ipykernel 7, Jupyter's kernel subshells).

A `%%hermes` cell keeps its kernel busy for the whole run it started, so that run's own
notebook tools would queue behind it on the main shell, and wait for ever: the cell waits for
the run. A kernel with subshells runs a request addressed to a subshell on a thread of its
own, next to the busy main shell, over the same namespace. Introspection (read-only, bounded
by its reprs) goes there, and so does the agent's approved code (kernel_run.py), each in a
fresh subshell of its own. A kernel without subshells is remembered, and the caller falls back
to the main shell and its refusal of a busy kernel.

An interrupt (SIGINT) reaches only the kernel's main thread, so code running in a subshell is
stopped by raising KeyboardInterrupt in that subshell's thread, from a second subshell.

A known cost: ipykernel publishes the subshell's `idle` on iopub, so a kernel probed while a
cell runs reads idle (in JupyterLab's indicator and the server's execution_state) until that
cell ends; the cell itself still shows it is running.
"""

from __future__ import annotations

import asyncio
import queue
import time
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

#: Seconds a kernel may take to create or delete a subshell (control channel: answered even when busy).
SUBSHELL_TIMEOUT_S = 5.0
#: Set on a kernel manager whose kernel did not create a subshell, so it is not asked again.
_NO_SUBSHELLS = "_hermes_no_subshells"
#: ipykernel's name for a subshell's thread.
_THREAD_NAME = "subshell-{}"
# Runs in a fresh namespace in a helper subshell; leaves no names behind.
_RAISE_IN = """
import ctypes, threading
for t in threading.enumerate():
    if t.name == {name!r} and t.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(KeyboardInterrupt))
"""


async def open_subshell(kc: AsyncKernelClient, km: Any) -> str | None:
    """A new subshell's id, or None when the kernel has none (then it is not asked again)."""
    if getattr(km, _NO_SUBSHELLS, False):
        return None
    reply = await _control(kc, "create_subshell_request", {})
    subshell_id = (reply or {}).get("content", {}).get("subshell_id")
    if not isinstance(subshell_id, str) or not subshell_id:
        setattr(km, _NO_SUBSHELLS, True)
        return None
    return subshell_id


async def close_subshell(kc: AsyncKernelClient, subshell_id: str) -> None:
    """Delete it; only once it is idle (ipykernel joins the subshell's thread, holding up every subshell)."""
    await _control(kc, "delete_subshell_request", {"subshell_id": subshell_id})


async def has_subshells(kc: AsyncKernelClient, km: Any) -> bool:
    """Whether the kernel says it has subshells (kernel_info over control: a busy kernel answers too)."""
    if getattr(km, _NO_SUBSHELLS, False):
        return False
    reply = await _control(kc, "kernel_info_request", {})
    return "kernel subshells" in ((reply or {}).get("content", {}).get("supported_features") or [])


async def interrupt_subshell(kc: AsyncKernelClient, km: Any, subshell_id: str) -> None:
    """Raise KeyboardInterrupt in the subshell's thread (it lands at its next Python instruction)."""
    helper = await open_subshell(kc, km)
    if helper is None:
        return
    try:
        expression = f"(lambda g: exec({_RAISE_IN.format(name=_THREAD_NAME.format(subshell_id))!r}, g))({{}})"
        msg_id = send_execute(kc, {"user_expressions": {"hermes": expression}}, helper)
        await _shell_reply(kc, msg_id)
    finally:
        await close_subshell(kc, helper)


def send_execute(kc: AsyncKernelClient, content: dict[str, Any], subshell_id: str | None) -> str:
    """Send an execute_request (to the subshell when given); returns its msg_id."""
    if subshell_id is None:
        return str(kc.execute(**content))
    msg = kc.session.msg("execute_request", {"code": "", "silent": True, "store_history": False,
                                             "allow_stdin": False, "stop_on_error": False, **content})
    msg["header"]["subshell_id"] = subshell_id
    kc.shell_channel.send(msg)
    return str(msg["header"]["msg_id"])


async def _shell_reply(kc: AsyncKernelClient, msg_id: str) -> None:
    deadline = time.monotonic() + SUBSHELL_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        try:
            reply: dict[str, Any] = await kc.get_shell_msg(timeout=left)
        except (queue.Empty, asyncio.TimeoutError):
            return
        if reply["parent_header"].get("msg_id") == msg_id:
            return


async def _control(kc: AsyncKernelClient, msg_type: str, content: dict[str, Any]) -> dict[str, Any] | None:
    msg = kc.session.msg(msg_type, content)
    kc.control_channel.send(msg)
    deadline = time.monotonic() + SUBSHELL_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        try:
            reply: dict[str, Any] = await kc.get_control_msg(timeout=left)
        except (queue.Empty, asyncio.TimeoutError):
            return None
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply if reply["content"].get("status") == "ok" else None
    return None
