"""The server is the only source of truth for a finished run: settled message, marker, bundle (docs/api.md).

A recovered cell is byte-identical whether it comes from `GET runs/{id}/bundle`, `POST notebooks/recover`,
`jupyter hermes recover` (the same function, reading the sidecars) or the kernel magic's final render.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from hermes_jupyter import events, markers
from hermes_jupyter.journal import Journals
from hermes_jupyter.notebook.outputs import RUN_MIME, final_bundle, fold_rows
from hermes_jupyter.notebook.recover import recover_notebook_file
from hermes_jupyter.sessions.store import Session, SessionStore

from .client import HermesClient


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


async def test_the_stream_ends_with_the_settled_transcript_and_bundle(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "use a tool")
    rows = await api.stream(run_id)
    assert rows[-1]["event"] == events.DONE
    settled = api.settled[run_id]
    assert (settled["run_id"], settled["session_id"], settled["status"]) == (run_id, sid, "completed")
    kinds = [r["kind"] for r in settled["transcript"]["rows"]]
    assert kinds == ["reasoning", "assistant", "tool", "assistant", "usage"]
    assert settled["transcript"]["last_seq"] == rows[-1]["seq"]
    code, bundle = await api.call("GET", "runs", run_id, "bundle")
    assert code == 200 and bundle == settled["bundle"]
    assert bundle[RUN_MIME] == {"run_id": run_id, "session_id": sid, "seq": rows[-1]["seq"], "status": "completed"}


async def test_the_approved_tool_card_is_done_in_the_settled_transcript(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "please ask for approval")
    approval_id = None
    while approval_id is None:
        page = (await api.call("GET", "runs", run_id, "events"))[1]
        approval_id = next((r["payload"]["approval_id"] for r in page["events"] if r["event"] == events.APPROVAL), None)
    await api.call("POST", "runs", run_id, "approvals", approval_id, body={"choice": "allow_once"})
    await api.stream(run_id)
    rows = api.settled[run_id]["transcript"]["rows"]
    tool = next(r for r in rows if r["kind"] == "tool")
    approval = next(r for r in rows if r["kind"] == "approval")
    assert tool["status"] == "done" and tool["tid"] != approval["approval_id"]
    assert (approval["status"], approval["choice"]) == ("resolved", "allow_once")
    code, session = await api.call("GET", "sessions", sid)
    cards = {c["name"]: c for c in session["tool_calls"]}
    assert cards["terminal"]["done"] is True and cards["approval"]["choice"] == "allow_once"


async def test_run_status_carries_the_marker_of_a_run_that_did_not_complete(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 100000")
    await api.stream(run_id, stop_after=5)
    await api.call("POST", "runs", run_id, "cancel")
    code, status = await api.call("GET", "runs", run_id)
    assert status["status"] == "cancelled"
    assert status["marker"] == {"kind": "marker", "id": f"{run_id}:marker", "variant": "cancelled",
                                "text": markers.CANCEL_CONTENT, "cause": None}
    code, session = await api.call("GET", "sessions", sid)
    assert session["messages"][-1]["content"] == status["marker"]["text"]  # one wording, session and run


def _dead_run(state: Path, sid: str, run_id: str) -> None:
    """A run a previous server process left: a pending session and a journal without a terminal row."""
    journals = Journals(state / "runs")
    for word in ("1", " 2", " 3"):
        journals.append(sid, run_id, events.TOKEN, {"text": word})
    journals.close()
    store = SessionStore(state / "sessions")
    store.save(Session(session_id=sid, pending_user_message="count", active_stream_id=run_id,
                       pending_started_at=time.time() - 3600, last_run_id=run_id))
    store.close()


def _notebook_with_running_cell(path: Path, sid: str, run_id: str) -> None:
    data = {"text/markdown": "1", "text/plain": "1", RUN_MIME: {"run_id": run_id, "session_id": sid, "seq": 1,
                                                                "status": "running"}}
    nb = new_notebook(cells=[new_code_cell("%%hermes\ncount", outputs=[new_output("display_data", data=data)])])
    nbformat.write(nb, path)


async def test_a_dead_run_is_the_same_cell_from_every_writer(api: HermesClient, hermes_state: Path, jp_root_dir: Path) -> None:
    sid, run_id = "dead_session", "dead_run"
    _dead_run(hermes_state, sid, run_id)
    code, bundle = await api.call("GET", "runs", run_id, "bundle")
    assert code == 200 and bundle[RUN_MIME]["status"] == "interrupted"
    assert markers.CAUSE_SENTENCES["server_restart"] in bundle["text/markdown"]
    code, status = await api.call("GET", "runs", run_id)
    assert status["marker"]["cause"] == "server_restart"
    code, session = await api.call("GET", "sessions", sid)
    assert session["messages"][-1]["interruption_cause"] == "server_restart"  # the session agrees

    _notebook_with_running_cell(jp_root_dir / "served.ipynb", sid, run_id)
    code, done = await api.call("POST", "notebooks", "recover", body={"path": "served.ipynb"})
    assert code == 200 and done["cells_recovered"] == 1
    _notebook_with_running_cell(jp_root_dir / "shell.ipynb", sid, run_id)
    assert recover_notebook_file(jp_root_dir / "shell.ipynb", hermes_state) == 1  # `jupyter hermes recover`
    for name in ("served.ipynb", "shell.ipynb"):
        written = nbformat.read(jp_root_dir / name, as_version=4).cells[0].outputs[0]["data"]
        assert dict(written) == bundle, name

    stream = await api.stream(run_id)
    assert [r["seq"] for r in stream] == [1, 2, 3]
    assert api.settled[run_id]["bundle"] == bundle and api.settled[run_id]["status"] == "interrupted"


async def test_the_kernel_final_render_equals_the_bundle_route(api: HermesClient) -> None:
    """The magic renders its final cell from the rows it streamed (terminal row included): the same bytes."""
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "use a tool")
    await api.wait_status(run_id, "completed")
    page = (await api.call("GET", "runs", run_id, "events"))[1]
    local = final_bundle(fold_rows(events.rows_from_json(page["events"]), sid, run_id))
    code, served = await api.call("GET", "runs", run_id, "bundle")
    assert local == served
