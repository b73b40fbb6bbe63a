"""Every route of docs/api.md through a real jupyter_server, under a non-root base_url, with auth on."""

from __future__ import annotations

import asyncio

from typing import Any

import pytest

from .client import HermesClient


async def test_base_url_is_not_root(jp_base_url: str) -> None:
    assert jp_base_url != "/"


async def test_session_crud(api: HermesClient) -> None:
    first = await api.create_session(title="first")
    second = await api.create_session(title="second", notebook_path="nb/a.ipynb", kernel_id="k1", cell_id="c1")
    assert second["notebook_path"] == "nb/a.ipynb" and second["kernel_id"] == "k1"
    code, listing = await api.call("GET", "sessions")
    assert code == 200
    assert [s["session_id"] for s in listing][:2] == [second["session_id"], first["session_id"]]
    code, filtered = await api.call("GET", "sessions", notebook_path="nb/a.ipynb")
    assert [s["session_id"] for s in filtered] == [second["session_id"]]
    code, renamed = await api.call("PATCH", "sessions", first["session_id"], body={"title": "renamed"})
    assert code == 200 and renamed["title"] == "renamed"
    code, full = await api.call("GET", "sessions", first["session_id"])
    assert code == 200 and full["title"] == "renamed" and full["messages"] == []
    code, _ = await api.call("DELETE", "sessions", first["session_id"])
    assert code == 204
    code, err = await api.call("GET", "sessions", first["session_id"])
    assert code == 404 and "message" in err


async def test_patch_switches_model_and_rebinds_the_session_for_its_next_turns(api: HermesClient) -> None:
    sid = (await api.create_session(title="t"))["session_id"]
    code, edited = await api.call("PATCH", "sessions", sid,
                                  body={"model": "gpt-x", "notebook_path": "nb/b.ipynb", "kernel_id": "k-2"})
    assert code == 200 and edited["model"] == "gpt-x" and edited["notebook_path"] == "nb/b.ipynb", edited
    assert edited["title"] == "t" and edited["kernel_id"] == "k-2"
    code, unbound = await api.call("PATCH", "sessions", sid, body={"notebook_path": None, "kernel_id": ""})
    assert code == 200 and unbound["notebook_path"] is None and unbound["kernel_id"] is None
    assert unbound["model"] == "gpt-x"
    assert (await api.call("PATCH", "sessions", sid, body={}))[0] == 400
    assert (await api.call("PATCH", "sessions", sid, body={"title": "  "}))[0] == 400
    assert (await api.call("PATCH", "sessions", sid, body={"kernel_id": "../k"}))[0] == 400


