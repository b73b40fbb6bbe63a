"""The contract between the run engine and an agent backend.

A backend runs one turn and reports what happens through an `EventSink`; it
never sees the journal, the session store or a socket. The engine journals each
event before anyone sees it, so a backend only has to emit in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..attachments import model_message
from ..autonomy import DEFAULT_AUTONOMY, Autonomy

#: How a turn ended, as the backend saw it. `crashed`: the agent's worker died mid-turn
#: (settled as interrupted, cause `lost_worker`); `interrupted`: it stopped because it was asked to.
Outcome = Literal["completed", "errored", "interrupted", "crashed"]


@dataclass(frozen=True, slots=True)
class NotebookBinding:
    """Where a run was started from, when it came from a notebook cell."""

    notebook_path: str | None = None
    cell_id: str | None = None
    kernel_id: str | None = None


@dataclass(frozen=True, slots=True)
class Continuation:
    """The turn a run continues: the interrupted run, and its recovered partial answer.

    `partial` is the assistant text the user already sees for that turn (every earlier
    part, continuations included); the backend hands it to the model as the model's own
    unfinished answer, never as new user input. `history` in the request already ends
    with that answer's rows: backends that need it apart (a prefix) take it from here.
    """

    run_id: str
    partial: str


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything a backend needs for one turn.

    `history` is the model-facing context (`context_messages`, OpenAI chat shape,
    already stripped of display-only rows and markers). `backend_session_id` is
    the backend's own session handle bound to this session, if it has one.
    With `continues`, the turn continues an interrupted answer: `message` is that
    turn's user prompt (already in `history`, not to be sent again as new input).
    """

    session_id: str
    run_id: str
    message: str
    history: list[dict[str, Any]]
    attachments: list[dict[str, Any]] = field(default_factory=list)
    backend_session_id: str | None = None
    model: str | None = None
    notebook: NotebookBinding | None = None
    continues: Continuation | None = None
    #: The session's autonomy when the turn started (docs/autonomy.md): which notebook tools are offered
    #: and whether they change the notebook, propose, or ask before running code.
    autonomy: Autonomy = DEFAULT_AUTONOMY

    @property
    def model_message(self) -> str:
        """The user's message as the model reads it: with the attachments, capped (docs/attachments.md)."""
        return model_message(self.message, self.attachments)


@dataclass(frozen=True, slots=True)
class TurnError:
    """Why a turn failed. `kind` is a short class (`authentication`, `rate_limit`, `agent_crashed`, …);
    `message` is what the user reads; `detail` is the technical text for a details fold or the log."""

    kind: str
    message: str
    detail: str | None = None


@dataclass(slots=True)
class TurnResult:
    """How a turn ended, as the backend saw it.

    `context` holds the model-facing rows this turn produced after the user row
    (assistant text, tool calls and results). When `replace_context` is True the
    backend compacted the conversation and `context` is the whole new history.
    `backend_session_id` is the backend's session id after the turn: it differs
    from the request's when the backend rotated it (context compression split).
    """

    final_text: str = ""
    context: list[dict[str, Any]] = field(default_factory=list)
    replace_context: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    outcome: Outcome = "completed"
    error: TurnError | None = None
    backend_session_id: str | None = None

    @classmethod
    def failure(cls, kind: str, message: str, detail: str | None = None, **fields: Any) -> TurnResult:
        """An errored turn (or `crashed`, when `kind` is `agent_crashed`). Backends word it with
        `errors.failed_turn`, which takes `message` from the one table of error kinds."""
        outcome: Outcome = "crashed" if kind == "agent_crashed" else "errored"
        return cls(outcome=outcome, error=TurnError(kind, message, detail), **fields)


@runtime_checkable
class EventSink(Protocol):
    """Where a backend reports its events; `emit` is thread-safe and returns once the event is journaled.

    Event names and payloads follow docs/journal.md: `token {text}`, `reasoning {text}`,
    `interim_assistant {text, already_streamed}`, `tool {tid, name, args, preview?}`,
    `tool_complete {tid, name, preview, duration, is_error}`, `approval {...}`,
    `plan {entries}`. Terminal events are the engine's to emit, never the backend's.
    """

    def emit(self, event: str, payload: dict[str, Any]) -> None: ...


@runtime_checkable
class AgentBackend(Protocol):
    """One agent implementation. `run_turn` must not block the event loop.

    `interrupt` asks the running turn of `run_id` to stop; `run_turn` should then
    return soon with `outcome="interrupted"`. The engine abandons a turn that ignores
    it after a bounded wait, so a backend cannot wedge a session.
    """

    name: str

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult: ...

    async def interrupt(self, run_id: str) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Steers(Protocol):
    """A backend that can hand text to a running turn (Hermes' steer); False when that turn cannot take it."""

    async def steer(self, run_id: str, text: str) -> bool: ...
