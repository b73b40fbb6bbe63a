"""Port of hermes-agent's gateway session-split tests (seed names kept) against our run engine.

The fake agent rotates `session-before-compression` to `session-after-compression`
during the turn, then fails. The binding may follow only along that edge, only
for a current run, and only if nobody moved it meanwhile.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from hermes_jupyter.agents.base import TurnResult
from hermes_jupyter.runs.binding import sync_session_split

from ..fakes.scripted_agent import Script
from ..hermes_fixtures import Engine

pytestmark = pytest.mark.asyncio

BEFORE, AFTER = "session-before-compression", "session-after-compression"


def _compression_then_failure(before_return: Callable[[], None] | None = None) -> Script:
    return Script(
        steps=[],
        result=TurnResult.failure(
            "connection",
            "APIConnectionError: Codex auxiliary Responses stream exceeded 120.0s total timeout",
            context=[{"role": "user", "content": "[compressed summary]"}, {"role": "user", "content": "continue"}],
            replace_context=True,
            backend_session_id=AFTER,
        ),
        before_return=before_return,
    )


async def _run(engine: Engine, mid_turn: Callable[[str], None] | None = None) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """One compressing-then-failing turn; `mid_turn(session_id)` runs while the turn is still unwinding."""
    events: list[tuple[str, dict[str, Any]]] = []
    engine.manager.on_lifecycle = lambda name, data: events.append((name, data))
    sid_box: list[str] = []
    hook = (lambda: mid_turn(sid_box[0])) if mid_turn else None
    engine.scripted.scripts["continue"] = _compression_then_failure(hook)
    session = engine.new_session(backend="scripted", backend_session_id=BEFORE)
    sid_box.append(session.session_id)
    run = await engine.manager.start_run(session.session_id, "continue")
    await run.done.wait()
    return session.session_id, events


async def test_failed_turn_still_syncs_compression_session_split(hermes_engine: Engine) -> None:
    sid, events = await _run(hermes_engine)
    saved = hermes_engine.core.store.load(sid, use_cache=False)
    assert saved.messages[-1]["_error"] is True  # the turn failed
    assert saved.backend_session_id == AFTER  # ...and the binding moved, persisted
    moved = [data for name, data in events if name == "session.binding_moved"]
    assert moved == [{"session_id": sid, "from": BEFORE, "to": AFTER}]
    assert saved.context_messages[0]["content"] == "[compressed summary]"  # history replaced, offset 0
    split = sync_session_split(saved, started_id=BEFORE, reported_id=AFTER, run_generation=1,
                               current_generation=1, history_len=7)
    assert (split.backend_session_id, split.history_offset) == (AFTER, 0)


async def test_stale_run_does_not_overwrite_new_session_after_compression(hermes_engine: Engine) -> None:
    """A cancel or reset while compression unwinds makes the run stale; its rotated id must not be published."""
    sid, events = await _run(hermes_engine, hermes_engine.manager.invalidate_generation)
    saved = hermes_engine.core.store.load(sid, use_cache=False)
    assert saved.messages[-1]["_error"] is True
    assert saved.backend_session_id == BEFORE
    assert [name for name, _ in events if name == "session.binding_moved"] == []
    split = sync_session_split(saved, started_id=BEFORE, reported_id=AFTER, run_generation=1,
                               current_generation=2, history_len=7)
    assert (split.backend_session_id, split.history_offset, split.persisted) == (AFTER, 0, False)
    assert saved.backend_session_id == BEFORE


async def test_session_split_sync_skips_when_binding_already_moved(hermes_engine: Engine) -> None:
    """Run starts on A, the binding moves to B (/new), the run finishes into C: C must not replace B."""
    def rebind(sid: str) -> None:
        hermes_engine.core.store.load(sid).backend_session_id = "fresh-session-after-new"

    sid, events = await _run(hermes_engine, rebind)
    saved = hermes_engine.core.store.load(sid, use_cache=False)
    assert saved.backend_session_id == "fresh-session-after-new"
    assert [name for name, _ in events if name == "session.binding_moved"] == []
