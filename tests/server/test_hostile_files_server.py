"""Hostile files and bodies through real servers: nothing planted in the state dir hangs or takes the
server, a linked state folder is refused with a plain message, deep JSON is a 400 (docs/journal.md).

The FIFO and linked-folder cases run a `jupyter server` subprocess (only a real process shows a hang,
a refusal in its log, and whether SIGTERM still ends it); every request has a short deadline, so a
regression fails instead of hanging CI.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import stat
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
from tornado.httpclient import HTTPClientError

from ..server_process import JupyterServerProcess
from .client import HermesClient

REQUEST_S = 10


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _release(fifos: list[Path]) -> None:
    """Give each FIFO a writer for a moment, so a reader the old code left blocked ends."""
    for path in fifos:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


class _Server(JupyterServerProcess):
    """A server subprocess that counts as up once `GET sessions` answers at all (a refused state dir: 503)."""

    def wait_ready(self, timeout_s: float, *, exited: Callable[[], bool], poll_s: float = 0.1) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if exited():
                raise RuntimeError(f"jupyter server exited: {self.log()[-3000:]}")
            try:
                if self.request_quick("GET", "sessions").status_code in (200, 503):
                    return
            except httpx.TransportError:
                pass
            time.sleep(poll_s)
        raise TimeoutError(f"jupyter server did not answer: {self.log()[-3000:]}")

    def request_quick(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, self.url + "hermes/api/" + path, headers={"Authorization": f"token {self.token}"},
                             json=body, timeout=REQUEST_S)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Server]:
    proc = _Server(tmp_path)
    yield proc
    if proc.proc is not None:
        proc.proc.kill()
        proc.proc.wait(10)


def _pending_sidecar(state: Path, sid: str, run_id: str) -> None:
    (state / "sessions").mkdir(parents=True, exist_ok=True)
    (state / "sessions" / f"{sid}.json").write_text(json.dumps({
        "session_id": sid, "title": "pending", "active_stream_id": run_id, "pending_user_message": "count to 3",
        "pending_started_at": time.time() - 600,
    }))


def test_fifos_as_sidecar_index_and_journal_answer_at_once_and_sigterm_still_stops_the_server(
    server: _Server,
) -> None:
    state = server.state_dir
    fifos = [_fifo(state / "sessions" / "planted.json"), _fifo(state / "sessions" / "_index.json")]
    _pending_sidecar(state, "pending", "r1")
    fifos.append(_fifo(state / "runs" / "pending" / "r1.jsonl"))
    try:
        server.start(timeout_s=60)
        listing = server.request_quick("GET", "sessions")
        assert listing.status_code == 200, listing.text
        rows = {r["session_id"]: r for r in listing.json()}
        assert rows["planted"]["corrupt"] is True and "pending" in rows
        opened = server.request_quick("GET", "sessions/planted")
        assert opened.status_code == 409 and "cannot be read" in opened.json()["message"]
        assert server.request_quick("GET", "sessions/pending").status_code == 200
        for path in ("runs/r1", "runs/r1/events", "runs/r1/bundle"):  # a FIFO is no journal: plain, prompt answers
            answer = server.request_quick("GET", path)
            assert answer.status_code in (200, 404, 409) and answer.json(), answer.text
        assert server.request_quick("DELETE", "sessions/planted?corrupt=1").status_code == 204
        assert not os.path.lexists(state / "sessions" / "planted.json")
        assert server.request_quick("GET", "sessions").status_code == 200
        assert server.signal(signal.SIGTERM, timeout_s=30) == 0
    finally:
        _release(fifos)


@pytest.mark.parametrize("folder", ["runs", "sessions"])
def test_a_linked_state_folder_is_refused_at_start_with_a_plain_message_and_never_followed(
    server: _Server, tmp_path: Path, folder: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".deleted-x").mkdir(parents=True)
    (elsewhere / ".deleted-x" / "precious").write_text("keep me")
    (elsewhere / "s1.json").write_text(json.dumps({"session_id": "s1", "title": "elsewhere"}))
    server.state_dir.mkdir(parents=True)
    (server.state_dir / folder).symlink_to(elsewhere)
    server.start(timeout_s=60)
    answers = [
        server.request_quick("GET", "sessions"), server.request_quick("POST", "sessions", {}),
        server.request_quick("GET", "sessions/s1"), server.request_quick("PATCH", "sessions/s1", {"title": "x"}),
        server.request_quick("DELETE", "sessions/s1?corrupt=1"), server.request_quick("GET", "runs/r1/events"),
    ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        body = answer.json()
        assert f"'{folder}' is a link" in body["message"] and "restart" in body["message"], body
        assert str(elsewhere) not in answer.text, "the layout of the server stays in the log"
    with pytest.raises(HTTPClientError) as refused:  # the WebSocket: refused before its upgrade, in the same words
        asyncio.run(asyncio.wait_for(server.open_stream("r1"), REQUEST_S))
    assert refused.value.code == 503 and "is a link" in json.loads(refused.value.response.body)["message"]
    assert server.signal(signal.SIGTERM, timeout_s=30) == 0
    log = server.log()
    assert any(line.startswith("[E ") and "HermesJupyter" in line and f"{folder} is a symbolic link" in line
               for line in log.splitlines()), log[-3000:]
    assert sorted(os.listdir(elsewhere)) == [".deleted-x", "s1.json"]
    assert (elsewhere / ".deleted-x" / "precious").read_text() == "keep me"


# -- in-process server (pytest-jupyter) ---------------------------------------------------------------------
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 200 + "1" + "}" * 200


async def test_deeply_nested_bodies_are_a_plain_400_on_every_post_and_patch_route(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    routes = [
        ("POST", ("sessions",)), ("PATCH", ("sessions", sid)), ("POST", ("sessions", sid, "runs")),
        ("POST", ("sessions", sid, "continue")), ("POST", ("runs", "r1", "approvals", "a1")),
        ("POST", ("runs", "r1", "clarify", "c1")), ("POST", ("runs", "r1", "proposals", "p1")),
        ("POST", ("notebooks", "recover")),
    ]
    for method, path in routes:
        for body in (DEEP, DEEP_OBJECT):
            code, err = await api.call(method, *path, body=body)
            assert code == 400, (method, path, code, err)
            assert "nested too deeply" in err["message"], err


async def _sealed(state: Path, sid: str, run_id: str) -> Path:
    folder = state / "runs" / sid
    for _ in range(500):
        if (folder / f"{run_id}.jsonl.gz").exists() and not (folder / f"{run_id}.jsonl").exists():
            return folder / f"{run_id}.jsonl.gz"
        await asyncio.sleep(0.02)
    raise AssertionError(f"journal of {run_id} was not sealed")


async def test_a_damaged_sealed_journal_is_the_same_plain_409_on_rest_and_on_the_websocket(
    api: HermesClient, hermes_state: Path, hermes: Any
) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 30")
    await api.wait_status(run_id, "completed")
    sealed = await _sealed(hermes_state, sid, run_id)
    sealed.write_bytes(gzip.compress(b"x" * 200_000)[:-40])  # cut short: the stream is damaged
    hermes.journals._sealed.clear()  # forget the summary read while it was whole
    code, rest = await api.call("GET", "runs", run_id, "events")
    assert code == 409 and "damaged" in rest["message"], rest
    with pytest.raises(HTTPClientError) as caught:
        await api.ws_fetch("hermes", "api", "runs", run_id, "stream")
    assert caught.value.code == 409, caught.value
    body = json.loads(caught.value.response.body)
    assert body["message"] == rest["message"]


async def test_a_file_in_place_of_a_sessions_journal_folder_is_a_plain_409_and_deletable(
    api: HermesClient, hermes_state: Path
) -> None:
    sid = (await api.create_session())["session_id"]
    (hermes_state / "runs").mkdir(parents=True, exist_ok=True)
    (hermes_state / "runs" / sid).write_text("not a folder")
    code, err = await api.call("POST", "sessions", sid, "runs", body={"message": "count to 3"})
    assert code == 409 and "not a plain file" in err["message"], err
    assert (await api.call("GET", "sessions", sid))[0] == 200
    assert (await api.call("DELETE", "sessions", sid, corrupt="1"))[0] == 204
    assert not os.path.lexists(hermes_state / "runs" / sid)
    assert (await api.call("GET", "sessions", sid))[0] == 404


@pytest.mark.parametrize("kind", ["folder", "device"])
async def test_a_folder_or_device_as_sidecar_is_a_plain_409_listed_corrupt_and_deletable_with_the_flag(
    api: HermesClient, hermes_state: Path, hermes: Any, kind: str
) -> None:
    await api.create_session(title="good")
    planted = hermes_state / "sessions" / "planted.json"
    if kind == "folder":
        planted.mkdir()
        (planted / "inside.json").write_text("{}")
    else:
        try:  # /dev/zero's numbers: read whole, it never ends
            os.mknod(planted, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
        except PermissionError:
            pytest.skip("creating a device node needs CAP_MKNOD")
    hermes.store._index = None
    hermes.store._reconciled.clear()
    code, rows = await asyncio.wait_for(api.call("GET", "sessions"), REQUEST_S)
    assert code == 200 and {r["session_id"]: r for r in rows}["planted"]["corrupt"] is True
    code, err = await asyncio.wait_for(api.call("GET", "sessions", "planted"), REQUEST_S)
    assert code == 409 and "cannot be read" in err["message"]
    assert (await api.call("DELETE", "sessions", "planted"))[0] == 409
    assert (await api.call("DELETE", "sessions", "planted", corrupt="1"))[0] == 204
    assert not os.path.lexists(planted)
