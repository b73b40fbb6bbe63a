"""`GET`/`POST sessions` are one engine call each: the engine creates (with a first turn or not), lists and pages
sessions; the listing is its composed read side (sessions/listing.py)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import msgspec
import pytest

from hermes_jupyter.sessions.listing import Rows

from ..hermes_fixtures import Engine

pytestmark = pytest.mark.asyncio


async def _idle(engine: Engine) -> None:
    while engine.manager.active_runs():
        await asyncio.sleep(0.02)


async def test_create_session_with_and_without_a_first_turn_and_a_refused_turn_leaves_no_session(
    hermes_engine: Engine,
) -> None:
    manager = hermes_engine.manager
    bare, no_run = await manager.create_session({"title": "bare", "backend": "demo"})
    assert no_run is None and bare.title == "bare" and bare.active_run_id is None
    started, run = await manager.create_session({"title": "t", "backend": "demo"}, "count to 2")
    assert run is not None and started.active_run_id == run.run_id and started.pending_user_message == "count to 2"
    await _idle(hermes_engine)
    with pytest.raises(ValueError):
        await manager.create_session({"title": "refused", "backend": "demo"}, "   ")
    titles = {r["title"] for r in msgspec.json.decode(await manager.list_sessions())}
    assert "refused" not in titles and {"bare", "t"} <= titles


async def test_the_listing_filters_by_notebook_narrows_to_the_visible_and_pages_newest_first(
    hermes_engine: Engine,
) -> None:
    manager = hermes_engine.manager
    made = [(await manager.create_session({"title": f"s{i}", "backend": "demo",
                                           "notebook_path": "a.ipynb" if i % 2 else "b.ipynb"}))[0].session_id
            for i in range(5)]
    newest_first = list(reversed(made))
    listed = msgspec.json.decode(await manager.list_sessions())
    assert [r["session_id"] for r in listed] == newest_first
    of_a = msgspec.json.decode(await manager.list_sessions("a.ipynb"))
    assert [r["session_id"] for r in of_a] == [made[3], made[1]]

    def only_first(rows: Rows) -> Rows:
        return [r for r in rows if r["session_id"] == made[0]]

    assert [r["session_id"] for r in msgspec.json.decode(await manager.list_sessions(visible=only_first))] == [made[0]]
    first = await manager.sessions_page(2)
    assert [r["session_id"] for r in first.rows] == newest_first[:2] and first.next is not None
    rest = await manager.sessions_page(10, first.next)
    assert [r["session_id"] for r in rest.rows] == newest_first[2:] and rest.next is None
    narrowed = await manager.sessions_page(1, None, "b.ipynb", visible=lambda rows: rows)  # a kernel: all, one page
    assert [r["session_id"] for r in narrowed.rows] == [made[4], made[2], made[0]] and narrowed.next is None


async def test_the_whole_list_is_built_off_the_loop_and_off_the_engines_io_threads(
    hermes_engine: Engine, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At 100k sessions the whole list is megabytes: it must neither stall streams nor delay run admission."""
    store = hermes_engine.core.store
    store.create(backend="demo")
    threads: list[str] = []
    real_list = store.list

    def recording_list() -> list[dict[str, Any]]:
        threads.append(threading.current_thread().name)
        return real_list()

    monkeypatch.setattr(store, "list", recording_list)
    await hermes_engine.manager.list_sessions()
    await hermes_engine.manager.list_sessions(visible=lambda rows: rows)
    assert len(threads) == 2
    assert all(name != threading.main_thread().name and not name.startswith("hermes-io") for name in threads)
