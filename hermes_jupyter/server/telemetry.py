"""Structured run lifecycle events through jupyter_events, for operators. Never the record, never content."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from jupyter_events import EventLogger

log = logging.getLogger(__name__)

RUN_SCHEMA_ID = "https://events.hermes-jupyter.dev/hermes_jupyter/run/v1"
SCHEMA_PATH = Path(__file__).parent / "event_schemas" / "run" / "v1.yaml"
_ACTIONS = {
    "run.started": "started", "run.finished": "finished", "run.failed": "failed",
    "run.cancelled": "cancelled", "run.interrupted": "interrupted", "session.binding_moved": "binding_moved",
}
_FIELDS = ("backend", "kernel_id", "duration_s")


class Telemetry:
    def __init__(self, event_logger: EventLogger | None) -> None:
        self.event_logger = event_logger
        if event_logger is not None and RUN_SCHEMA_ID not in event_logger.schemas.schema_ids:
            event_logger.register_event_schema(SCHEMA_PATH)

    def lifecycle(self, name: str, data: dict[str, Any]) -> None:
        """The RunManager's lifecycle hook: emit one event, never raise into the engine."""
        action = _ACTIONS.get(name)
        if action is None or self.event_logger is None:
            return
        event = {"action": action, "run_id": data.get("run_id", ""), "session_id": data.get("session_id", "")}
        event.update({k: data[k] for k in _FIELDS if data.get(k) is not None})
        try:
            self.event_logger.emit(schema_id=RUN_SCHEMA_ID, data=event)
        except Exception:  # telemetry must never break a run
            log.exception("could not emit %s", name)
