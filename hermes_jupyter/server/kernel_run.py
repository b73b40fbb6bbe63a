"""Run the agent's approved code in a kernel, collect its outputs, and never leave it queued to run later.

Where (docs/agent-reach.md, "A busy kernel"): in a fresh subshell of its own when the kernel has
subshells (ipykernel 7), so a `%%hermes` cell that keeps the main shell busy for its whole run does
not block its own run's code; on the main shell otherwise, and only while the kernel is idle.

Started means the kernel published the request's `execute_input`: a request the kernel aborts
still gets `busy` and `idle` on iopub, so `busy` alone proves nothing.

Never later: a *gate* request goes just ahead of the code, and raises when it runs after the start
deadline; its error (with stop_on_error) makes the kernel abort the queue behind it, the code
included. Nothing else can get between the two in our own subshell; on the main shell another
client's cell could, so there a code not started in time gets the kernel interrupted (which stops
that cell; the code then is aborted, or starts now and is watched like any run).

Stopping: an interrupt (SIGINT) reaches the kernel's main thread only, which is where a `%%hermes`
cell waits, so code in a subshell is stopped by raising KeyboardInterrupt in its thread
(`kernel_subshell.interrupt_subshell`).
"""

from __future__ import annotations

import asyncio
import json
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import KernelManager
from jupyter_core.utils import ensure_async

from ..agents.tools import CodeRun
from .kernel_subshell import close_subshell, interrupt_subshell, open_subshell, send_execute

#: Seconds the kernel has to start the code once sent (a fresh subshell or an idle kernel starts it at once).
START_TIMEOUT_S = 10.0
#: Seconds past the start deadline still watched (the gate may have let the code through just in time).
START_MARGIN_S = 3.0
#: Seconds to wait for the kernel to settle after an interrupt.
INTERRUPT_GRACE_S = 5.0
#: Seconds a stopped turn waits for its interrupted code to end in its subshell.
CANCEL_GRACE_S = 2.0
#: Characters of output kept from one run_code (what the model sees is cut much shorter).
MAX_COLLECTED_CHARS = 200_000

_GATE = "if __import__('time').time() > {deadline!r}:\n    raise TimeoutError('hermes: too late to start; not run')"


@dataclass(slots=True)
class _Watch:
    """What iopub told us so far about the gate and the code."""

    gate_id: str
    code_id: str
    run: CodeRun
    started: bool = False
    idle: bool = False
    gate_done: bool = False


async def run_in_kernel(
    km: KernelManager, kc: AsyncKernelClient, code: str, timeout_s: float, refuse_busy: Callable[[], None],
    *, store_history: bool = False,
) -> CodeRun:
    """Run `code` in a subshell of its own, or (`refuse_busy()` first) on the main shell, and collect its
    outputs; `kc` listens on iopub and control. The subshell is deleted unless its code is still running.
    `store_history`: a notebook cell's run (run_cell), counted as `In[n]` like a person's."""
    subshell_id = await open_subshell(kc, km)
    if subshell_id is None:
        refuse_busy()
    deadline = time.time() + START_TIMEOUT_S
    gate_id = send_execute(kc, {"code": _GATE.format(deadline=deadline), "silent": False, "stop_on_error": True},
                           subshell_id)
    code_id = send_execute(kc, {"code": code, "silent": False, "store_history": store_history,
                                "stop_on_error": False}, subshell_id)
    watch = _Watch(gate_id, code_id, CodeRun(status="not_started"))
    try:
        return await _execute(km, kc, watch, timeout_s, subshell_id)
    finally:
        if subshell_id is not None and (watch.idle or not watch.started):
            await close_subshell(kc, subshell_id)


