"""Kernel restart or shutdown = UI restart: runs bound to that kernel are settled as interrupted.

jupyter_server emits a `kernel_actions` event after a kernel restarts or shuts
down; with policy `interrupt` the RunManager interrupts the runs bound to it
(cause `kernel_restart`), with `detach` they keep running unobserved.
"""

from __future__ import annotations

import logging
from typing import Any

from jupyter_events import EventLogger

from ..runs.manager import RunManager

log = logging.getLogger(__name__)

KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"


class KernelWatcher:
    def __init__(self, manager: RunManager, policy: str) -> None:
        self.manager = manager
        self.policy = policy

    def listen(self, event_logger: EventLogger) -> None:
        event_logger.add_listener(schema_id=KERNEL_ACTIONS, listener=self.on_kernel_action)

    async def on_kernel_action(self, logger: EventLogger, schema_id: str, data: dict[str, Any]) -> None:
        if data.get("action") not in ("restart", "shutdown") or not data.get("kernel_id"):
            return
        if self.policy != "interrupt":
            return
        interrupted = await self.manager.interrupt_bound(str(data["kernel_id"]), "kernel_restart")
        if interrupted:
            log.info("kernel %s %s: interrupted runs %s", data["kernel_id"], data["action"], interrupted)
