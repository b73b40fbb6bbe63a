"""A new journal's folder entries are made durable with its first rows, not before its run may start
(docs/journal.md, "Durability"): under the batch policy a run's admission creates the journal and no
fsync waits in it, so the model's request goes out at once; the group commit (or a terminal row, or
close) fsyncs the folders along with the rows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_jupyter.journal import Journals

SID, RUN = "sid_1", "run_1"


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths fsynced, in order."""
    done: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        done.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return done


def test_creating_a_journal_waits_on_no_fsync_under_the_batch_policy(tmp_path: Path, synced: list[str]) -> None:
    journals = Journals(tmp_path / "runs", durability="batch", window_s=30.0)
    root = tmp_path / "runs"
    root.mkdir(exist_ok=True)
    synced.clear()
    journals.writer(SID, RUN)  # what admission does
    assert synced == []

    journals.append(SID, RUN, "token", {"text": "hello"})
    assert journals.committer.flush(5.0)
    assert {str(root), str(root / SID), str(journals.path(SID, RUN))} <= set(synced)
    journals.close()


def test_a_terminal_row_makes_the_folders_durable_at_once(tmp_path: Path, synced: list[str]) -> None:
    journals = Journals(tmp_path / "runs", durability="batch", window_s=30.0)
    (tmp_path / "runs").mkdir(exist_ok=True)
    journals.writer(SID, RUN)
    synced.clear()
    journals.append(SID, RUN, "done", {})  # durable when it returns, the committer not asked
    assert {str(tmp_path / "runs"), str(tmp_path / "runs" / SID)} <= set(synced)
    journals.close()


@pytest.mark.parametrize("policy", ["every", "terminal"])
def test_other_policies_fsync_the_folders_at_creation(tmp_path: Path, synced: list[str], policy: str) -> None:
    journals = Journals(tmp_path / "runs", durability=policy)  # type: ignore[arg-type]
    (tmp_path / "runs").mkdir(exist_ok=True)
    synced.clear()
    journals.writer(SID, RUN)
    assert str(tmp_path / "runs" / SID) in synced
    journals.close()
