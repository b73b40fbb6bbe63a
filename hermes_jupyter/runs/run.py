"""A run the engine is driving, and what it hands on from a finished turn.

`Run` is the engine's in-memory record of one live run (runs/manager.py owns the
lifecycle); `redacted_result` is the last step before a backend's result reaches the
session, the log or the model.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Literal

from ..agents.base import AgentBackend, NotebookBinding, TurnResult
from ..redact import Redactor, mask_shapes
from ..redact_run import RunRedactor
from .fanout import RunChannel
from .sink import RunSink

log = logging.getLogger(__name__)

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
    #: The session's autonomy when the turn started (docs/autonomy.md); a notebook run's terminal row says it.
    autonomy: str | None = None


def run_redactor(server: Redactor, backend: AgentBackend) -> RunRedactor:
    """A new run's redactor: the server's, plus the secrets its backend knows of (Hermes' own keys),
    plus whatever the run learns (redact_run.py)."""
    known = getattr(backend, "known_secrets", None)
    try:
        extra = list(known()) if callable(known) else []
    except Exception:  # a backend that cannot list its keys still runs; the patterns still apply
        log.exception("could not read the known secrets of backend %s", getattr(backend, "name", "?"))
        extra = []
    return RunRedactor(server.with_values(extra) if extra else server)


def redacted_result(result: TurnResult, redactor: Redactor | RunRedactor) -> TurnResult:
    """The result with secrets masked in everything that reaches the session, the log or the model.

    The error's words are also masked by shape: a provider may echo a key the server never saw."""
    result.final_text = redactor.text(result.final_text)
    result.context = redactor.value(result.context)
    if result.error is not None:
        error = result.error
        result.error = replace(error, message=mask_shapes(redactor.text(error.message)),
                               detail=mask_shapes(redactor.text(error.detail)) if error.detail else None)
    return result
