"""Journal files on disk: sealed (`.jsonl.gz`) and live forms read alike, links refused, huge rows skipped."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from hermes_jupyter.journal import JournalBusy, Journals, ReadStats
from hermes_jupyter.journal.files import CorruptJournal, open_stream, sealed_path

SID, RUN = "sid_1", "run_1"


@pytest.fixture
def journals(tmp_path: Path) -> Journals:
    j = Journals(tmp_path / "runs", durability="terminal", max_event_bytes=4096)
    yield j
    j.close()


def _finished_run(journals: Journals, tokens: int = 50) -> list[bytes]:
    lines = [journals.append(SID, RUN, "token", {"text": f" {i}"}).line for i in range(tokens)]
    lines.append(journals.append(SID, RUN, "done", {}).line)
    journals.close_writer(SID, RUN)
    return lines


def test_a_sealed_journal_holds_the_same_lines_and_reads_like_the_live_one(journals: Journals) -> None:
    lines = _finished_run(journals)
    live_read = journals.read(SID, RUN, after_seq=10, limit=5)
    live_summary = journals.summary(SID, RUN)
    path = journals.path(SID, RUN)

    freed = journals.seal(SID, RUN)

    assert not path.exists() and sealed_path(path).exists()
    assert freed == sum(map(len, lines)) - sealed_path(path).stat().st_size > 0
    assert gzip.decompress(sealed_path(path).read_bytes()) == b"".join(lines)
    assert journals.read(SID, RUN, after_seq=10, limit=5) == live_read
    assert [r.seq for r in journals.read_rows(SID, RUN)] == list(range(1, 52))
    assert [r.seq for r in journals.iter_rows(SID, RUN, after_seq=49)] == [50, 51]
    summary = journals.summary(SID, RUN)
    assert (summary.last_seq, summary.terminal) == (live_summary.last_seq, live_summary.terminal)
    assert journals.run_ids(SID) == [RUN] and journals.exists(SID, RUN)
    assert not journals.writer_alive(SID, RUN)


def test_a_run_is_not_sealed_while_its_writer_holds_it_or_before_its_terminal_row(journals: Journals) -> None:
    journals.append(SID, RUN, "token", {"text": "a"})
    assert journals.seal(SID, RUN) is None  # our writer is open
    other = Journals(journals.root, durability="terminal")
    try:
        assert other.seal(SID, RUN) is None  # another process's view: the flock is held
    finally:
        other.close()
    journals.close_writer(SID, RUN)
    assert journals.seal(SID, RUN) is None  # no terminal row: the run may not be over
    assert journals.path(SID, RUN).exists() and not sealed_path(journals.path(SID, RUN)).exists()


def test_a_sealed_run_cannot_be_reopened_for_writing(journals: Journals) -> None:
    _finished_run(journals, 3)
    journals.seal(SID, RUN)
    with pytest.raises(JournalBusy):
        journals.append(SID, RUN, "token", {"text": "late"})
    assert [r.seq for r in journals.read_rows(SID, RUN)] == [1, 2, 3, 4]


def test_a_crash_between_rename_and_unlink_reads_the_sealed_form_and_the_next_seal_tidies_up(
    journals: Journals,
) -> None:
    lines = _finished_run(journals, 5)
    path = journals.path(SID, RUN)
    sealed_path(path).write_bytes(gzip.compress(b"".join(lines)))  # the .gz is in place, the .jsonl not yet gone
    with open(path, "ab") as fh:  # even if the leftover differed, the sealed form wins, consistently
        fh.write(b"{}\n")
    assert [r.seq for r in journals.read_rows(SID, RUN)] == [1, 2, 3, 4, 5, 6]
    assert journals.seal(SID, RUN) == len(b"".join(lines)) + 3
    assert not path.exists()
    assert [r.seq for r in journals.read_rows(SID, RUN)] == [1, 2, 3, 4, 5, 6]


def test_a_crashed_sealers_temp_file_does_not_stop_the_next_seal(journals: Journals) -> None:
    _finished_run(journals, 5)
    path = journals.path(SID, RUN)
    (path.parent / f".{RUN}.jsonl.gz.tmp").write_bytes(b"half a gzip")
    assert journals.seal(SID, RUN)
    assert [r.seq for r in journals.read_rows(SID, RUN)] == [1, 2, 3, 4, 5, 6]
    assert sorted(os.listdir(path.parent)) == [f"{RUN}.jsonl.gz"]


def test_a_damaged_sealed_journal_is_a_read_error_not_a_crash(journals: Journals) -> None:
    lines = _finished_run(journals, 5)
    journals.seal(SID, RUN)
    sealed = sealed_path(journals.path(SID, RUN))
    sealed.write_bytes(gzip.compress(b"".join(lines))[:-12])
    with pytest.raises(CorruptJournal):
        journals.read_rows(SID, RUN)


def test_a_symlinked_journal_is_refused_never_followed(journals: Journals, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    _finished_run(journals, 3)
    outside.write_bytes(journals.path(SID, RUN).read_bytes())
    journals.path(SID, RUN).unlink()
    journals.path(SID, RUN).symlink_to(outside)

    assert journals.read(SID, RUN).rows == []
    with pytest.raises(FileNotFoundError):
        journals.read_rows(SID, RUN)
    assert not journals.exists(SID, RUN) and not journals.writer_alive(SID, RUN)
    assert journals.summary(SID, RUN).exists is False
    with pytest.raises(FileNotFoundError):
        journals.append(SID, RUN, "token", {"text": "through the link"})
    assert journals.seal(SID, RUN) is None
    assert outside.read_bytes().count(b"\n") == 4  # untouched


def test_a_symlinked_session_folder_is_refused(journals: Journals, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    journals.root.mkdir(parents=True, exist_ok=True)
    (journals.root / SID).symlink_to(elsewhere)
    with pytest.raises(FileNotFoundError):
        journals.append(SID, RUN, "token", {"text": "x"})
    assert os.listdir(elsewhere) == []
    assert journals.run_ids(SID) == [] and SID not in journals.session_ids()


@pytest.mark.parametrize("size", [10_000, 3 << 20], ids=["over-the-cap", "over-a-read-chunk"])
def test_rows_over_the_row_cap_are_skipped_and_counted(journals: Journals, size: int) -> None:
    journals.append(SID, RUN, "token", {"text": "before"})
    journals.close_writer(SID, RUN)
    path = journals.path(SID, RUN)
    with open(path, "ab") as fh:  # a planted row, far over what the writer would write
        fh.write(b'{"version":1,"event_id":"run_1:2","seq":2,"run_id":"run_1","session_id":"sid_1",'
                 b'"event":"token","payload":{"text":"' + b"x" * size + b'"}}\n')
    journals.append(SID, RUN, "token", {"text": "after"})
    journals.close_writer(SID, RUN)
    stats = ReadStats()
    rows = journals.read_rows(SID, RUN, stats=stats)
    assert [r.payload["text"] for r in rows] == ["before", "after"]
    assert stats.oversized == 1 and stats.malformed == 0
    assert [r.seq for r in journals.read(SID, RUN).rows] == [1, 3]


def test_a_row_the_writer_wrote_at_its_cap_is_kept(journals: Journals) -> None:
    big = journals.append(SID, RUN, "tool_complete", {"preview": "y" * 10_000}).row  # truncated to the cap
    assert big.payload.get("_truncated") is True
    stats = ReadStats()
    assert [r.seq for r in journals.read_rows(SID, RUN, stats=stats)] == [1]
    assert stats.oversized == 0


def test_a_page_is_capped_in_bytes_but_always_moves_on(journals: Journals) -> None:
    for _ in range(20):
        journals.append(SID, RUN, "tool_complete", {"preview": "z" * 3000})
    page = journals.read(SID, RUN, max_bytes=10_000)
    assert 1 < len(page.rows) < 20 and page.next_seq == page.rows[-1].seq
    assert len(journals.read(SID, RUN, max_bytes=1).rows) == 1
    assert [r.seq for r in journals.read(SID, RUN, after_seq=page.next_seq, max_bytes=1 << 20).rows] == list(
        range(page.next_seq + 1, 21)
    )


def test_open_stream_reads_either_form(journals: Journals) -> None:
    lines = _finished_run(journals, 3)
    with open_stream(journals.path(SID, RUN)) as fh:
        assert fh.read() == b"".join(lines)
    journals.seal(SID, RUN)
    with open_stream(journals.path(SID, RUN)) as fh:
        assert fh.read() == b"".join(lines)
