"""What clients read of runs: status, transcript, bundle, the settled message, journal pages.

The read side of the engine: `RunManager` holds one `RunViews` (composed, not inherited) and
answers reads through it, so the engine module holds admission, the worker and settling. Every view goes through `run_transcript`: a settled run is the
turn its session stored (docs/transcript.md, "Stored turns"); any other run is one
fold of the journal, closed by recovery's verdict for a dead run, with the session's
decisions on proposed cells laid over it. The stream's settled message is built once
per stored turn and shared by every socket.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import msgspec

from ..agents.answered import AnsweredBy
from ..recovery.evidence import read_transcript
from ..ids import validate_id
from ..journal import Journals
from ..notebook.outputs import MimeBundle
from ..notebook.recover import bundle_of, stored_transcript
from ..recovery.repair import Recovery
from ..sessions.store import CorruptSession, SessionStore, UnknownSession
from ..transcript import Transcript
from ..transcript.proposals import with_decisions
from ..transcript.turns import StoredTurn, find_turn
from .fanout import Observer, RunObservers
from .proposals import decide as decide_proposal, session_decisions
from .status import RunStatusIndex

if TYPE_CHECKING:
    from .run import Run

#: Settled messages kept built (one per recently settled run; a turn stored again is rebuilt).
SETTLED_KEPT = 32


T = TypeVar("T")


class Offload(Protocol):
    """The engine's way to run blocking store or journal work off the event loop (`RunManager.offload`)."""

    def __call__(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Awaitable[T]: ...


class RunViews:
    """Read-only views of runs, live or settled. `runs` is the engine's own table of live runs (read, never changed)."""

    def __init__(
        self, store: SessionStore, journals: Journals, recovery: Recovery, observers: RunObservers,
        status: RunStatusIndex, runs: dict[str, Run], offload: Offload,
    ) -> None:
        self.store, self.journals, self.recovery = store, journals, recovery
        self.observers, self.status, self._runs, self.offload = observers, status, runs, offload
        self._settled_kept: dict[str, tuple[StoredTurn, dict[str, Any], str]] = {}
        self._settled_lock = threading.Lock()  # sockets asking at once wait for one build

    async def read_events(self, run_id: str, after_seq: int, limit: int) -> dict[str, Any]:
        """A page of a run's journal lines: `{events, next_seq, terminal}` (docs/api.md)."""
        status = self.run_status(run_id)
        result = await self.offload(self.journals.read, status["session_id"], run_id, after_seq=after_seq, limit=limit)
        terminal = result.terminal is not None or (status["status"] != "running" and result.next_seq >= status["last_seq"])
        return {"events": result.rows, "next_seq": result.next_seq, "terminal": terminal}

    # -- observers and status ------------------------------------------------------------------
    def attach(self, run_id: str, after_seq: int = 0, *, heartbeat_s: float | None = None) -> Observer:
        validate_id(run_id, "run id")
        run = self._runs.get(run_id)
        session_id = run.session_id if run else self.status.session_of(run_id)
        return self.observers.attach(session_id, run_id, after_seq, heartbeat_s=heartbeat_s)

    def run_status(self, run_id: str, *, with_marker: bool = False) -> dict[str, Any]:
        """`{run_id, session_id, status, last_seq}`, plus `marker` (the marker row or None) when asked:
        that costs a read of the journal for a run that did not complete."""
        validate_id(run_id, "run id")
        run = self._runs.get(run_id)
        if run is not None:  # running, or settling/stopping: its terminal row is not journaled yet
            out = {"run_id": run_id, "session_id": run.session_id, "status": "running", "last_seq": run.channel.last_seq}
        else:
            out = self.status.describe(run_id)
        if with_marker:
            marker = None if out["status"] in ("running", "completed") else self.run_transcript(run_id).marker
            out["marker"] = msgspec.to_builtins(marker) if marker is not None else None
        return out

    def run_transcript(self, run_id: str) -> Transcript:
        """The run as every view shows it: a settled run as its session stored it; else its journal folded,
        a dead run without a terminal row closed by recovery's verdict."""
        validate_id(run_id, "run id")
        run = self._runs.get(run_id)
        session_id = run.session_id if run is not None else self.status.session_of(run_id)
        stored = self._stored_turn(session_id, run_id)  # stored by the settle, before the terminal row is journaled
        if stored is not None:
            return stored[1]
        transcript = read_transcript(
            self.journals, session_id, run_id, live=run is not None,
            verdict_of=lambda: self.recovery.verdict(session_id, run_id),
        )
        return with_decisions(transcript, *session_decisions(self.store, session_id))

    async def decide_proposal(self, run_id: str, proposal_id: str, decision: str, by: AnsweredBy) -> dict[str, Any]:
        """Keep the user's decision on a proposed cell and who made it (runs/proposals.py); the row as JSON."""
        transcript = await self.offload(self.run_transcript, run_id)
        return await self.offload(decide_proposal, self.store, transcript, proposal_id, decision, by)

    def _stored_turn(self, session_id: str, run_id: str) -> tuple[StoredTurn, Transcript] | None:
        try:
            session = self.store.load(session_id)
        except (UnknownSession, CorruptSession, ValueError, OSError):
            return None
        transcript = stored_transcript(session, run_id)
        turn = find_turn(session.turns, run_id) if transcript is not None else None
        return (turn, transcript) if turn is not None and transcript is not None else None

    def run_bundle(self, run_id: str) -> MimeBundle:
        """The cell bundle of a run, from the one builder (what every notebook writer writes)."""
        return self._bundle(self.run_transcript(run_id))

    def _bundle(self, transcript: Transcript) -> MimeBundle:
        return bundle_of(transcript, lambda _sid, run_id, _live: self.run_transcript(run_id))

    def settled_message(self, run_id: str) -> dict[str, Any]:
        """The last message of a run stream: the server's verdict, so no client has to poll (docs/api.md).

        For a settled turn it is that stored turn (its rows as `transcript`, its user row, its bundle),
        built once and handed to every socket: callers must not change it.
        """
        return self.settled_frame(run_id)[0]

    def settled_frame(self, run_id: str) -> tuple[dict[str, Any], str]:
        """The settled message and its JSON text; for a stored turn both are built once and shared."""
        validate_id(run_id, "run id")
        run = self._runs.get(run_id)  # a run settling: its turn is stored, its terminal row just journaled
        session_id = run.session_id if run is not None else self.status.session_of(run_id)
        stored = self._stored_turn(session_id, run_id)
        if stored is None:
            message = self._settled_message(self.run_transcript(run_id))
            return message, msgspec.json.encode(message).decode()
        turn, transcript = stored
        kept = self._settled_kept
        with self._settled_lock:
            hit = kept.get(run_id)
            if hit is not None and hit[0] is turn:  # a turn stored again (a decision, a recovery) is a new object
                return hit[1], hit[2]
            message = self._settled_message(transcript, turn)
            text = msgspec.json.encode(message).decode()
            kept.pop(run_id, None)
            while len(kept) >= SETTLED_KEPT:
                kept.pop(next(iter(kept)))
            kept[run_id] = (turn, message, text)
            return message, text

    def _settled_message(self, transcript: Transcript, turn: StoredTurn | None = None) -> dict[str, Any]:
        message = {
            "settled": True, "run_id": transcript.run_id, "session_id": transcript.session_id,
            "status": transcript.status, "transcript": transcript.to_json(), "bundle": self._bundle(transcript),
        }
        if turn is not None:
            message["user"] = msgspec.to_builtins(turn.user)
            message["retry"] = msgspec.to_builtins(turn.retry)
        return message

