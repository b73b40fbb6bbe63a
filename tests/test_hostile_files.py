"""Hostile files in the state dir, at the engine: no file kind or size can block a read, fill memory or
be deleted through a link (docs/journal.md, "Hostile files").

Every read that could block runs in a helper thread with a deadline, so a regression fails the test
instead of hanging it; the huge-file cases run in a subprocess under an address-space limit.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from hermes_jupyter.fsio import NotAFile, ReadCaps, TooLarge, read_capped
from hermes_jupyter.journal import JournalBusy, Journals
from hermes_jupyter.journal import files
from hermes_jupyter.journal.files import CorruptJournal, sealed_path
from hermes_jupyter.sessions.store import CorruptSession, Session, SessionStore

SID, RUN = "sid_1", "run_1"
DEADLINE_S = 10
REPO = Path(__file__).resolve().parents[1]


def within(fn: Callable[[], Any], seconds: float = DEADLINE_S) -> Any:
    """`fn()` run in a helper thread; fails (instead of hanging) if it has not returned in time."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn} did not return within {seconds} s (it blocks)"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def raises(kind: Any, fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(kind) as caught:
        within(fn)
    return caught.value


@pytest.fixture
def fifos() -> Any:
    """Planted FIFOs; at the end each gets a writer for a moment, so a reader the old code left blocked ends."""
    made: list[Path] = []
    yield made
    for path in made:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue  # no reader waits on it
        os.close(fd)


def plant_fifo(path: Path, fifos: list[Path]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    fifos.append(path)
    return path


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = SessionStore(tmp_path / "sessions")
    s.save(Session(session_id="keep", title="kept"))
    yield s
    s.close()


@pytest.fixture
def journals(tmp_path: Path) -> Any:
    j = Journals(tmp_path / "runs", durability="terminal")
    yield j
    j.close()


def listed(store: SessionStore) -> dict[str, dict[str, Any]]:
    fresh = SessionStore(store.root)
    try:
        within(fresh.list)
        assert fresh.wait_reconciled()
        return {row["session_id"]: row for row in within(fresh.list)}
    finally:
        fresh.close()


# -- sidecars and the index -------------------------------------------------------------------------------
def test_a_fifo_sidecar_is_corrupt_at_once_listed_so_and_deletable(store: SessionStore, fifos: list[Path]) -> None:
    plant_fifo(store.path("planted"), fifos)
    assert "cannot be opened" in str(raises(CorruptSession, lambda: store.load("planted")))
    rows = listed(store)
    assert rows["planted"]["corrupt"] is True and rows["keep"]["title"] == "kept"
    within(lambda: store.delete("planted", corrupt=True))
    assert not os.path.lexists(store.path("planted"))


def test_a_fifo_index_is_rebuilt_from_the_sidecars(store: SessionStore, fifos: list[Path]) -> None:
    store.flush_index()
    os.unlink(store.root / "_index.json")
    plant_fifo(store.root / "_index.json", fifos)
    assert set(listed(store)) == {"keep"}


def test_a_device_node_sidecar_is_corrupt_and_deletable(store: SessionStore) -> None:
    try:  # /dev/zero's numbers: read whole, it never ends
        os.mknod(store.path("planted"), 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    raises(CorruptSession, lambda: store.load("planted"))
    assert listed(store)["planted"]["corrupt"] is True
    within(lambda: store.delete("planted", corrupt=True))
    assert not os.path.lexists(store.path("planted"))


def test_a_folder_in_a_sidecars_place_is_corrupt_and_deletable_with_the_flag(store: SessionStore) -> None:
    store.path("planted").mkdir()
    (store.path("planted") / "inside").write_text("x")
    raises(CorruptSession, lambda: store.load("planted"))
    assert listed(store)["planted"]["corrupt"] is True
    raises(CorruptSession, lambda: store.delete("planted"))
    store.delete("planted", corrupt=True)
    assert not os.path.lexists(store.path("planted"))


def test_a_sidecar_over_its_cap_is_corrupt_and_never_read(tmp_path: Path) -> None:
    small = SessionStore(tmp_path / "sessions", caps=ReadCaps(sidecar=4096))
    try:
        small.save(Session(session_id="big", title="t", messages=[{"role": "user", "content": "x" * 10_000}]))
        small.evict("big")
        assert "over its cap" in str(raises(CorruptSession, lambda: small.load("big")))
        small.delete("big", corrupt=True)
    finally:
        small.close()


def test_read_capped_refuses_what_grows_past_the_cap_and_every_non_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_capped(path, 100) == b"x" * 100
    with pytest.raises(TooLarge):
        read_capped(path, 99)
    with pytest.raises(NotAFile):
        read_capped(tmp_path, 100)


# -- journals ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [f"{RUN}.jsonl", f"{RUN}.jsonl.gz"], ids=["live", "sealed"])
def test_a_fifo_journal_is_corrupt_at_once_for_every_reader_and_removable(
    journals: Journals, fifos: list[Path], name: str
) -> None:
    plant_fifo(journals.root / SID / name, fifos)
    raises(CorruptJournal, lambda: journals.read_rows(SID, RUN))
    raises(CorruptJournal, lambda: journals.read(SID, RUN))
    raises(CorruptJournal, lambda: journals.summary(SID, RUN))
    raises((CorruptJournal, JournalBusy), lambda: journals.append(SID, RUN, "token", {"text": "x"}))  # sealed: busy
    assert within(lambda: journals.writer_alive(SID, RUN)) is False
    assert within(lambda: files.remove_if_idle(journals.path(SID, RUN))) is not None
    assert os.listdir(journals.root / SID) == []


def test_a_file_in_the_place_of_a_sessions_journal_folder_is_refused_and_deleted_with_the_session(
    journals: Journals,
) -> None:
    journals.root.mkdir(parents=True)
    (journals.root / SID).write_text("not a folder")
    with pytest.raises((CorruptJournal, NotAFile)):
        journals.append(SID, RUN, "token", {"text": "x"})
    raises(CorruptJournal, lambda: journals.summary(SID, RUN))
    journals.delete_session(SID)
    assert os.listdir(journals.root) == []


def test_a_sealed_journal_that_expands_past_its_cap_is_corrupt_and_a_larger_live_one_stays_live(
    tmp_path: Path,
) -> None:
    small = Journals(tmp_path / "runs", durability="terminal", caps=ReadCaps(sealed_journal=64 << 10))
    try:
        for i in range(2000):
            small.append(SID, RUN, "token", {"text": f" token {i}"})
        small.append(SID, RUN, "done", {})
        small.close_writer(SID, RUN)
        assert small.seal(SID, RUN) is None, "over the cap: sealed, no reader would take it"
        live = small.path(SID, RUN)
        sealed_path(live).write_bytes(gzip.compress(live.read_bytes()))  # planted: a small bomb
        live.unlink()
        raises(CorruptJournal, lambda: small.read_rows(SID, RUN))
        raises(CorruptJournal, lambda: small.summary(SID, RUN))
    finally:
        small.close()


def test_a_linked_runs_folder_is_never_listed_purged_or_renamed_in(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".deleted-x").mkdir(parents=True)
    (elsewhere / ".deleted-x" / "precious").write_text("keep me")
    (elsewhere / SID).mkdir()
    (tmp_path / "runs").symlink_to(elsewhere)
    journals = Journals(tmp_path / "runs", durability="terminal")
    try:
        journals.purge_leftovers()
        assert journals.session_ids() == []
        with pytest.raises(OSError):
            journals.detach_session(SID)
    finally:
        journals.close()
    assert (elsewhere / ".deleted-x" / "precious").read_text() == "keep me"
    assert sorted(os.listdir(elsewhere)) == [".deleted-x", SID]


def test_the_purge_removes_a_link_inside_a_deleted_folder_never_its_target(journals: Journals, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "precious").write_text("keep me")
    (journals.root / ".deleted-y").mkdir(parents=True)
    (journals.root / ".deleted-y" / "link").symlink_to(target)
    journals.purge_leftovers()
    assert os.listdir(journals.root) == [] and (target / "precious").read_text() == "keep me"


# -- huge files, under an address-space limit ---------------------------------------------------------------
LIMITED = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from pathlib import Path
    from hermes_jupyter.journal import Journals, ReadStats
    from hermes_jupyter.sessions.store import SessionStore
    state, case = Path(sys.argv[1]), sys.argv[2]
    out = {}
    def attempt(name, fn):
        try:
            out[name] = fn()
        except Exception as exc:
            out[name] = type(exc).__name__
    if case == "store":
        store = SessionStore(state / "sessions")
        store.list()
        store.wait_reconciled()
        out["rows"] = {r["session_id"]: bool(r.get("corrupt")) for r in store.list()}
        attempt("load", lambda: store.load("huge").title)
    else:
        journals = Journals(state / "runs", durability="terminal")
        stats = ReadStats()
        attempt("rows", lambda: [r.seq for r in journals.read_rows("sid_1", "run_1", stats=stats)])
        out["malformed"] = stats.malformed
        attempt("page", lambda: [r.seq for r in journals.read("sid_1", "run_1").rows])
        attempt("summary", lambda: journals.summary("sid_1", "run_1").last_seq)
        attempt("append", lambda: journals.append("sid_1", "run_1", "token", {"text": "x"}).row.seq)
    print(json.dumps(out))
""")


def run_limited(state: Path, case: str) -> dict[str, Any]:
    """The case in a fresh interpreter limited to 1 GiB of address space, with a deadline."""
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(state), case], capture_output=True, text=True, timeout=60,
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "MALLOC_ARENA_MAX": "2"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_sparse_multi_gib_sidecar_and_index_are_corrupt_under_a_memory_limit(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    store.save(Session(session_id="keep", title="kept"))
    store.close()
    for name in ("huge.json", "_index.json"):
        with open(store.root / name, "r+b" if name == "_index.json" else "wb") as fh:
            fh.truncate(4 << 30)  # 4 GiB, sparse: costs no disk
    out = run_limited(tmp_path, "store")
    assert out == {"rows": {"keep": False, "huge": True}, "load": "CorruptSession"}


def test_a_journal_line_of_100_mb_without_a_newline_is_a_torn_tail_read_in_bounded_time_and_memory(
    journals: Journals,
) -> None:
    for i in range(3):
        journals.append(SID, RUN, "token", {"text": f" {i}"})
    journals.close_writer(SID, RUN)
    with open(journals.path(SID, RUN), "ab") as fh:
        fh.write(b'{"version":1,"payload":{"text":"')
        fh.truncate(fh.tell() + (100 << 20))  # 100 MB more, no newline
    out = run_limited(journals.root.parent, "journal")
    assert out == {"rows": [1, 2, 3], "malformed": 1, "page": [1, 2, 3], "summary": "CorruptJournal",
                   "append": "CorruptJournal"}


def test_a_fifo_as_hermes_core_transcript_does_not_block_recovery(tmp_path: Path) -> None:
    """Recovery reads Hermes' own core transcript ($HERMES_HOME/sessions) with the same safe open:
    a FIFO there is skipped with a warning, and the stale turn is still repaired from its journal."""
    from tests.hermes_fixtures import build_core, save_pending_session

    core = build_core(tmp_path, process_started_at=10**10)  # every pending turn is from before this start
    session = save_pending_session(core, "fifo_run", "Current question", started_at=1.0, session_id="fifo_sid",
                                   messages=[])
    core.append("fifo_sid", "fifo_run", "token", {"text": "partial"})
    os.mkfifo(core.core_path("fifo_sid"))
    assert within(lambda: core.recovery.repair_stale_pending(session)) is True
    assert any("partial" in str(m.get("content")) for m in session.messages), session.messages
