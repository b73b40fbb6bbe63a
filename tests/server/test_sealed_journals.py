"""A settled run's journal is sealed (`.jsonl.gz`) by the server; every route still reads it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .client import HermesClient


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


async def _sealed(state: Path, sid: str, run_id: str, timeout_s: float = 10) -> Path:
    """Wait for the server to seal the run's journal (it does so on its I/O pool after the settle)."""
    folder = state / "runs" / sid
    for _ in range(int(timeout_s / 0.02)):
        if (folder / f"{run_id}.jsonl.gz").exists() and not (folder / f"{run_id}.jsonl").exists():
            return folder / f"{run_id}.jsonl.gz"
        await asyncio.sleep(0.02)
    raise AssertionError(f"journal of {run_id} was not sealed: {sorted(p.name for p in folder.iterdir())}")


async def test_a_sealed_journal_is_read_by_the_events_route_the_stream_and_the_status(
    api: HermesClient, hermes_state: Path
) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 40")
    live_rows = await api.stream(run_id)
    await api.wait_status(run_id, "completed")
    await _sealed(hermes_state, sid, run_id)

    code, page = await api.call("GET", "runs", run_id, "events", after_seq="10", limit="5")
    assert code == 200 and [e["seq"] for e in page["events"]] == [11, 12, 13, 14, 15]
    code, rest = await api.call("GET", "runs", run_id, "events", after_seq="15")
    assert rest["events"] == live_rows[15:] and rest["terminal"] is True
    assert await api.stream(run_id) == live_rows  # replay: the same lines as the live stream sent
    assert await api.stream(run_id, after_seq=38) == live_rows[38:]
    code, status = await api.call("GET", "runs", run_id)
    assert status == {"run_id": run_id, "session_id": sid, "status": "completed", "last_seq": 42, "marker": None}  # 40 tokens, usage, done
    code, session = await api.call("GET", "sessions", sid)
    assert session["messages"][-1]["content"] == " ".join(str(i) for i in range(1, 41))


async def test_a_cancelled_runs_journal_is_sealed_and_keeps_its_partial_output(
    api: HermesClient, hermes_state: Path
) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 100000")
    await api.stream(run_id, stop_after=5)
    code, _ = await api.call("POST", "runs", run_id, "cancel")
    assert code == 200
    await api.wait_status(run_id, "cancelled")
    await _sealed(hermes_state, sid, run_id)
    rows = await api.stream(run_id)
    assert rows[-1]["event"] == "cancel" and [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
