"""Proposed cells through the real API: the demo's `propose a cell`, the decision route, the state every client reads.

The journal only ever says "pending"; the decision lives in the session sidecar, so it
survives the end of the run and shows in the settled transcript, the bundle and the
session's stored card alike. The server never applies a proposal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .client import HermesClient


async def _proposed(api: HermesClient, notebook_path: str | None = "analysis.ipynb") -> tuple[str, str, dict[str, Any]]:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "propose a cell", **({"notebook_path": notebook_path} if notebook_path else {}))
    await api.wait_status(run_id, "completed", "errored")
    events = (await api.call("GET", "runs", run_id, "events"))[1]["events"]
    proposals = [r["payload"] for r in events if r["event"] == "proposal"]
    return sid, run_id, proposals[0] if proposals else {}


async def test_propose_a_cell_journals_one_pending_insert_at_the_end(api: HermesClient) -> None:
    sid, run_id, proposal = await _proposed(api)
    assert proposal["action"] == "insert_end" and proposal["cell_type"] == "code" and proposal["cell_id"] is None
    assert "Hello from the Hermes demo agent" in proposal["source"]
    _, status = await api.call("GET", "runs", run_id)
    code, session = await api.call("GET", "sessions", sid)
    card = next(c for c in session["tool_calls"] if c.get("kind") == "proposal")
    assert card["status"] == "pending" and card["tid"] == proposal["proposal_id"] and status["status"] == "completed"


async def test_an_unbound_session_gets_no_proposal_and_is_told_to_bind(api: HermesClient) -> None:
    _, run_id, proposal = await _proposed(api, None)
    events = (await api.call("GET", "runs", run_id, "events"))[1]["events"]
    assert proposal == {} and "bind this session" in "".join(r["payload"].get("text", "") for r in events)


async def test_a_decision_is_kept_after_the_run_ended_and_every_view_shows_it(
    api: HermesClient, hermes_state: Path
) -> None:
    sid, run_id, proposal = await _proposed(api)
    pid = proposal["proposal_id"]
    code, row = await api.call("POST", "runs", run_id, "proposals", pid, body={"decision": "accepted"})
    assert code == 200 and row["status"] == "accepted" and row["id"] == f"{run_id}:proposal:{pid}"
    assert (await api.call("POST", "runs", run_id, "proposals", pid, body={"decision": "accepted"}))[0] == 200
    assert (await api.call("POST", "runs", run_id, "proposals", pid, body={"decision": "rejected"}))[0] == 409

    _, session = await api.call("GET", "sessions", sid)
    assert next(c for c in session["tool_calls"] if c.get("kind") == "proposal")["status"] == "accepted"
    assert session["proposal_decisions"] == {row["id"]: "accepted"}
    rows = (await api.stream(run_id)) and api.settled[run_id]["transcript"]["rows"]
    assert next(r for r in rows if r["kind"] == "proposal")["status"] == "accepted"
    _, bundle = await api.call("GET", "runs", run_id, "bundle")
    by = row["answered_by"]
    assert by["kind"] == "person" and by["user"] and session["proposal_answered_by"] == {row["id"]: by}
    assert f"**Proposed cell:** a new cell at the end · Accepted by {by['user']}" in bundle["text/markdown"]
    sidecar = json.loads((hermes_state / "sessions" / f"{sid}.json").read_text())
    assert sidecar["proposal_decisions"] == {row["id"]: "accepted"}


async def test_deciding_an_unknown_proposal_or_an_unknown_word_is_refused(api: HermesClient) -> None:
    _, run_id, proposal = await _proposed(api)
    assert (await api.call("POST", "runs", run_id, "proposals", "p-nope", body={"decision": "accepted"}))[0] == 404
    code, body = await api.call("POST", "runs", run_id, "proposals", proposal["proposal_id"], body={"decision": "run"})
    assert code == 400 and "Accept or reject" in body["message"]
    assert (await api.call("POST", "runs", "run-nope", "proposals", "p-1", body={"decision": "accepted"}))[0] == 404


async def test_an_attached_cell_is_stored_on_the_user_row_and_reaches_the_demo_agent(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    attachment = {"kind": "cell", "label": "In [2]", "text": "total = 1 + 1\nprint(total)", "language": "python"}
    run_id = await api.start(sid, "hello", attachments=[attachment])
    await api.wait_status(run_id, "completed")
    events = (await api.call("GET", "runs", run_id, "events"))[1]["events"]
    assert "You attached cell In [2] (2 lines)." in "".join(r["payload"].get("text", "") for r in events)
    _, session = await api.call("GET", "sessions", sid)
    assert session["messages"][0]["attachments"] == [attachment]
    code, body = await api.call("POST", "sessions", sid, "runs", body={"message": "x", "attachments": [{"kind": "x"}]})
    assert code == 400 and "attachment" in body["message"]
