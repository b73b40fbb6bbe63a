"""`POST sessions/{sid}/continue` over HTTP: 202 with the run it continues, 409 in plain words otherwise."""

from __future__ import annotations

import re

from .client import HermesClient



async def test_continue_after_stop_answers_202_and_finishes_the_count(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 300")
    await api.stream(run_id, stop_after=20)
    code, _ = await api.call("POST", "runs", run_id, "cancel")
    assert code == 200
    code, data = await api.call("POST", "sessions", sid, "continue")
    assert code == 202 and data == {"run_id": data["run_id"], "session_id": sid, "continues": run_id}
    rows = await api.stream(data["run_id"])
    assert rows[0]["event"] == "continuation" and rows[0]["payload"]["continues"] == run_id
    assert api.settled[data["run_id"]]["status"] == "completed"
    code, session = await api.call("GET", "sessions", sid)
    text = " ".join(m["content"] for m in session["messages"] if m["role"] == "assistant" and not m.get("_error"))
    assert [int(n) for n in re.findall(r"\d+", text)] == list(range(1, 301))
    assert [m.get("type") for m in session["messages"] if m.get("_error")] == ["cancelled"]


async def test_continue_is_409_when_the_last_turn_finished_or_a_run_is_active(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    code, err = await api.call("POST", "sessions", sid, "continue")
    assert code == 409 and "nothing to continue" in err["message"]
    await api.wait_status(await api.start(sid, "count to 3"), "completed")
    code, err = await api.call("POST", "sessions", sid, "continue")
    assert code == 409 and "not interrupted or stopped" in err["message"]
    assert sid not in err["message"] and sid in err.get("detail", "")  # ids only in the details
    running = await api.start(sid, "count to 100000")
    code, err = await api.call("POST", "sessions", sid, "continue")
    assert code == 409 and "still running" in err["message"]
    await api.call("POST", "runs", running, "cancel")


async def test_continue_of_an_unknown_session_is_404(api: HermesClient) -> None:
    code, err = await api.call("POST", "sessions", "nope", "continue")
    assert code == 404