async def test_run_streams_over_websocket_and_settles(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 30")
    rows = await api.stream(run_id)
    assert [r["seq"] for r in rows] == list(range(1, 33))  # 30 tokens, usage, done
    assert rows[-2]["event"] == "usage" and rows[-2]["payload"]["model"] == "demo"
    assert rows[-1]["event"] == "done" and rows[-1]["event_id"] == f"{run_id}:32"
    assert "".join(r["payload"].get("text", "") for r in rows) == " ".join(map(str, range(1, 31)))
    status = await api.wait_status(run_id, "completed")
    assert status == {"run_id": run_id, "session_id": sid, "status": "completed", "last_seq": 32, "marker": None}
    code, session = await api.call("GET", "sessions", sid)
    assert [m["role"] for m in session["messages"]] == ["user", "assistant"]


async def test_stream_resumes_from_a_cursor_with_no_gap_or_duplicate(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 200")
    first = await api.stream(run_id, stop_after=25)
    resumed = await api.stream(run_id, after_seq=first[-1]["seq"])
    seqs = [r["seq"] for r in first + resumed]
    assert seqs == list(range(1, 203))
    replay = await api.stream(run_id, after_seq=150)  # a finished run is replayed from the journal, then closed
    assert [r["seq"] for r in replay] == list(range(151, 203))


async def test_events_route_pages_through_the_journal(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 40")
    await api.wait_status(run_id, "completed")
    code, page = await api.call("GET", "runs", run_id, "events", after_seq="10", limit="5")
    assert code == 200
    assert [e["seq"] for e in page["events"]] == [11, 12, 13, 14, 15]
    assert page["next_seq"] == 15 and page["terminal"] is False
    code, rest = await api.call("GET", "runs", run_id, "events", after_seq="15")
    assert rest["events"][-1]["event"] == "done" and rest["terminal"] is True


async def test_second_run_while_active_is_queued_and_cancel_keeps_partial(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 100000")
    await api.stream(run_id, stop_after=10)
    code, queued = await api.call("POST", "sessions", sid, "runs", body={"message": "again"})
    assert code == 202 and queued["queued"] is True and queued["session_id"] == sid
    code, listed = await api.call("GET", "sessions", sid)
    assert [q["run_id"] for q in listed["queued"]] == [queued["run_id"]]
    code, status = await api.call("GET", "runs", queued["run_id"])
    assert code == 200 and status["status"] == "queued"
    code, dropped = await api.call("POST", "runs", queued["run_id"], "cancel")
    assert code == 200 and dropped["cancelled"] is True and dropped["queued"] is True
    code, steer = await api.call("POST", "sessions", sid, "runs", body={"message": "faster", "mode": "steer"})
    assert code == 409 and "cannot take a message" in steer["message"]  # the demo agent cannot steer
    assert (await api.call("POST", "sessions", sid, "runs", body={"message": "x", "mode": "shout"}))[0] == 400
    code, cancelled = await api.call("POST", "runs", run_id, "cancel")
    assert code == 200 and cancelled["cancelled"] is True and cancelled["status"] == "cancelled"
    code, session = await api.call("GET", "sessions", sid)
    assert any(m.get("_partial") and m["content"].startswith("1 2 3") for m in session["messages"])
    assert session["messages"][-1]["type"] == "cancelled"
    rows = await api.stream(run_id)
    assert rows[-1]["event"] == "cancel"


async def test_a_kernel_reporting_its_restart_ends_the_run_interrupted_not_cancelled(api: HermesClient) -> None:
    """A kernel the server did not start (nbclient's) reports its own restart: partial kept, restart marker."""
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 100000")
    await api.stream(run_id, stop_after=10)
    code, err = await api.call("POST", "runs", run_id, "cancel", body={"cause": "server_shutdown"})
    assert code == 400 and "kernel restart" in err["message"]
    code, stopped = await api.call("POST", "runs", run_id, "cancel", body={"cause": "kernel_restart"})
    assert code == 200 and stopped["cancelled"] is True and stopped["status"] == "interrupted"
    code, session = await api.call("GET", "sessions", sid)
    marker = session["messages"][-1]
    assert marker["type"] == "interrupted" and marker["interruption_cause"] == "kernel_restart"
    assert any(m.get("content", "").startswith("1 2 3") for m in session["messages"][:-1])


async def test_retry_and_undo(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    await api.wait_status(await api.start(sid, "count to 3"), "completed")
    code, data = await api.call("POST", "sessions", sid, "retry")
    assert code == 202
    await api.wait_status(data["run_id"], "completed")
    code, session = await api.call("GET", "sessions", sid)
    assert [m["content"] for m in session["messages"]] == ["count to 3", "1 2 3"]
    code, session = await api.call("POST", "sessions", sid, "undo")
    assert code == 200 and session["messages"] == []
    code, err = await api.call("POST", "sessions", sid, "undo")
    assert code == 409


@pytest.mark.parametrize("bad", ["a b", "x" * 65, "dot.dot", "%2E%2E"])
async def test_bad_ids_are_400(api: HermesClient, bad: str) -> None:
    for path in (("sessions", bad), ("runs", bad), ("runs", bad, "events")):
        code, err = await api.call("GET", *path)
        assert code == 400, (path, code, err)
        assert "invalid" in err["message"]


async def test_unknown_ids_are_404(api: HermesClient) -> None:
    assert (await api.call("GET", "sessions", "nope"))[0] == 404
    assert (await api.call("GET", "runs", "nope"))[0] == 404
    assert (await api.call("POST", "runs", "nope", "cancel"))[0] == 404
    assert (await api.call("POST", "sessions", "nope", "runs", body={"message": "hi"}))[0] == 404


async def test_bad_bodies_are_400_and_huge_ones_413(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    assert (await api.call("POST", "sessions", sid, "runs", body="{not json"))[0] == 400
    assert (await api.call("POST", "sessions", sid, "runs", body={"message": ""}))[0] == 400
    assert (await api.call("POST", "sessions", sid, "runs", body={"message": "x", "attachments": "no"}))[0] == 400
    assert (await api.call("POST", "sessions", body={"backend": "nonexistent"}))[0] == 400
    code, err = await api.call("POST", "sessions", sid, "runs", body={"message": "x" * (2 << 20)})
    assert code == 413, err
    assert (await api.call("PATCH", "sessions", sid, body={"title": 5}))[0] == 400


async def test_notebook_recover_refuses_paths_outside_the_root(api: HermesClient) -> None:
    code, err = await api.call("POST", "notebooks", "recover", body={"path": "../../etc/passwd.ipynb"})
    assert code == 400 and "escapes" in err["message"]
    code, err = await api.call("POST", "notebooks", "recover", body={"path": "missing.ipynb"})
    assert code == 404


async def test_unauthenticated_requests_are_refused(jp_fetch: Any) -> None:
    from tornado.httpclient import HTTPClientError

    for method, path in (("GET", "sessions"), ("POST", "sessions"), ("GET", "runs/x"), ("POST", "notebooks/recover")):
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch("hermes", "api", *path.split("/"), method=method,
                           body="{}" if method == "POST" else None, headers={"Authorization": ""})
        assert info.value.code in (401, 403), (method, path, info.value.code)


async def test_kernel_restart_interrupts_runs_bound_to_that_kernel(api: HermesClient, jp_fetch: Any) -> None:
    import json

    kernel = json.loads((await jp_fetch("api", "kernels", method="POST", body="{}")).body)
    other = await api.create_session()
    bound = await api.create_session(notebook_path="a.ipynb")
    bound_run = await api.start(bound["session_id"], "count to 100000", kernel_id=kernel["id"], cell_id="cell-1")
    free_run = await api.start(other["session_id"], "count to 100000")
    await api.stream(bound_run, stop_after=5)
    await jp_fetch("api", "kernels", kernel["id"], "restart", method="POST", body="{}")
    status = await api.wait_status(bound_run, "interrupted")
    assert status["status"] == "interrupted"
    code, session = await api.call("GET", "sessions", bound["session_id"])
    assert session["messages"][-1]["interruption_cause"] == "kernel_restart"
    assert session["messages"][-2]["content"].startswith("1 2 3")
    assert session["kernel_id"] == kernel["id"] and session["cell_id"] == "cell-1"
    assert (await api.call("GET", "runs", free_run))[1]["status"] == "running"
    await api.call("POST", "runs", free_run, "cancel")
    await jp_fetch("api", "kernels", kernel["id"], method="DELETE")



async def test_approval_is_journaled_and_answered_through_the_api(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "please ask for approval first")
    rows = []
    while not any(r["event"] == "approval" for r in rows):
        code, page = await api.call("GET", "runs", run_id, "events")
        rows = page["events"]
        await asyncio.sleep(0.02)
    pending = next(r["payload"] for r in rows if r["event"] == "approval")
    assert pending["status"] == "pending" and pending["options"] == ["allow_once", "deny"]
    path = ("runs", run_id, "approvals", pending["approval_id"])
    assert (await api.call("POST", *path, body={"choice": "sudo"}))[0] == 400
    code, answered = await api.call("POST", *path, body={"choice": "allow_once"})
    assert code == 200 and answered["choice"] == "allow_once"
    assert (await api.call("POST", *path, body={"choice": "deny"}))[0] == 409  # already answered
    await api.wait_status(run_id, "completed")
    code, page = await api.call("GET", "runs", run_id, "events")
    resolved = [r["payload"] for r in page["events"] if r["event"] == "approval"][-1]
    by = resolved.pop("answered_by")  # the person token's user (tests/server/test_answered_by.py names people)
    assert by["kind"] == "person"
    assert resolved == {"approval_id": pending["approval_id"], "status": "resolved", "choice": "allow_once", "reason": "answered"}
    code, session = await api.call("GET", "sessions", sid)
    assert "Approved" in session["messages"][-1]["content"]


async def test_notebook_recover_refuses_a_notebook_open_with_a_kernel_session(
    api: HermesClient, jp_fetch: Any, jp_root_dir: Any
) -> None:
    import json

    import nbformat

    nbformat.write(nbformat.v4.new_notebook(), jp_root_dir / "open.ipynb")
    code, done = await api.call("POST", "notebooks", "recover", body={"path": "open.ipynb"})
    assert code == 200 and done == {"path": "open.ipynb", "cells_recovered": 0, "shared": False}
    session = json.loads((await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": "open.ipynb", "type": "notebook", "kernel": {"name": "python3"}}))).body)
    code, err = await api.call("POST", "notebooks", "recover", body={"path": "open.ipynb"})
    assert code == 409 and "force" in err["message"]
    code, done = await api.call("POST", "notebooks", "recover", body={"path": "open.ipynb", "force": True})
    assert code == 200
    await jp_fetch("api", "sessions", session["id"], method="DELETE")