async def _execute(
    km: KernelManager, kc: AsyncKernelClient, watch: _Watch, timeout_s: float, subshell_id: str | None,
) -> CodeRun:
    try:
        if not await _started(km, kc, watch, subshell_id is None):
            return CodeRun(status="not_started")
        await _pump(kc, watch, lambda: watch.idle, timeout_s)
        if watch.idle:
            return watch.run
        await _stop(km, kc, subshell_id)
        await _pump(kc, watch, lambda: watch.idle, INTERRUPT_GRACE_S)
        watch.run.status = "interrupted" if watch.idle else "not_stopped"
        return watch.run
    except asyncio.CancelledError:
        if watch.started and not watch.idle:  # the user stopped the turn: stop its code too
            await _stop(km, kc, subshell_id)
            if subshell_id is not None:  # its subshell is deleted only once idle
                await _pump(kc, watch, lambda: watch.idle, CANCEL_GRACE_S)
        raise


async def _started(km: KernelManager, kc: AsyncKernelClient, watch: _Watch, main_shell: bool) -> bool:
    """Whether the code started; when it did not, it never will (the gate, or an interrupt, saw to it)."""
    await _pump(kc, watch, lambda: watch.started or watch.idle, START_TIMEOUT_S + START_MARGIN_S)
    if watch.started or watch.idle:
        return watch.started
    if not (main_shell and watch.gate_done):
        return False  # the gate has not run: when it does, it is too late, and the code is aborted
    await ensure_async(km.interrupt_kernel())  # another cell got between the gate and the code: stop it
    await _pump(kc, watch, lambda: watch.started or watch.idle, INTERRUPT_GRACE_S)
    return watch.started


async def _stop(km: KernelManager, kc: AsyncKernelClient, subshell_id: str | None) -> None:
    if subshell_id is None:
        await ensure_async(km.interrupt_kernel())
    else:
        await interrupt_subshell(kc, km, subshell_id)


async def _pump(kc: AsyncKernelClient, watch: _Watch, done: Any, timeout_s: float) -> None:
    """Read iopub into `watch` until `done()` or `timeout_s` pass."""
    deadline = time.monotonic() + timeout_s
    while not done() and (left := deadline - time.monotonic()) > 0:
        try:
            msg = await kc.get_iopub_msg(timeout=min(left, 1.0))
        except queue.Empty:
            continue
        parent = msg["parent_header"].get("msg_id")
        kind, content = msg["msg_type"], msg["content"]
        idle = kind == "status" and content.get("execution_state") == "idle"
        if parent == watch.gate_id:
            watch.gate_done = watch.gate_done or idle
        elif parent != watch.code_id:
            continue
        elif kind == "execute_input":
            watch.started = True
            watch.run.status = "ok"
            count = content.get("execution_count")
            watch.run.execution_count = count if isinstance(count, int) else None
        elif idle:
            watch.idle = True
        elif kind != "status":
            _collect(watch.run, kind, content)


def _collect(run: CodeRun, kind: str, content: dict[str, Any]) -> None:
    """Add one iopub message to the run's outputs; consecutive stream pieces merge, sizes stay bounded."""
    if kind == "clear_output":
        run.outputs.clear()
        return
    if sum(_size(o) for o in run.outputs) > MAX_COLLECTED_CHARS:
        if not run.outputs or run.outputs[-1].get("name") != "hermes-cut":
            run.outputs.append({"output_type": "stream", "name": "hermes-cut",
                                "text": "[more output was produced and dropped]"})
        return
    if kind == "stream":
        last = run.outputs[-1] if run.outputs else None
        if last and last["output_type"] == "stream" and last.get("name") == content.get("name"):
            last["text"] += content.get("text", "")
        else:
            run.outputs.append({"output_type": "stream", "name": content.get("name"), "text": content.get("text", "")})
    elif kind in ("execute_result", "display_data"):
        run.outputs.append({"output_type": kind, "data": content.get("data", {}),
                            "metadata": content.get("metadata", {})})
    elif kind == "error":
        run.status = "error"
        run.outputs.append({"output_type": "error", "ename": content.get("ename"), "evalue": content.get("evalue"),
                            "traceback": content.get("traceback", [])})


def _size(output: dict[str, Any]) -> int:
    return len(json.dumps(output, default=str)) if output["output_type"] != "stream" else len(output["text"])
