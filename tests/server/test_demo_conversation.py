"""The demo agent's richer prompts through the real API: a clarifying question, a plan, code, usage.

`ask me a question` exercises the clarify route end to end offline: the question is journaled,
answered with `POST runs/{id}/clarify/{cid}` (404 unknown, 409 answered), and the reply quotes it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .client import HermesClient



@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


async def _rows_until(api: HermesClient, run_id: str, event: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while not any(r["event"] == event for r in rows):
        code, page = await api.call("GET", "runs", run_id, "events")
        rows = page["events"]
        await asyncio.sleep(0.02)
    return rows


async def _events(api: HermesClient, run_id: str) -> list[dict[str, Any]]:
    await api.wait_status(run_id, "completed", "errored")
    return (await api.call("GET", "runs", run_id, "events"))[1]["events"]  # type: ignore[no-any-return]


async def test_a_clarifying_question_is_answered_through_the_api_and_quoted(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "ask me a question")
    rows = await _rows_until(api, run_id, "clarify")
    pending = next(r["payload"] for r in rows if r["event"] == "clarify")
    assert pending["status"] == "pending" and pending["choices"] == ["yes", "no"] and pending["question"]
    path = ("runs", run_id, "clarify", pending["clarify_id"])
    assert (await api.call("POST", "runs", run_id, "clarify", "nope", body={"answer": "yes"}))[0] == 404
    assert (await api.call("POST", *path, body={"answer": ""}))[0] == 400
    code, answered = await api.call("POST", *path, body={"answer": "yes"})
    assert code == 200 and answered["answer"] == "yes"
    assert (await api.call("POST", *path, body={"answer": "no"}))[0] == 409

    events = await _events(api, run_id)
    clarify = [r["payload"] for r in events if r["event"] == "clarify"]
    assert [(c["status"], c.get("answer")) for c in clarify] == [("pending", None), ("resolved", "yes")]
    assert "\u201cyes\u201d" in "".join(r["payload"]["text"] for r in events if r["event"] == "token")
    assert clarify[0]["clarify_id"] not in {r["payload"].get("tid") for r in events if r["event"] == "tool"}
    assert [r["event"] for r in events][-2:] == ["usage", "done"]


async def test_a_plan_of_three_items_is_updated_as_each_completes(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    events = await _events(api, await api.start(sid, "make a plan"))
    plans = [[i["status"] for i in r["payload"]["items"]] for r in events if r["event"] == "plan"]
    assert plans[0] == ["in_progress", "pending", "pending"]
    assert plans[-1] == ["completed"] * 3 and len(plans) == 4
    assert [r["event"] for r in events][-2:] == ["usage", "done"]


async def test_write_some_code_answers_with_a_fenced_block_a_table_and_a_formula(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    events = await _events(api, await api.start(sid, "write some code"))
    text = "".join(r["payload"]["text"] for r in events if r["event"] == "token")
    assert "```python\n" in text and "| input | mean |" in text
    assert r"$\bar{x} = \frac{1}{n}\sum_i x_i$" in text
    usage = next(r["payload"] for r in events if r["event"] == "usage")
    assert usage["model"] == "demo" and usage["output_tokens"] > 0 and usage["input_tokens"] == 3


async def test_models_route_names_what_a_backend_offers(api: HermesClient) -> None:
    code, models = await api.call("GET", "models")
    assert code == 200 and models["backend"] == "demo" and models["default"] == "demo"
    assert [m["id"] for m in models["models"]] == ["demo", "demo-large"] and models["can_steer"] is False
    assert (await api.call("GET", "models", backend="nope"))[0] == 400


async def test_the_sessions_model_is_used_from_the_next_turn_and_named_in_its_usage(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    code, patched = await api.call("PATCH", "sessions", sid, body={"model": "demo-large"})
    assert code == 200 and patched["model"] == "demo-large"
    run_id = await api.start(sid, "count to 2")
    usage = next(r["payload"] for r in await api.stream(run_id) if r["event"] == "usage")
    assert usage["model"] == "demo-large"
    assert "demo-large · " in api.settled[run_id]["bundle"]["text/markdown"]


async def test_allowed_always_lists_nothing_for_a_backend_that_remembers_nothing(api: HermesClient) -> None:
    code, listed = await api.call("GET", "approvals", "always")
    assert code == 200 and listed["always"] == []
    assert set(listed["unavailable"]) <= {"hermes"}  # named when it cannot be asked here, never guessed empty
    code, err = await api.call("DELETE", "approvals", "always", backend="demo", pattern="rm -rf *")  # demo: none
    assert code == 404 and "no longer allowed always" in err["message"]
    assert (await api.call("DELETE", "approvals", "always"))[0] == 400
