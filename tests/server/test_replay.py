"""Joining a run in one message (`?snapshot=1`, runs/catchup.py): a settled run is its settled message
alone, a live run a snapshot then the rows after it; the old form (`after_seq`) still streams every row."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tornado.httpclient import HTTPClientError

from .client import HermesClient


async def _messages(api: HermesClient, run_id: str, **params: str) -> list[tuple[dict[str, Any], int]]:
    """Every message of a stream (heartbeats left out) with its size in bytes, until it closes."""
    ws = await api.ws_fetch("hermes", "api", "runs", run_id, "stream", params=params)
    out: list[tuple[dict[str, Any], int]] = []
    try:
        while (message := await asyncio.wait_for(ws.read_message(), 30)) is not None:
            data = json.loads(message)
            if data.get("type") != "heartbeat":
                out.append((data, len(message.encode())))
    finally:
        ws.close()
    return out


def _answer(rows: list[dict[str, Any]]) -> str:
    return "\n".join(row["text"] for row in rows if row["kind"] == "assistant")


async def test_a_settled_run_rejoins_as_its_settled_message_alone(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 3000")
    await api.wait_status(run_id, "completed")
    old = await _messages(api, run_id, after_seq="0")
    assert len(old) == 3000 + 3  # one frame per journal row (tokens, usage, done), then the settled message
    new = await _messages(api, run_id, after_seq="0", snapshot="1")
    assert len(new) == 1, [m for m, _ in new][:3]
    (settled, size), = new
    text = " ".join(map(str, range(1, 3001)))
    assert settled["settled"] is True and settled["status"] == "completed"
    assert _answer(settled["transcript"]["rows"]) == text
    assert size <= 3 * len(text) + 4096
    assert size < sum(n for _, n in old) / 3


async def test_a_client_missing_a_few_rows_gets_the_rows_and_one_missing_many_the_run(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 3000")
    await api.wait_status(run_id, "completed")
    few = [m for m, _ in await _messages(api, run_id, after_seq="2990", snapshot="1")]
    assert [m["seq"] for m in few[:-1]] == list(range(2991, 3003)) and few[-1]["settled"] is True
    many = [m for m, _ in await _messages(api, run_id, after_seq="10", snapshot="1")]
    assert len(many) == 1 and many[0]["settled"] is True


async def test_a_live_run_rejoins_as_one_snapshot_then_the_rows_after_it(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 1500")
    while (await api.call("GET", "runs", run_id))[1]["last_seq"] < 300:
        await asyncio.sleep(0.02)
    messages = [m for m, _ in await _messages(api, run_id, snapshot="1")]
    snapshot, rows, settled = messages[0], messages[1:-1], messages[-1]
    assert snapshot["type"] == "snapshot" and snapshot["run_id"] == run_id and snapshot["session_id"] == sid
    covered = snapshot["last_seq"]
    assert covered >= 300 and snapshot["rows"] == [] and snapshot["open"]["n"] == 0
    assert [r["seq"] for r in rows] == list(range(covered + 1, covered + 1 + len(rows)))
    assert rows[-1]["event"] == "done" and settled["settled"] is True
    # The open segment's raw text and the tokens after it are the answer, as the server folded it.
    text = snapshot["open"]["text"] + "".join(r["payload"].get("text", "") for r in rows if r["event"] == "token")
    assert text.strip() == _answer(settled["transcript"]["rows"]) == " ".join(map(str, range(1, 1501)))


async def test_a_bad_snapshot_flag_is_a_plain_400(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 3")
    await api.wait_status(run_id, "completed")
    try:
        await api.ws_fetch("hermes", "api", "runs", run_id, "stream", params={"snapshot": "yes"})
    except HTTPClientError as err:
        assert err.code == 400 and err.response is not None
        assert "snapshot" in json.loads(err.response.body)["message"]
    else:
        raise AssertionError("the stream took snapshot=yes")
