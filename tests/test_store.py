"""The session store: atomic sidecars, corrupt files left in place, a self-healing listing index."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from hermes_jupyter.ids import InvalidId
from hermes_jupyter.sessions.store import INDEX_NAME, CorruptSession, SessionStore, UnknownSession


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "sessions")
    yield s
    s.close()


def test_save_and_load_round_trip_keeps_unknown_fields(store: SessionStore) -> None:
    session = store.create(title="t", notebook_path="a.ipynb", cell_id="c1", kernel_id="k1")
    path = store.path(session.session_id)
    data = json.loads(path.read_text())
    data["future_field"] = {"x": 1}
    path.write_text(json.dumps(data))
    loaded = store.load(session.session_id, use_cache=False)
    assert (loaded.title, loaded.notebook_path, loaded.cell_id, loaded.kernel_id) == ("t", "a.ipynb", "c1", "k1")
    store.save(loaded)
    assert json.loads(path.read_text())["future_field"] == {"x": 1}


def test_save_leaves_no_temp_files(store: SessionStore) -> None:
    for _ in range(3):
        store.create()
    assert [p.name for p in store.root.iterdir() if ".tmp." in p.name] == []


def test_corrupt_sidecar_is_reported_and_left_in_place(store: SessionStore) -> None:
    session = store.create(title="precious")
    path = store.path(session.session_id)
    path.write_text('{"session_id": "' + session.session_id + '", "messages": [')  # torn by hand
    before = path.read_bytes()
    store.evict(session.session_id)
    with pytest.raises(CorruptSession):
        store.load(session.session_id)
    assert path.read_bytes() == before
    fresh = SessionStore(store.root)
    fresh.list()
    assert fresh.wait_reconciled()
    [row] = [r for r in fresh.list() if r["session_id"] == session.session_id]
    assert row["corrupt"] is True
    assert path.read_bytes() == before


def test_unknown_and_invalid_ids(store: SessionStore) -> None:
    with pytest.raises(UnknownSession):
        store.load("nope")
    for bad in ["../x", "a/b", "", "x" * 65, "a b", "ä"]:
        with pytest.raises(InvalidId):
            store.path(bad)


def test_listing_is_newest_first_and_survives_restart(store: SessionStore) -> None:
    ids = []
    for i in range(5):
        ids.append(store.create(title=f"s{i}").session_id)
        time.sleep(0.002)
    assert [r["session_id"] for r in store.list()] == ids[::-1]
    store.close()
    again = SessionStore(store.root)
    assert [r["session_id"] for r in again.list()] == ids[::-1]
    assert (store.root / INDEX_NAME).exists()


def test_index_rows_are_refreshed_when_a_sidecar_changed_behind_its_back(store: SessionStore) -> None:
    session = store.create(title="old title")
    store.close()
    other = SessionStore(store.root)
    loaded = other.load(session.session_id)
    loaded.title = "new title"
    other.save(loaded)
    other.close()
    os.utime(store.path(session.session_id), ns=(1, 1))  # mtime differs from what the index saw
    index_path = store.root / INDEX_NAME
    stale = json.loads(index_path.read_text())
    stale[session.session_id]["title"] = "old title"
    index_path.write_text(json.dumps(stale))
    fresh = SessionStore(store.root)
    assert [r["title"] for r in fresh.list()] == ["old title"]  # answered from the index at once...
    assert fresh.wait_reconciled()
    assert [r["title"] for r in fresh.list()] == ["new title"]  # ...and healed in the background


def test_corrupt_index_is_rebuilt(store: SessionStore) -> None:
    session = store.create(title="kept")
    store.close()
    (store.root / INDEX_NAME).write_text("{broken")
    assert [r["session_id"] for r in SessionStore(store.root).list()] == [session.session_id]


def test_delete_removes_sidecar_and_row(store: SessionStore) -> None:
    session = store.create()
    store.delete(session.session_id)
    assert not store.path(session.session_id).exists()
    assert store.list() == []
    with pytest.raises(UnknownSession):
        store.delete(session.session_id)


def test_session_lock_is_not_reentrant(store: SessionStore) -> None:
    lock = store.lock("abc")
    assert lock is store.lock("abc")
    with lock:
        assert lock.acquire(blocking=False) is False
