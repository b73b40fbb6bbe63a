"""Fixtures shared by the suite: a state dir with a store, journals, liveness and recovery."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from hermes_jupyter.events import JournalRow
from hermes_jupyter.journal import Journals
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.sessions.store import Session, SessionStore


@dataclass
class Core:
    """The durable core, built as the server builds it, over a temp state dir."""

    state_dir: Path
    hermes_home: Path
    store: SessionStore
    journals: Journals
    live: LiveRuns
    recovery: Recovery

    def append(self, session_id: str, run_id: str, event: str, payload: dict[str, Any]) -> JournalRow:
        """Append as a short-lived writer would: the file is released after the row is written."""
        row = self.journals.append(session_id, run_id, event, payload)
        self.journals.close_writer(session_id, run_id)
        return row.row

    def core_path(self, session_id: str) -> Path:
        return self.hermes_home / "sessions" / f"session_{session_id}.json"

    def write_core_transcript(self, session_id: str, messages: list[dict[str, Any]], **extra: Any) -> Path:
        path = self.core_path(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"messages": messages, **extra}), encoding="utf-8")
        return path


def build_core(tmp_path: Path, *, process_started_at: float | None = None) -> Core:
    home = tmp_path / "hermes_home"
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    state = tmp_path / "state"
    store = SessionStore(state / "sessions")
    journals = Journals(state / "runs")
    live = LiveRuns()
    recovery = Recovery(
        store, journals, live, settler=settle, core_dir=home / "sessions",
        process_started_at=process_started_at if process_started_at is not None else time.time(),
    )
    return Core(state, home, store, journals, live, recovery)


@pytest.fixture
def hermes_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Core]:
    core = build_core(tmp_path)
    monkeypatch.setenv("HERMES_HOME", str(core.hermes_home))
    yield core
    core.journals.close()
    core.store.close()


def make_session(session_id: str = "test_sid", messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> Session:
    return Session(session_id=session_id, title="Test Session", messages=messages or [], **kwargs)


def save_pending_session(
    core: Core, stream_id: str, prompt: str, *, started_at: float | None,
    messages: list[dict[str, Any]] | None = None, session_id: str = "test_sid", **kwargs: Any,
) -> Session:
    """A saved session whose turn `prompt` is pending on `stream_id` (dead unless registered as live)."""
    s = make_session(
        session_id=session_id, messages=messages, pending_user_message=prompt,
        pending_started_at=started_at, active_stream_id=stream_id, **kwargs,
    )
    core.store.save(s)
    return s


def make_stale_session(session_id: str = "stale_sid", pending_msg: str = "Hello hermes", stream_id: str = "stream_1") -> Session:
    """A session whose turn is pending on a dead stream (no messages yet)."""
    s = make_session(session_id=session_id, messages=[])
    s.pending_user_message = pending_msg
    s.active_stream_id = stream_id
    s.pending_attachments = []
    s.pending_started_at = None
    return s


@dataclass
class Engine:
    """The run engine over a `Core`, with the demo agent and a scripted agent."""

    core: Core
    manager: Any
    demo: Any
    scripted: Any

    def new_session(self, backend: str = "demo", **values: Any) -> Session:
        return self.core.store.create(backend=backend, **values)


def build_engine(core: Core, *, token_delay: float = 0.001, cancel_grace_s: float = 0.5, **kwargs: Any) -> Engine:
    from hermes_jupyter.agents.demo import DemoAgent
    from hermes_jupyter.runs.manager import RunManager

    from .fakes.scripted_agent import ScriptedAgent

    demo = DemoAgent(token_delay=token_delay)
    scripted = ScriptedAgent()
    manager = RunManager(
        core.store, core.journals, core.recovery, core.live, {"demo": demo, "scripted": scripted},
        cancel_grace_s=cancel_grace_s, **kwargs,
    )
    return Engine(core, manager, demo, scripted)


@pytest.fixture
def hermes_engine(hermes_core: Core) -> Engine:
    return build_engine(hermes_core)
