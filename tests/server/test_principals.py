"""Attacks on who may act, through a real server, real kernels it started and the scripted model.

Only a person answers for the person: a kernel's token (from an ordinary cell, or from code the
agent got approved) and the server token alone get 403 on the person's routes, and an approval
they try to answer stays pending until a person answers it. A kernel's token reaches only its own
kernel's sessions and notebook. docs/agent-reach.md has the table these tests hold the server to.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from .principals_stack import SELF_APPROVER, XSRF, Stack, principals_stack, resolved, run_code_message

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with principals_stack(tmp_path_factory.mktemp("principals")) as stack:
        for name in stack.kernels:
            token = asyncio.run(stack.value_in(name, "__import__('os').environ.get('HERMES_JUPYTER_SERVER_TOKEN')"))
            assert token and token.startswith("hjk_"), token
            stack.tokens[name] = token
        yield stack


def _bound_session(stack: Stack, notebook: str, title: str) -> str:
    """A session a person bound to the notebook and its kernel (what the sidebar's "Bind to" makes)."""
    with stack.person() as http:
        response = http.post("sessions", json={"title": title, "backend": "openai", "notebook_path": notebook,
                                               "kernel_id": stack.kernels[notebook]})
    assert response.status_code == 201, response.text
    return str(response.json()["session_id"])


def _start(http_client: object, sid: str, message: str) -> str:
    response = http_client.post(f"sessions/{sid}/runs", json={"message": message})  # type: ignore[attr-defined]
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])


async def _forged(stack: Stack, notebook: str, at_least: int = 1, timeout_s: float = 30) -> list[tuple[str, int]]:
    """The answers the self-approving thread in that kernel sent, once it sent some."""
    deadline = time.monotonic() + timeout_s
    while True:
        forged = await stack.value_in(notebook, "list(forged)")
        if len([f for f in forged if f[0] != "error"]) >= at_least:
            return forged  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, forged
        await asyncio.sleep(0.2)


async def test_a_cell_thread_cannot_approve_the_agents_code(stack: Stack) -> None:
    """(a) A thread started in an ordinary cell polls the run and answers its approval with the kernel's token."""
    sid = _bound_session(stack, "a.ipynb", "self-approval from a cell")
    await stack.run_in("a.ipynb", SELF_APPROVER)
    with stack.kernel("a.ipynb") as kernel:  # the kernel may start a turn of its own session
        run_id = _start(kernel, sid, run_code_message("from_cell_ran = True"))
    pending = stack.pending(run_id)
    forged = await _forged(stack, "a.ipynb")
    assert {code for _, code in forged} == {403}, forged
    assert resolved(stack.events(run_id), pending["approval_id"]) == []  # still waiting for a person
    assert await stack.value_in("a.ipynb", "'from_cell_ran' in globals()") is False
    with stack.person() as person:  # a person's answer is taken
        answered = person.post(f"runs/{run_id}/approvals/{pending['approval_id']}", json={"choice": "deny"})
    assert answered.status_code == 200, answered.text
    rows = stack.finish(run_id)
    assert [p["choice"] for p in resolved(rows, pending["approval_id"])] == ["deny"]
    assert await stack.value_in("a.ipynb", "'from_cell_ran' in globals()") is False


async def test_approved_code_cannot_approve_the_agents_next_code(stack: Stack) -> None:
    """(b) Code a person approved once starts the same thread; the next run_code still waits for a person."""
    sid = _bound_session(stack, "b.ipynb", "self-approval from approved code")
    with stack.person() as person:
        first = _start(person, sid, run_code_message(SELF_APPROVER))
        approval = stack.pending(first)
        assert person.post(f"runs/{first}/approvals/{approval['approval_id']}",
                           json={"choice": "allow_once"}).status_code == 200
        stack.finish(first)
        second = _start(person, sid, run_code_message("from_approved_ran = True"))
    pending = stack.pending(second)
    forged = await _forged(stack, "b.ipynb")
    assert {code for _, code in forged} == {403}, forged
    assert resolved(stack.events(second), pending["approval_id"]) == []
    assert await stack.value_in("b.ipynb", "'from_approved_ran' in globals()") is False
    with stack.person() as person:
        assert person.post(f"runs/{second}/approvals/{pending['approval_id']}",
                           json={"choice": "deny"}).status_code == 200
    stack.finish(second)


