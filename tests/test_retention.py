"""Journal retention and `jupyter hermes gc`: settled journals compressed and pruned, needed ones never."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hermes_jupyter import markers
from hermes_jupyter.journal import files
from hermes_jupyter.retention import RetentionPolicy, collect

from .hermes_fixtures import Core, make_session, save_pending_session
from .notebook.journal_writer import DONE, count_events, write_run

JUPYTER = str(Path(sys.executable).parent / "jupyter")
OLD = time.time() - 90 * 86400
KEEP_ALL = RetentionPolicy(max_age_days=0, max_total_bytes=0)


def _settled_session(core: Core, sid: str, run_id: str, *, tokens: int = 20, age: float | None = OLD) -> Path:
    """A completed turn: the sidecar shows it, the journal (written `age` ago) holds its rows."""
    write_run(core.journals, sid, run_id, count_events(tokens) + [DONE])
    text = " ".join(str(i) for i in range(1, tokens + 1))
    core.store.save(make_session(sid, messages=[
        {"role": "user", "content": f"count to {tokens}", "_run_id": run_id},
        {"role": "assistant", "content": text, "_run_id": run_id},
    ], last_run_id=run_id))
    path = core.journals.path(sid, run_id)
    if age is not None:
        os.utime(path, (age, age))
    return path


def _age(path: Path, when: float = OLD) -> None:
    for p in (path, files.sealed_path(path)):
        if p.exists():
            os.utime(p, (when, when))


def test_old_settled_journals_are_pruned_and_the_session_still_shows_the_turn(hermes_core: Core) -> None:
    path = _settled_session(hermes_core, "s1", "r1")
    size = path.stat().st_size

    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy())

    assert (report.pruned, report.checked, report.freed_bytes) == (1, 1, size)
    assert not hermes_core.journals.exists("s1", "r1")
    session = hermes_core.recovery.get_session("s1")
    assert session.messages[-1]["content"] == " ".join(str(i) for i in range(1, 21))
    assert report.sentence().startswith("Freed ") and "removed 1" in report.sentence()


def test_a_pending_turns_journal_is_never_pruned_and_recovery_still_reads_it(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "dead_run", count_events(5))  # the server died mid-turn
    _age(hermes_core.journals.path("s1", "dead_run"))
    save_pending_session(hermes_core, "dead_run", "count to 5", started_at=OLD, session_id="s1")

    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy(max_age_days=1, max_total_bytes=1))

    assert (report.pruned, report.compressed, report.kept_needed) == (0, 0, 1)
    session = hermes_core.recovery.get_session("s1")
    assert "1 2 3 4 5" in session.messages[1]["content"]
    assert "partial output above was recovered from the run journal" in session.messages[-1]["content"]


def test_a_journal_a_pending_retry_marker_points_at_is_kept(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "r_retry", [("status", {"text": "retrying", "level": "info"})])
    _age(hermes_core.journals.path("s1", "r_retry"))
    marker = markers.arm_retry(markers.interrupted_marker("server_restart", recovered_output=False, pending_retry=True), "r_retry")
    hermes_core.store.save(make_session("s1", messages=[{"role": "user", "content": "hi"}, marker]))

    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy(max_age_days=1))

    assert report.pruned == 0 and report.kept_needed == 1
    assert hermes_core.journals.exists("s1", "r_retry")


def test_a_journal_with_a_live_writer_is_kept(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "r_live", count_events(3), keep_open=True)
    _age(hermes_core.journals.path("s1", "r_live"))
    hermes_core.store.save(make_session("s1", messages=[]))  # the sidecar does not say pending yet

    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy(max_age_days=1))

    assert report.pruned == 0 and report.compressed == 0 and report.kept_needed == 1
    assert hermes_core.journals.writer_alive("s1", "r_live")


def test_the_last_interrupted_turn_keeps_its_journal_for_continue(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "s1", "r_cut", count_events(3))
    _age(hermes_core.journals.path("s1", "r_cut"))
    hermes_core.store.save(make_session("s1", last_run_id="r_cut", messages=[
        {"role": "user", "content": "count to 9"}, {"role": "assistant", "content": "1 2 3", "_partial": True},
        markers.cancel_marker(),
    ]))
    assert collect(hermes_core.store, hermes_core.journals, RetentionPolicy(max_age_days=1)).pruned == 0


def test_an_unreadable_or_missing_sidecar_keeps_its_journals(hermes_core: Core) -> None:
    write_run(hermes_core.journals, "orphan", "r1", count_events(2) + [DONE])
    write_run(hermes_core.journals, "broken", "r2", count_events(2) + [DONE])
    (hermes_core.store.root / "broken.json").write_text("{not json")
    for sid, run in (("orphan", "r1"), ("broken", "r2")):
        _age(hermes_core.journals.path(sid, run))
    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy(max_age_days=1))
    assert report.pruned == 0 and report.kept_needed == 2


def test_the_size_cap_prunes_the_oldest_settled_journals_first(hermes_core: Core) -> None:
    now = time.time()
    for i in range(4):
        _age(_settled_session(hermes_core, f"s{i}", f"r{i}", tokens=200), now - (10 - i) * 3600)
    newest_two = sum(hermes_core.journals.path(f"s{i}", f"r{i}").stat().st_size for i in (2, 3))
    policy = RetentionPolicy(max_age_days=0, max_total_bytes=newest_two, compress=False)

    report = collect(hermes_core.store, hermes_core.journals, policy)

    assert report.pruned == 2
    assert [hermes_core.journals.exists(f"s{i}", f"r{i}") for i in range(4)] == [False, False, True, True]


def test_settled_live_journals_are_compressed_and_read_back(hermes_core: Core) -> None:
    path = _settled_session(hermes_core, "s1", "r1", age=None)
    rows = hermes_core.journals.read_rows("s1", "r1")

    report = collect(hermes_core.store, hermes_core.journals, KEEP_ALL)

    assert (report.compressed, report.pruned) == (1, 0)
    assert not path.exists() and files.sealed_path(path).exists()
    assert report.freed_bytes == report.compressible_bytes - files.sealed_path(path).stat().st_size
    assert hermes_core.journals.read_rows("s1", "r1") == rows
    again = collect(hermes_core.store, hermes_core.journals, KEEP_ALL)
    assert (again.compressed, again.pruned, again.checked) == (0, 0, 1)
    assert again.sentence().startswith("Nothing to free: 1 run journals checked")


def test_a_dry_run_changes_nothing_and_says_what_it_would_free(hermes_core: Core) -> None:
    old = _settled_session(hermes_core, "s1", "r1")
    _settled_session(hermes_core, "s2", "r2", age=None)
    before = {p: p.stat().st_size for p in (old, hermes_core.journals.path("s2", "r2"))}

    report = collect(hermes_core.store, hermes_core.journals, RetentionPolicy(), dry_run=True)

    assert (report.pruned, report.compressed, report.freed_bytes) == (1, 1, before[old])
    assert {p: p.stat().st_size for p in before} == before
    assert "Dry run" in report.sentence() and "Nothing was changed" in report.sentence()


def test_cli_gc_dry_run_then_gc(hermes_core: Core) -> None:
    path = _settled_session(hermes_core, "s1", "r1")
    hermes_core.store.close()
    env = {**os.environ, "HERMES_JUPYTER_STATE_DIR": "/nonexistent"}

    def gc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [JUPYTER, "hermes", "gc", "--state-dir", str(hermes_core.state_dir), "--json", *args],
            capture_output=True, text=True, env=env, timeout=60,
        )

    dry = gc("--dry-run")
    assert dry.returncode == 0, dry.stderr
    sentence, numbers = dry.stdout.splitlines()
    assert sentence.startswith("Dry run: removing 1 of 1 run journals would free")
    assert json.loads(numbers)["freed_bytes"] == path.stat().st_size

    done = gc()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Freed ") and json.loads(done.stdout.splitlines()[1])["pruned"] == 1
    assert not path.exists()
