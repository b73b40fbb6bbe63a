"""Sessions a person can tell apart: titled from their first prompt, the notebook as subtitle, no empty leftovers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.sessions.store import INDEX_NAME, SessionStore
from hermes_jupyter.sessions.titles import MAX_TITLE_CHARS, UNTITLED, title_for_turn, title_from_prompt

from .client import HermesClient


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


def test_a_title_is_the_first_line_that_says_something_cut_at_a_word() -> None:
    assert title_from_prompt("count to 40") == "count to 40"
    assert title_from_prompt("\n\n## Plot the residuals\nof the fit") == "Plot the residuals"
    assert title_from_prompt("- `df.describe()`") == "df.describe()"
    long = title_from_prompt("Why is the estimate of the mean biased when the sample is censored at zero?")
    assert len(long) <= MAX_TITLE_CHARS and long.endswith("…") and long.startswith("Why is the estimate of the mean")
    assert not long[:-1].endswith(" ")
    assert "sk-" not in title_from_prompt("use key sk-abcdefghijklmnopqrstuvwx please")
    assert title_from_prompt("   \n  ") == UNTITLED


def test_only_an_untitled_session_is_named_after_its_first_user_message() -> None:
    assert title_for_turn(UNTITLED, [], "count to 3") == "count to 3"
    assert title_for_turn("Project X", [], "count to 3") is None  # a name someone chose stays
    earlier = [{"role": "user", "content": "hello there"}, {"role": "assistant", "content": "hi"}]
    assert title_for_turn(UNTITLED, earlier, "count to 3") == "hello there"


async def test_new_sessions_of_one_notebook_get_distinct_titles_and_the_notebook_as_subtitle(api: HermesClient) -> None:
    # What `%%hermes --new` does for each cell of a Run All: a session bound to the notebook, then a turn.
    prompts = ["count to 3", "use a tool", "hello"]
    for prompt in prompts:
        sid = (await api.create_session(notebook_path="work/usertests.ipynb"))["session_id"]
        await api.wait_status(await api.start(sid, prompt), "completed")
    code, listing = await api.call("GET", "sessions")
    assert code == 200
    rows = [r for r in listing if r.get("notebook_path") == "work/usertests.ipynb"]
    assert sorted(r["title"] for r in rows) == sorted(prompts)
    assert {r["subtitle"] for r in rows} == {"work/usertests.ipynb"}
    assert all(r["created_at"] <= r["updated_at"] for r in rows)


async def test_a_named_session_keeps_its_name(api: HermesClient) -> None:
    sid = (await api.create_session(title="Project X"))["session_id"]
    await api.wait_status(await api.start(sid, "count to 2"), "completed")
    _, listing = await api.call("GET", "sessions")
    row = next(r for r in listing if r["session_id"] == sid)
    assert row["title"] == "Project X" and row["subtitle"] is None  # bound to no notebook


async def test_create_with_a_message_starts_the_first_turn_in_the_same_call(api: HermesClient) -> None:
    code, created = await api.call("POST", "sessions", body={"message": "count to 5"})
    assert code == 201 and created["title"] == "count to 5"
    status = await api.wait_status(created["run_id"], "completed")
    assert status["session_id"] == created["session_id"]


async def test_a_first_turn_that_cannot_start_leaves_no_session(api: HermesClient, jp_serverapp: Any) -> None:
    _, before = await api.call("GET", "sessions")
    manager = jp_serverapp.web_app.settings["hermes"].manager
    manager.draining = True  # the server is shutting down: no new turn is admitted
    try:
        code, err = await api.call("POST", "sessions", body={"message": "count to 5"})
    finally:
        manager.draining = False
    assert code == 409 and "message" in err
    _, after = await api.call("GET", "sessions")
    assert [s["session_id"] for s in after] == [s["session_id"] for s in before]
    code, _ = await api.call("POST", "sessions", body={"message": "   "})
    assert code == 400


def test_listing_rows_cached_by_an_older_version_gain_the_subtitle(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.create(notebook_path="work/a.ipynb")
    store.close()
    index_path = store.root / INDEX_NAME
    old = json.loads(index_path.read_text())
    del old[session.session_id]["subtitle"]  # what the index held before rows had one
    index_path.write_text(json.dumps(old))
    fresh = SessionStore(store.root)
    try:
        fresh.list()  # answered from the index at once, checked against the sidecars in the background
        assert fresh.wait_reconciled()
        assert [r.get("subtitle") for r in fresh.list()] == ["work/a.ipynb"]
    finally:
        fresh.close()