async def test_the_kernel_token_cannot_do_the_persons_other_acts(stack: Stack) -> None:
    """(c) Rename, rebind, delete, clarify, proposals, revoke "always": 403 in plain words; the model it may switch."""
    sid = _bound_session(stack, "a.ipynb", "the person's")
    with stack.person() as person:
        run_id = _start(person, sid, "count to 2")
        stack.finish(run_id)
    with stack.kernel("a.ipynb") as kernel:
        attempts = {
            "rename": kernel.patch(f"sessions/{sid}", json={"title": "the kernel's now"}),
            "rebind": kernel.patch(f"sessions/{sid}", json={"kernel_id": stack.kernels["b.ipynb"]}),
            "delete": kernel.delete(f"sessions/{sid}"),
            "clarify": kernel.post(f"runs/{run_id}/clarify/c1", json={"answer": "yes"}),
            "proposal": kernel.post(f"runs/{run_id}/proposals/p1", json={"decision": "accepted"}),
            "revoke": kernel.delete("approvals/always", params={"backend": "hermes", "pattern": "rm -rf"}),
        }
        model = kernel.patch(f"sessions/{sid}", json={"model": "another-model"})
        still = kernel.get(f"sessions/{sid}")
    assert {what: r.status_code for what, r in attempts.items()} == dict.fromkeys(attempts, 403)
    for response in attempts.values():
        body = response.json()
        assert body["message"].startswith("Only a person can") and "JupyterLab" in body["message"]
        assert "kernel" in body["detail"]
    assert model.status_code == 200 and model.json()["model"] == "another-model"  # the magic's --model
    assert still.json()["title"] == "the person's" and still.json()["kernel_id"] == stack.kernels["a.ipynb"]


async def test_a_kernel_reaches_only_its_own_sessions_and_notebook(stack: Stack) -> None:
    """(d) Kernel A's token cannot list, read, stream, cancel or run B's sessions, nor bind to B."""
    theirs = _bound_session(stack, "b.ipynb", "b's conversation")
    with stack.person() as person:
        run_b = _start(person, theirs, "count to 2")
        stack.finish(run_b)
    kernel_a, kernel_b = stack.kernels["a.ipynb"], stack.kernels["b.ipynb"]
    with stack.kernel("a.ipynb") as kernel:
        listed = kernel.get("sessions").json()
        paged = kernel.get("sessions", params={"limit": 5}).json()["sessions"]
        reads = {
            "session": kernel.get(f"sessions/{theirs}"),
            "run": kernel.get(f"runs/{run_b}"),
            "events": kernel.get(f"runs/{run_b}/events"),
            "bundle": kernel.get(f"runs/{run_b}/bundle"),
            "cancel": kernel.post(f"runs/{run_b}/cancel", json={}),
            "start": kernel.post(f"sessions/{theirs}/runs", json={"message": "count to 1"}),
            "continue": kernel.post(f"sessions/{theirs}/continue", json={}),
            "model": kernel.patch(f"sessions/{theirs}", json={"model": "x"}),
            "create with b's kernel": kernel.post("sessions", json={"kernel_id": kernel_b}),
            "create for b's notebook": kernel.post("sessions", json={"notebook_path": "b.ipynb"}),
            "recover b's notebook": kernel.post("notebooks/recover", json={"path": "b.ipynb"}),
        }
        own = kernel.post("sessions", json={"title": "a's own"})
        mine = own.json()
        moved = kernel.post(f"sessions/{mine['session_id']}/runs", json={"message": "count to 1",
                                                                         "kernel_id": kernel_b})
    assert {r["kernel_id"] for r in listed + paged} <= {kernel_a}, listed
    assert theirs not in {r["session_id"] for r in listed + paged}
    assert {what: r.status_code for what, r in reads.items()} == dict.fromkeys(reads, 404), \
        {what: r.text for what, r in reads.items()}
    assert own.status_code == 201 and (mine["kernel_id"], mine["notebook_path"]) == (kernel_a, "a.ipynb")
    assert moved.status_code == 404
    with stack.person() as person:
        assert person.get(f"sessions/{mine['session_id']}").json()["kernel_id"] == kernel_a  # never rebound
    ws_url = stack.server.url.replace("http://", "ws://") + f"hermes/api/runs/{run_b}/stream"
    with pytest.raises(HTTPClientError) as refused:
        await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {stack.tokens['a.ipynb']}"}))
    assert refused.value.code == 404


