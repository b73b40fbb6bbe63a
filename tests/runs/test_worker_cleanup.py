"""The worker's final cleanup: checkpoint first, then last-resort settle (seed name kept)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hermes_jupyter.runs.manager import RunManager

from ..hermes_fixtures import Core, build_engine

pytestmark = pytest.mark.asyncio


class RecordingManager(RunManager):
    """Records the cleanup order; settling the result fails, so the turn exits unsettled."""

    calls: list[str]

    def _settle_result_sync(self, run: Any, result: Any) -> str:
        raise OSError("disk full while settling")

    async def _stop_checkpoint(self, task: asyncio.Task[None]) -> None:
        self.calls.append("checkpoint_stopped")
        await super()._stop_checkpoint(task)

    def _settle_last_resort(self, run: Any) -> None:
        self.calls.append("last_resort")
        super()._settle_last_resort(run)


async def test_checkpoint_stops_before_recovery_code_structure(hermes_core: Core) -> None:
    """Stopping the checkpoint (which takes the session lock) must come before last-resort recovery."""
    engine = build_engine(hermes_core)
    manager = RecordingManager(
        hermes_core.store, hermes_core.journals, hermes_core.recovery, hermes_core.live,
        {"demo": engine.demo}, checkpoint_interval_s=0.01,
    )
    manager.calls = []
    session = hermes_core.store.create()
    run = await manager.start_run(session.session_id, "count to 5")
    with pytest.raises(OSError):
        assert run.task is not None
        await run.task
    assert manager.calls == ["checkpoint_stopped", "last_resort"]
    saved = hermes_core.store.load(session.session_id)
    assert saved.pending_user_message is None
    assert saved.messages[-1]["type"] == "interrupted"
    assert saved.messages[-2]["content"] == "1 2 3 4 5"
