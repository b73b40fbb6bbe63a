"""Odd state on disk and odd input: wrong-typed files, planted links, failed saves, edge counts, pages.

Every case goes through the real server: the answer is a 4xx with a plain
message, never a 500, and nothing valid is lost or rewritten.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from .client import HermesClient

WRONG_TYPED = [
    {"messages": 5}, {"messages": [1, "x"]}, {"updated_at": "yesterday"}, {"title": None},
    {"active_stream_id": 7}, {"pending_attachments": {"a": 1}},
]


def _sidecar(state: Path, sid: str) -> Path:
    return state / "sessions" / f"{sid}.json"


def _plant(state: Path, sid: str, data: Any) -> None:
    _sidecar(state, sid).write_text(json.dumps(data))


async def _listing_after_restart(api: HermesClient, hermes: Any) -> dict[str, dict[str, Any]]:
    """The listing as a restarted server shows it: the saved index re-read and checked against the sidecars."""
    hermes.store.flush_index()
    hermes.store._index = None
    hermes.store._reconciled.clear()
    await _listing(api)
    assert hermes.store.wait_reconciled()
    return await _listing(api)


async def _listing(api: HermesClient) -> dict[str, dict[str, Any]]:
    code, rows = await api.call("GET", "sessions")
    assert code == 200, rows
    return {r["session_id"]: r for r in rows}


@pytest.mark.parametrize("bad", WRONG_TYPED + [[1, "x"], 5])
async def test_a_wrong_typed_sidecar_is_listed_corrupt_refused_on_open_and_deletable_with_the_flag(
    api: HermesClient, hermes_state: Path, bad: Any, hermes: Any
) -> None:
    good = await api.create_session(title="good")
    data = {"session_id": "planted", "title": "x", **bad} if isinstance(bad, dict) else bad
    _plant(hermes_state, "planted", data)
    rows = await _listing_after_restart(api, hermes)
    assert rows["planted"]["corrupt"] is True and rows[good["session_id"]]["title"] == "good"
    code, err = await api.call("GET", "sessions", "planted")
    assert code == 409 and "cannot be read" in err["message"]
    assert (await api.call("DELETE", "sessions", "planted"))[0] == 409
    assert _sidecar(hermes_state, "planted").exists(), "left in place without the flag"
    assert (await api.call("DELETE", "sessions", "planted", corrupt="1"))[0] == 204
    assert not _sidecar(hermes_state, "planted").exists()
    assert set(await _listing(api)) == {good["session_id"]}


async def test_a_wrong_typed_index_row_is_rebuilt_from_the_sidecars(
    api: HermesClient, hermes_state: Path, hermes: Any
) -> None:
    sids = [(await api.create_session(title=f"s{i}"))["session_id"] for i in range(3)]
    hermes.store.flush_index()
    index_path = hermes_state / "sessions" / "_index.json"
    index = json.loads(index_path.read_text())
    index[sids[0]]["updated_at"] = "yesterday"
    index[sids[1]] = 5
    index_path.write_text(json.dumps(index))
    hermes.store._index = None
    assert set(await _listing(api)) == set(sids), "a bad row voids the index: rebuilt before answering"


async def test_a_symlinked_runs_folder_is_never_followed_on_delete_or_by_a_new_run(
    api: HermesClient, hermes_state: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.jsonl").write_text("keep me\n")
    sid = (await api.create_session())["session_id"]
    (hermes_state / "runs").mkdir(parents=True, exist_ok=True)
    os.symlink(outside, hermes_state / "runs" / sid)
    code, err = await api.call("POST", "sessions", sid, "runs", body={"message": "count to 3"})
    assert code == 409 and "link" in err["message"]
    assert sorted(os.listdir(outside)) == ["precious.jsonl"], "no journal written through the link"
    assert (await api.call("DELETE", "sessions", sid))[0] == 204
    assert (outside / "precious.jsonl").read_text() == "keep me\n"
    assert not os.path.lexists(hermes_state / "runs" / sid)
    assert (await api.call("GET", "sessions", sid))[0] == 404


async def test_a_symlinked_sidecar_is_corrupt_and_its_target_never_read(
    api: HermesClient, hermes_state: Path, tmp_path: Path, hermes: Any
) -> None:
    target = tmp_path / "secret.json"
    target.write_text(json.dumps({"session_id": "linked", "title": "SECRET-TITLE"}))
    await api.create_session()
    os.symlink(target, _sidecar(hermes_state, "linked"))
    rows = await _listing_after_restart(api, hermes)
    assert rows["linked"]["corrupt"] is True and "SECRET" not in json.dumps(rows)
    assert (await api.call("GET", "sessions", "linked"))[0] == 409
    assert (await api.call("DELETE", "sessions", "linked", corrupt="1"))[0] == 204
    assert target.exists()


async def test_delete_is_all_or_nothing_when_removing_the_sidecar_fails(
    api: HermesClient, hermes_state: Path, hermes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = (await api.create_session())["session_id"]
    await api.wait_status(await api.start(sid, "count to 3"), "completed")
    hermes.manager.sealer.submit(lambda: None).result(10)  # the finished journal is sealed (or left) by now
    before = sorted(os.listdir(hermes_state / "runs" / sid))

    def refuse(path: Any, *args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("hermes_jupyter.sessions.store.os.unlink", refuse)
    code, _ = await api.call("DELETE", "sessions", sid)
    assert code == 500
    monkeypatch.undo()
    assert sorted(os.listdir(hermes_state / "runs" / sid)) == before, "journals put back"
    code, session = await api.call("GET", "sessions", sid)
    assert code == 200 and [m["content"] for m in session["messages"]] == ["count to 3", "1 2 3"]


async def test_a_failed_save_leaves_the_session_as_it_was(
    api: HermesClient, hermes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = (await api.create_session(title="before"))["session_id"]

    def fail(path: Any, data: bytes) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr("hermes_jupyter.sessions.store.atomic_write", fail)
    code, _ = await api.call("PATCH", "sessions", sid, body={"title": "after"})
    assert code == 500
    assert hermes.store.cached(sid) is None or hermes.store.cached(sid).title == "before"
    monkeypatch.undo()
    code, session = await api.call("GET", "sessions", sid)
    assert code == 200 and session["title"] == "before"
    await api.wait_status(await api.start(sid, "count to 2"), "completed")


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "nul\x00byte"])
async def test_text_that_cannot_be_stored_is_refused_with_400(api: HermesClient, text: str) -> None:
    sid = (await api.create_session(title="ok"))["session_id"]
    body = json.dumps({"title": text})  # json.dumps writes lone surrogates as \\ud800 escapes
    for method, path, payload in (
        ("POST", ("sessions",), body), ("PATCH", ("sessions", sid), body),
        ("POST", ("sessions", sid, "runs"), json.dumps({"message": text})),
    ):
        code, err = await api.call(method, *path, body=payload)
        assert code == 400, (method, path, err)
        assert "cannot be stored" in err["message"]
    code, session = await api.call("GET", "sessions", sid)
    assert code == 200 and session["title"] == "ok"


@pytest.mark.parametrize("bad", ["²", "-1", "1.5", "", "x", "9" * 30])
async def test_counts_must_be_ascii_integers_in_range(api: HermesClient, bad: str) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 3")
    await api.wait_status(run_id, "completed")
    for params in ({"after_seq": bad}, {"limit": bad}):
        code, err = await api.call("GET", "runs", run_id, "events", **params)
        assert code == 400, (params, err)
    code, err = await api.call("GET", "sessions", limit=bad)
    assert code == 400
    with pytest.raises(Exception) as refused:
        await api.stream(run_id, after_seq=bad)  # type: ignore[arg-type]
    assert getattr(refused.value, "code", None) == 400


async def test_limit_zero_is_refused(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 3")
    assert (await api.call("GET", "runs", run_id, "events", limit="0"))[0] == 400
    assert (await api.call("GET", "sessions", limit="0"))[0] == 400


async def test_a_planted_invalid_active_stream_id_is_repaired_on_read(
    api: HermesClient, hermes_state: Path, hermes: Any
) -> None:
    sid = (await api.create_session())["session_id"]
    path = _sidecar(hermes_state, sid)
    data = json.loads(path.read_text())
    data.update(active_stream_id="../../etc", pending_user_message="hello?", pending_started_at=1.0)
    path.write_text(json.dumps(data))
    hermes.store.evict(sid)
    code, session = await api.call("GET", "sessions", sid)
    assert code == 200 and session["active_stream_id"] is None and session["pending_user_message"] is None
    assert session["messages"][0]["content"] == "hello?" and session["messages"][-1]["type"] == "interrupted"
    await api.wait_status(await api.start(sid, "count to 2"), "completed")


async def test_pages_walk_every_session_once_newest_first(api: HermesClient) -> None:
    sids = [(await api.create_session(title=f"s{i}"))["session_id"] for i in range(7)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": "3", **({"before": cursor} if cursor else {})}
        code, page = await api.call("GET", "sessions", **params)
        assert code == 200 and len(page["sessions"]) <= 3
        seen += [r["session_id"] for r in page["sessions"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert seen == list(reversed(sids))
    code, listing = await api.call("GET", "sessions")
    assert isinstance(listing, list) and [r["session_id"] for r in listing] == seen, "the unpaged form is unchanged"
    code, err = await api.call("GET", "sessions", limit="3", before="not-a-cursor")
    assert code == 400 and "Reload" in err["message"]


async def test_the_next_page_is_linked(api: HermesClient, jp_fetch: Any) -> None:
    for i in range(3):
        await api.create_session(title=f"s{i}")
    response = await jp_fetch("hermes", "api", "sessions", params={"limit": "2"})
    assert 'rel="next"' in response.headers["Link"] and "before=" in response.headers["Link"]


async def test_error_messages_are_plain_sentences_with_the_technical_part_apart(api: HermesClient) -> None:
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 100000")
    code, err = await api.call("POST", "sessions", sid, "retry")  # a retry does not queue: it needs the session idle
    assert code == 409 and sid not in err["message"] and run_id not in err["message"]
    assert run_id in err["detail"]
    code, err = await api.call("POST", "sessions", sid, "runs", body={"message": "x" * (2 << 20)})
    assert code == 413 and not re.search(r"\d", err["message"]) and "bytes" in err["detail"]
    await api.call("POST", "runs", run_id, "cancel")
    for code, err in (await api.call("GET", "sessions", "nope"), await api.call("GET", "runs", "a b")):
        assert err["message"].endswith(".") and "'" not in err["message"], err