async def test_the_agent_of_a_kernels_session_reads_only_its_notebook(stack: Stack) -> None:
    """(d) read_notebook of a session bound to A cannot name B's notebook."""
    sid = _bound_session(stack, "a.ipynb", "reads b?")
    with stack.kernel("a.ipynb") as kernel:
        run_id = _start(kernel, sid, 'use the read_notebook tool with {"path": "b.ipynb"}')
    rows = stack.finish(run_id)
    (complete,) = [r["payload"] for r in rows if r["event"] == "tool_complete"]
    assert complete["is_error"] and "only this conversation's notebook (a.ipynb)" in complete["preview"]
    assert "'b.ipynb'" not in complete["preview"]  # nothing of b's cells


async def test_only_a_person_credential_answers_an_approval(stack: Stack) -> None:
    """(e) The server token alone: 403. Cookie + XSRF (with or without the page's token): answered. Person token: too."""
    sid = _bound_session(stack, "a.ipynb", "who answers")
    cookies = stack.browser_cookies()
    answers = {}
    with stack.person() as person:
        for n, caller in enumerate(("browser page", "browser cookie only", "person token")):
            run_id = _start(person, sid, run_code_message(f"answered_{n} = True"))
            approval = stack.pending(run_id)
            path = f"runs/{run_id}/approvals/{approval['approval_id']}"
            with stack.bare_server_token() as bare:
                assert bare.post(path, json={"choice": "allow_once"}).status_code == 403
            with stack.as_token("", cookies) as no_xsrf:  # a cross-site form: the cookie alone
                assert no_xsrf.post(path, json={"choice": "allow_once"}).status_code == 403
            if caller == "person token":
                client = stack.person()
            else:  # JupyterLab's page sends the server token beside its cookie and XSRF header
                client = stack.as_token("" if caller == "browser cookie only" else stack.server.token, cookies,
                                        **{"X-XSRFToken": XSRF})
            with client:
                answers[caller] = client.post(path, json={"choice": "allow_once"}).status_code
            rows = stack.finish(run_id)
            assert [p["choice"] for p in resolved(rows, approval["approval_id"])] == ["allow_once"], caller
    assert answers == {"browser page": 200, "browser cookie only": 200, "person token": 200}
    assert [await stack.value_in("a.ipynb", f"answered_{n}") for n in range(3)] == [True, True, True]


async def test_a_new_kernel_of_the_notebook_goes_on_with_its_sessions(stack: Stack) -> None:
    """The binding follows the notebook: a session left bound to the notebook's old (shut down) kernel
    is the new kernel's to list, read and run (which binds it to the new kernel); another notebook's
    kernel still does not see it."""
    with stack.person() as person:
        created = person.post("sessions", json={"title": "before the kernel was replaced", "notebook_path": "a.ipynb",
                                                "kernel_id": "00000000-0000-0000-0000-00000000dead"})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    with stack.kernel("b.ipynb") as other:
        assert sid not in {r["session_id"] for r in other.get("sessions").json()}
        assert other.get(f"sessions/{sid}").status_code == 404
    with stack.kernel("a.ipynb") as kernel:
        assert sid in {r["session_id"] for r in kernel.get("sessions").json()}
        assert kernel.get(f"sessions/{sid}").status_code == 200
        run_id = _start(kernel, sid, "count to 1")
    stack.finish(run_id)
    with stack.person() as person:
        assert person.get(f"sessions/{sid}").json()["kernel_id"] == stack.kernels["a.ipynb"]


async def test_a_persons_run_reaches_the_notebooks_kernel_of_now(stack: Stack) -> None:
    """A sidebar run of a session bound to a notebook whose kernel was replaced (Shut Down Kernel and a
    new one, a server restart) uses the notebook's kernel of now: the binding follows the notebook."""
    with stack.person() as person:
        created = person.post("sessions", json={"title": "bound before the new kernel", "notebook_path": "b.ipynb",
                                                "kernel_id": "00000000-0000-0000-0000-0000000000b0"})
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        run_id = _start(person, sid, "count to 1")
        stack.finish(run_id)
        assert person.get(f"sessions/{sid}").json()["kernel_id"] == stack.kernels["b.ipynb"]
        unbound = person.post("sessions", json={"title": "sees no notebook"}).json()["session_id"]
        stack.finish(_start(person, unbound, "count to 1"))
        assert person.get(f"sessions/{unbound}").json()["kernel_id"] is None
