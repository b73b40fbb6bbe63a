"""Every answer says who gave it: two people answering through their browsers are told apart in the
journal, the settled rows, the session's cards and the cell bundle; an approval nobody answered reads
"Not answered" and its tool card ends (docs/transcript.md).

The server's identity provider here names the user from a cookie (the test's stand-in for a login);
the requests carry that cookie and an XSRF token, as a browser's do, and no token.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from tornado.httpclient import HTTPClientError

from hermes_jupyter import events

from .client import HermesClient

USER_COOKIE = "hermes-test-user"
XSRF = "0123456789abcdef"


class NamedUsers(IdentityProvider):
    """A browser's `hermes-test-user` cookie names its user (display name = name = the cookie)."""

    def get_user_cookie(self, handler: Any) -> User | None:
        name = handler.get_cookie(USER_COOKIE)
        return User(username=f"id-{name}", name=name) if name else None


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return {**jp_server_config, "ServerApp": {**jp_server_config["ServerApp"],
                                              "identity_provider_class": f"{__name__}.NamedUsers"}}


async def _as(jp_fetch: Any, user: str, *path: str, body: dict[str, Any]) -> int:
    """POST as `user`'s browser: their login cookie and the XSRF cookie + header, no token."""
    headers = {"Authorization": "", "Cookie": f"{USER_COOKIE}={user}; _xsrf={XSRF}", "X-XSRFToken": XSRF}
    try:
        response = await jp_fetch("hermes", "api", *path, method="POST", body=json.dumps(body), headers=headers)
    except HTTPClientError as err:
        return err.code
    return int(response.code)


async def _pending(api: HermesClient, run_id: str, event: str, key: str) -> str:
    while True:
        page = (await api.call("GET", "runs", run_id, "events"))[1]
        found = next((r["payload"][key] for r in page["events"] if r["event"] == event), None)
        if found is not None:
            return str(found)


async def _answered_approval(api: HermesClient, jp_fetch: Any, sid: str, user: str, choice: str) -> str:
    run_id = await api.start(sid, "please ask for approval")
    approval_id = await _pending(api, run_id, events.APPROVAL, "approval_id")
    assert await _as(jp_fetch, user, "runs", run_id, "approvals", approval_id, body={"choice": choice}) == 200
    await api.wait_status(run_id, "completed")
    return run_id


async def _resolved(api: HermesClient, run_id: str, event: str) -> dict[str, Any]:
    page = (await api.call("GET", "runs", run_id, "events"))[1]
    return next(r["payload"] for r in page["events"] if r["event"] == event and r["payload"]["status"] == "resolved")


async def test_two_people_s_answers_are_told_apart_everywhere(api: HermesClient, jp_fetch: Any) -> None:
    sid = (await api.create_session())["session_id"]
    alice_run = await _answered_approval(api, jp_fetch, sid, "alice", "allow_once")
    bob_run = await _answered_approval(api, jp_fetch, sid, "bob", "deny")

    assert (await _resolved(api, alice_run, events.APPROVAL))["answered_by"] == {"kind": "person", "user": "alice"}
    assert (await _resolved(api, bob_run, events.APPROVAL))["answered_by"] == {"kind": "person", "user": "bob"}
    bundles = {run: (await api.call("GET", "runs", run, "bundle"))[1] for run in (alice_run, bob_run)}
    assert "· Allowed once by alice" in bundles[alice_run]["text/markdown"]
    assert "· Denied by bob" in bundles[bob_run]["text/markdown"]
    assert "bob" not in bundles[alice_run]["text/markdown"] and "alice" not in bundles[bob_run]["text/markdown"]

    await api.stream(bob_run)
    approval = next(r for r in api.settled[bob_run]["transcript"]["rows"] if r["kind"] == "approval")
    assert approval["answered_by"] == {"kind": "person", "user": "bob"}
    session = (await api.call("GET", "sessions", sid))[1]
    by = [c["answered_by"] for c in session["tool_calls"] if c.get("kind") == "approval"]
    assert by == [{"kind": "person", "user": "alice"}, {"kind": "person", "user": "bob"}]


async def test_a_question_and_a_proposal_say_who_answered(api: HermesClient, jp_fetch: Any) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "please ask me a question")
    clarify_id = await _pending(api, run_id, events.CLARIFY, "clarify_id")
    assert await _as(jp_fetch, "alice", "runs", run_id, "clarify", clarify_id, body={"answer": "yes"}) == 200
    await api.wait_status(run_id, "completed")
    assert (await _resolved(api, run_id, events.CLARIFY))["answered_by"] == {"kind": "person", "user": "alice"}
    bundle = (await api.call("GET", "runs", run_id, "bundle"))[1]
    assert "· Answered by alice: yes" in bundle["text/markdown"]

    run_id = await api.start(sid, "propose a cell", notebook_path="analysis.ipynb")
    await api.wait_status(run_id, "completed")
    proposal_id = await _pending(api, run_id, events.PROPOSAL, "proposal_id")
    path = ("runs", run_id, "proposals", proposal_id)
    assert await _as(jp_fetch, "bob", *path, body={"decision": "accepted"}) == 200
    assert await _as(jp_fetch, "alice", *path, body={"decision": "accepted"}) == 200  # the same: a no-op
    bundle = (await api.call("GET", "runs", run_id, "bundle"))[1]
    assert "· Accepted by bob" in bundle["text/markdown"] and "alice" not in bundle["text/markdown"]
    session = (await api.call("GET", "sessions", sid))[1]
    card = next(c for c in session["tool_calls"] if c.get("kind") == "proposal")
    assert card["answered_by"] == {"kind": "person", "user": "bob"}


async def test_a_request_without_a_person_is_not_recorded_as_one(api: HermesClient, jp_fetch: Any) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "please ask for approval")
    approval_id = await _pending(api, run_id, events.APPROVAL, "approval_id")
    headers = {"Authorization": "", "Cookie": f"{USER_COOKIE}=mallory"}  # the cookie alone: a cross-site form
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("hermes", "api", "runs", run_id, "approvals", approval_id, method="POST",
                       body=json.dumps({"choice": "allow_once"}), headers=headers)
    assert refused.value.code == 403
    await api.call("POST", "runs", run_id, "cancel")
    await api.wait_status(run_id, "cancelled")
    assert "mallory" not in json.dumps((await api.call("GET", "runs", run_id, "events"))[1])


async def test_an_approval_the_run_ended_before_reads_not_answered_and_its_tool_ends(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "please ask for approval")
    await _pending(api, run_id, events.APPROVAL, "approval_id")
    await api.call("POST", "runs", run_id, "cancel")
    await api.stream(run_id)
    rows = api.settled[run_id]["transcript"]["rows"]
    approval = next(r for r in rows if r["kind"] == "approval")
    tool = next(r for r in rows if r["kind"] == "tool")
    assert (approval["choice"], approval["answered_by"]) == ("deny", {"kind": "timeout"})
    assert tool["status"] == "error"
    markdown = api.settled[run_id]["bundle"]["text/markdown"]
    assert "· Not answered" in markdown and "Denied" not in markdown and "· running" not in markdown
    session = (await api.call("GET", "sessions", sid))[1]
    cards = {c["name"]: c for c in session["tool_calls"]}
    assert cards["terminal"]["done"] is True and cards["approval"]["answered_by"] == {"kind": "timeout"}
