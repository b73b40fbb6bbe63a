"""The run journal: gapless seq across reopen, torn tails, identity checks, cursors, size bounds, policies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from hermes_jupyter import events
from hermes_jupyter.journal import DURABILITY_POLICIES, JournalBusy, Journals, RunJournal, read

SID, RUN = "sid_1", "run_1"


@pytest.fixture(params=DURABILITY_POLICIES)
def journals(request: pytest.FixtureRequest, tmp_path: Path) -> Journals:
    """Every test here runs against each durability policy: they must behave the same."""
    j = Journals(tmp_path / "runs", durability=request.param)
    yield j
    j.close()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_rows_follow_the_contract_envelope(journals: Journals) -> None:
    appended = journals.append(SID, RUN, "token", {"text": "hé"})
    journals.append(SID, RUN, "done", {})
    rows = _lines(journals.path(SID, RUN))
    assert rows[0] == {
        "version": 1, "event_id": f"{RUN}:1", "seq": 1, "run_id": RUN, "session_id": SID,
        "event": "token", "type": "token", "created_at": rows[0]["created_at"],
        "terminal": False, "terminal_state": None, "payload": {"text": "hé"},
    }
    assert msgspec.to_builtins(appended.row) == rows[0]
    assert json.loads(appended.line) == rows[0]
    assert events.encode_row(appended.row) + b"\n" == appended.line  # a replayed row reads as the live one did
    assert rows[1]["terminal"] is True and rows[1]["terminal_state"] == "completed"


def test_seq_is_gapless_across_reopen(journals: Journals) -> None:
    for i in range(3):
        journals.append(SID, RUN, "token", {"text": str(i)})
    journals.close_writer(SID, RUN)
    assert journals.append(SID, RUN, "token", {"text": "again"}).row.seq == 4
    assert [r.seq for r in journals.read(SID, RUN).rows] == [1, 2, 3, 4]


def test_torn_last_line_is_skipped_and_does_not_swallow_the_next_append(journals: Journals) -> None:
    journals.append(SID, RUN, "token", {"text": "a"})
    journals.append(SID, RUN, "token", {"text": "b"})
    journals.close_writer(SID, RUN)
    path = journals.path(SID, RUN)
    with open(path, "ab") as fh:
        fh.write(b'{"version":1,"event_id":"run_1:3","seq":3,"run_id":"run_1","sess')
    result = journals.read(SID, RUN)
    assert [r.seq for r in result.rows] == [1, 2]
    assert result.stats.malformed == 1
    row = journals.append(SID, RUN, "token", {"text": "c"}).row
    assert row.seq == 3
    result = journals.read(SID, RUN)
    assert [r.payload["text"] for r in result.rows] == ["a", "b", "c"]
    assert result.stats.malformed == 0  # the writer cut the fragment before appending
    assert path.read_bytes().count(b"\n") == 3


def test_complete_row_missing_only_its_newline_counts_as_torn(journals: Journals) -> None:
    journals.append(SID, RUN, "token", {"text": "a"})
    line = journals.append(SID, RUN, "token", {"text": "b"}).line
    journals.close_writer(SID, RUN)
    path = journals.path(SID, RUN)
    path.write_bytes(path.read_bytes()[:-1])  # cut the newline of row 2
    assert [r.seq for r in journals.read(SID, RUN).rows] == [1]
    assert journals.append(SID, RUN, "token", {"text": "c"}).row.seq == 2
    assert [r.payload["text"] for r in journals.read(SID, RUN).rows] == ["a", "c"]
    assert line.endswith(b"\n")


def test_foreign_and_malformed_rows_are_skipped_and_counted(journals: Journals) -> None:
    journals.append(SID, RUN, "token", {"text": "mine"})
    journals.close_writer(SID, RUN)
    path = journals.path(SID, RUN)
    good = _lines(path)[0]
    forged = [
        {**good, "seq": 2, "event_id": "other_run:2"},
        {**good, "seq": "2", "event_id": f"{RUN}:2"},
        {**good, "seq": True, "event_id": f"{RUN}:True"},
        {**good, "seq": 0, "event_id": f"{RUN}:0"},
        {**good, "seq": 2, "event_id": f"{RUN}:2", "session_id": "someone_else"},
        {**good, "seq": 2, "event_id": f"{RUN}:2", "payload": "not a dict"},
        ["not", "an", "object"],
    ]
    with open(path, "a") as fh:
        for row in forged:
            fh.write(json.dumps(row) + "\n")
        fh.write("{not json}\n")
    result = journals.read(SID, RUN)
    assert [r.payload["text"] for r in result.rows] == ["mine"]
    assert result.stats.foreign == len(forged)
    assert result.stats.malformed == 1


def test_a_wrongly_shaped_row_is_foreign_at_its_place_and_the_rows_around_it_are_kept(journals: Journals) -> None:
    """A chunk holding one bad line is decoded line by line: order, counts and terminal claims stay exact."""
    for text in ("a", "b"):
        journals.append(SID, RUN, "token", {"text": text})
    journals.close_writer(SID, RUN)
    path = journals.path(SID, RUN)
    good = _lines(path)[0]
    claim = {**good, "seq": 3.0, "event_id": f"{RUN}:3", "event": "done", "terminal": True}
    with open(path, "a") as fh:
        fh.write(json.dumps(claim) + "\n\n")
    journals.append(SID, RUN, "token", {"text": "c"})
    result = journals.read(SID, RUN)
    assert [(r.seq, r.payload["text"]) for r in result.rows] == [(1, "a"), (2, "b"), (3, "c")]
    assert (result.stats.foreign, result.stats.malformed) == (1, 0)
    assert result.stats.foreign_terminal_after == 2
    assert result.terminal is None


def test_cursor_reads_after_seq_with_limit(journals: Journals) -> None:
    for i in range(10):
        journals.append(SID, RUN, "token", {"text": str(i)})
    page = journals.read(SID, RUN, after_seq=3, limit=4)
    assert [r.seq for r in page.rows] == [4, 5, 6, 7]
    assert page.next_seq == 7
    rest = journals.read(SID, RUN, after_seq=page.next_seq)
    assert [r.seq for r in rest.rows] == [8, 9, 10]
    assert journals.read(SID, RUN, after_seq=10).rows == []


def test_huge_payload_is_truncated_with_a_flag(tmp_path: Path) -> None:
    journals = Journals(tmp_path / "runs", durability="terminal", max_event_bytes=4096)
    row = journals.append(SID, RUN, "tool_complete", {"tid": "t1", "preview": "x" * 100_000, "is_error": False}).row
    size = journals.path(SID, RUN).stat().st_size
    assert size < 4096 + 512
    assert row.payload["_truncated"] is True
    assert row.payload["_original_bytes"] > 100_000
    assert row.payload["tid"] == "t1"
    assert journals.read(SID, RUN).rows[0].payload["_truncated"] is True
    journals.close()


def test_a_second_live_writer_is_refused(journals: Journals, tmp_path: Path) -> None:
    journals.append(SID, RUN, "token", {"text": "a"})
    with pytest.raises(JournalBusy):
        RunJournal(journals.path(SID, RUN), SID, RUN, durability="every")
    assert journals.writer_alive(SID, RUN)
    journals.close_writer(SID, RUN)
    assert not journals.writer_alive(SID, RUN)


def test_summary_reads_the_tail_for_last_seq_and_terminal(journals: Journals) -> None:
    assert journals.summary(SID, RUN).exists is False
    for i in range(5):
        journals.append(SID, RUN, "token", {"text": str(i)})
    summary = journals.summary(SID, RUN)
    assert (summary.last_seq, summary.terminal) == (5, None)
    journals.append(SID, RUN, "cancel", {"message": "stop"})
    summary = journals.summary(SID, RUN)
    assert summary.last_seq == 6
    assert summary.terminal is not None and summary.terminal.terminal_state == "interrupted-by-user"


def test_invalid_ids_and_event_names_are_refused(journals: Journals) -> None:
    with pytest.raises(ValueError):
        journals.path("../etc", RUN)
    with pytest.raises(ValueError):
        journals.append(SID, "run/../../x", "token", {})
    with pytest.raises(ValueError):
        journals.append(SID, RUN, 'tok"en', {})


def test_batch_policy_fsyncs_within_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    journals = Journals(tmp_path / "runs", durability="batch", window_s=0.01)
    for i in range(500):
        journals.append(SID, RUN, "token", {"text": str(i)})
    assert journals.committer.flush(2.0)
    assert synced, "the group committer fsynced nothing"
    assert len(synced) < 100, f"{len(synced)} fsyncs for 500 events is not a group commit"
    journals.close()


def test_flush_does_not_wait_out_the_commit_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever needs durability now (drain, shutdown) gets an fsync at once, not after the window."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    journals = Journals(tmp_path / "runs", durability="batch", window_s=30.0)
    journals.append(SID, RUN, "token", {"text": "first"})
    assert journals.committer.flush(5.0)  # the first round syncs at once, then the 30 s window starts
    before = len(synced)
    journals.append(SID, RUN, "token", {"text": "inside the window"})
    assert journals.committer.flush(5.0), "flush waited for the 30 s window"
    assert len(synced) > before
    journals.close()


def test_delete_session_removes_its_journals(journals: Journals) -> None:
    journals.append(SID, RUN, "token", {"text": "a"})
    journals.append(SID, "run_2", "token", {"text": "b"})
    assert journals.run_ids(SID) == [RUN, "run_2"]
    journals.delete_session(SID)
    assert journals.run_ids(SID) == []
    assert not (journals.root / SID).exists()


def test_read_of_a_missing_journal_is_empty(tmp_path: Path) -> None:
    result = read(tmp_path / "nope.jsonl", SID, RUN)
    assert result.rows == [] and result.next_seq == 0
