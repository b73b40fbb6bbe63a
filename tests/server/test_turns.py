"""Stored turns through the real server: a reload (after a restart) shows past turns' rows, and a run's
bundle says what the user decided about its proposal by every path (docs/transcript.md, "Stored turns")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Iterator

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from hermes_jupyter.notebook.outputs import RUN_MIME
from hermes_jupyter.notebook.recover import recover_notebook_file
from hermes_jupyter.notebook.shared import unfinished
from hermes_jupyter.server import rooms

from ..server_process import JupyterServerProcess
from .client import HermesClient

ACCEPTED = "Accepted by"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[JupyterServerProcess]:
    process = JupyterServerProcess(tmp_path, token_delay=0.002).start()
    try:
        yield process
    finally:
        process.stop()


def _wait(server: JupyterServerProcess, run_id: str, *statuses: str) -> None:
    deadline = time.monotonic() + 30
    while server.get(f"runs/{run_id}").json()["status"] not in statuses:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_reload_after_a_restart_shows_past_plans_usage_and_markers(server: JupyterServerProcess) -> None:
    sid = server.new_session()
    planned = server.start_run(sid, "make a plan")
    _wait(server, planned, "completed")
    stopped = server.start_run(sid, "count to 100000")
    while server.get(f"runs/{stopped}").json()["last_seq"] < 5:
        time.sleep(0.02)
    assert server.post(f"runs/{stopped}/cancel").status_code in (200, 202)
    _wait(server, stopped, "cancelled")

    server.restart()
    session = server.get(f"sessions/{sid}").json()
    first, second = session["turns"]
    assert (first["run_id"], first["status"], second["run_id"], second["status"]) == (
        planned, "completed", stopped, "cancelled")
    kinds = [row["kind"] for row in first["rows"]]
    assert "plan" in kinds and kinds[-1] == "usage" and first["user"]["text"] == "make a plan"
    plan = next(row for row in first["rows"] if row["kind"] == "plan")
    assert [item["status"] for item in plan["items"]] == ["completed"] * 3
    assert second["rows"][-1]["kind"] == "marker" and second["rows"][-1]["variant"] == "cancelled"
    journal = server.get(f"runs/{planned}/events", limit=1000).json()["events"]
    assert first["last_seq"] == journal[-1]["seq"]


def _mid_run_notebook(path: Path, sid: str, run_id: str) -> None:
    """A notebook saved while the run streamed: its output still says running."""
    output = new_output("display_data", data={
        RUN_MIME: {"run_id": run_id, "session_id": sid, "seq": 1, "status": "running"},
        "text/markdown": "…", "text/plain": "…",
    })
    nbformat.write(new_notebook(cells=[new_code_cell("%%hermes\npropose a cell", outputs=[output])]), path)


def _markdown(path: Path) -> str:
    (output,) = nbformat.read(path, as_version=4).cells[0].outputs
    assert output["data"][RUN_MIME]["status"] == "completed"
    return str(output["data"]["text/markdown"])


async def test_an_accepted_proposal_reads_accepted_by_every_bundle_path(
    api: HermesClient, hermes: Any, hermes_state: Path, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "propose a cell", notebook_path="analysis.ipynb")
    await api.wait_status(run_id, "completed")
    events = (await api.call("GET", "runs", run_id, "events"))[1]["events"]
    pid = next(r["payload"]["proposal_id"] for r in events if r["event"] == "proposal")
    assert (await api.call("POST", "runs", run_id, "proposals", pid, body={"decision": "accepted"}))[0] == 200

    _, session = await api.call("GET", "sessions", sid)  # the stored turn carries the decision
    row = next(r for r in session["turns"][-1]["rows"] if r["kind"] == "proposal")
    assert row["status"] == "accepted" and row["answered_by"]["kind"] == "person"
    _, bundle = await api.call("GET", "runs", run_id, "bundle")  # the route JupyterLab writes
    assert ACCEPTED in bundle["text/markdown"]
    await api.stream(run_id)  # the stream's settled message
    assert ACCEPTED in api.settled[run_id]["bundle"]["text/markdown"]
    assert api.settled[run_id]["user"]["text"] == "propose a cell"

    _mid_run_notebook(jp_root_dir / "by-api.ipynb", sid, run_id)  # POST notebooks/recover (the file)
    code, answer = await api.call("POST", "notebooks", "recover", body={"path": "by-api.ipynb"})
    assert code == 200 and answer["cells_recovered"] == 1
    assert _markdown(jp_root_dir / "by-api.ipynb") == bundle["text/markdown"]

    _mid_run_notebook(jp_root_dir / "by-cli.ipynb", sid, run_id)  # what `jupyter hermes recover` runs
    assert recover_notebook_file(jp_root_dir / "by-cli.ipynb", hermes_state) == 1
    assert _markdown(jp_root_dir / "by-cli.ipynb") == bundle["text/markdown"]

    ydoc = pytest.importorskip("jupyter_ydoc")  # the room's shared document
    monkeypatch.setattr(rooms, "FOLLOWER_GRACE_S", 0.0)
    doc = ydoc.YNotebook()
    _mid_run_notebook(jp_root_dir / "room.ipynb", sid, run_id)
    doc.set(nbformat.read(jp_root_dir / "room.ipynb", as_version=4))
    found = await asyncio.to_thread(rooms._bundles, unfinished(doc), hermes.journals, lambda s, r: False,
                                    hermes.recovery.verdict)
    assert found[run_id][1]["text/markdown"] == bundle["text/markdown"]


async def test_every_socket_watching_a_run_end_gets_the_one_stored_turn_from_one_fold(
    api: HermesClient, hermes: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hermes_jupyter.transcript.fold import TranscriptFold

    folds: list[str] = []
    feed = TranscriptFold.feed_chunks

    def counted(self: TranscriptFold, chunks: Any) -> None:
        folds.append(self.run_id)
        feed(self, chunks)

    monkeypatch.setattr(TranscriptFold, "feed_chunks", counted)
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "make a plan")
    clients = [HermesClient(api.fetch, api.ws_fetch) for _ in range(3)]
    await asyncio.gather(*(client.stream(run_id) for client in clients))
    settled = [client.settled[run_id] for client in clients]
    assert folds.count(run_id) == 1  # settle folded the journal once; no socket folded it again
    assert settled[0] == settled[1] == settled[2]
    _, session = await api.call("GET", "sessions", sid)
    turn = session["turns"][-1]
    assert settled[0]["transcript"]["rows"] == turn["rows"] and settled[0]["user"] == turn["user"]
