"""The listing order kept sorted as sessions change, its page cursors, and the first read after a restart."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hermes_jupyter.sessions.listing import BadCursor
from hermes_jupyter.sessions.store import SessionStore

from .hermes_fixtures import Core, build_core, save_pending_session


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "sessions")
    yield s
    s.close()


def _walk(store: SessionStore, limit: int) -> list[str]:
    sids, cursor = [], None
    while True:
        page = store.page(limit, cursor)
        sids += [r["session_id"] for r in page.rows]
        if page.next is None:
            return sids
        cursor = page.next


def test_pages_follow_saves_and_deletes_newest_first(store: SessionStore) -> None:
    sids = [store.create(title=str(i)).session_id for i in range(5)]
    assert _walk(store, 2) == list(reversed(sids))
    store.save(store.load(sids[0]))  # touched: now the newest
    store.delete(sids[2])
    expected = [sids[0], sids[4], sids[3], sids[1]]
    assert _walk(store, 3) == expected == [r["session_id"] for r in store.list()]


def test_a_cursor_still_continues_after_newer_sessions_arrive(store: SessionStore) -> None:
    sids = [store.create().session_id for _ in range(4)]
    first = store.page(2)
    store.create()
    store.create()
    assert [r["session_id"] for r in store.page(2, first.next).rows] == [sids[1], sids[0]]


def test_a_cursor_no_page_handed_out_is_refused(store: SessionStore) -> None:
    with pytest.raises(BadCursor):
        store.page(2, "yesterday")


def test_the_first_read_waits_for_a_repair_another_thread_is_doing(tmp_path: Path) -> None:
    core: Core = build_core(tmp_path, process_started_at=time.time())
    save_pending_session(core, "r1", "hello", started_at=1.0)
    core.store.evict("test_sid")
    held = threading.Event()

    def scan() -> None:  # as the start-up scan: holds the session lock for a while
        with core.store.lock("test_sid"):
            held.set()
            time.sleep(0.3)

    scanner = threading.Thread(target=scan)
    scanner.start()
    held.wait()
    session = core.recovery.get_session("test_sid")
    assert session.pending_user_message is None and session.messages[-1]["type"] == "interrupted"
    scanner.join()
    core.journals.close()
    core.store.close()


def test_the_cli_lists_every_session_page_by_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from hermes_jupyter.cli import main

    store = SessionStore(tmp_path / "sessions")
    sids = [store.create().session_id for _ in range(5)]
    store.close()
    monkeypatch.setattr("hermes_jupyter.cli.CLI_PAGE", 2)
    main(["sessions", "--state-dir", str(tmp_path), "--json"])
    assert [json.loads(line)["session_id"] for line in capsys.readouterr().out.splitlines()] == list(reversed(sids))
