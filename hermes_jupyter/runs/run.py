"""A run the engine is driving, and what it hands on from a finished turn.

`Run` is the engine's in-memory record of one live run (runs/manager.py owns the
lifecycle); `redacted_result` is the last step before a backend's result reaches the
session, the log or the model.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Literal

from ..agents.base import AgentBackend, NotebookBinding, TurnResult
from ..redact import Redactor
from .fanout import RunChannel
from .sink import RunSink

RunState = Literal["running", "settling", "cancelling", "interrupting", "settled"]


class Draining(RuntimeError):
    """The server is shutting down and takes no new runs."""


@dataclass
class Run:
    run_id: str
    session_id: str
    message: str
    backend: AgentBackend
    generation: int
    started_backend_id: str | None
    notebook: NotebookBinding | None
    channel: RunChannel
    sink: RunSink
    started_at: float = field(default_factory=time.time)
    state: RunState = "running"
    task: asyncio.Task[None] | None = None
    checkpointed_seq: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    #: Why the run could not be settled normally (`disk_full`), if it could not.
    failure: str | None = None
    #: The session's model when the turn started (None: the backend's own).
    model: str | None = None


def redacted_result(result: TurnResult, redactor: Redactor) -> TurnResult:
    """The result with secrets masked in everything that reaches the session, the log or the model."""
    result.final_text = redactor.text(result.final_text)
    result.context = redactor.value(result.context)
    if result.error is not None:
        error = result.error
        result.error = type(error)(error.kind, redactor.text(error.message),
                                   redactor.text(error.detail) if error.detail else None)
    return result
