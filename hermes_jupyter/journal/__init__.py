"""Append-only run journal: one JSONL file per run, gapless `seq`, a row on disk before anyone sees it.

Invariants:
- `seq` starts at 1 and grows by one per valid row, also across processes that
  reopen the file (the writer re-seeds from the last valid row and holds an
  exclusive `flock` while it owns the file, so two live writers cannot interleave).
- A settled run's journal may be sealed (`<run_id>.jsonl.gz`, the same lines); every reader
  opens journals through `files`, which reads either form and never follows a link.
- A torn last line (a crash mid-write) is skipped on read, and the next append
  starts on a fresh line instead of being glued onto the fragment.
- Every row read back is identity-checked; foreign or malformed rows are
  skipped and counted, never trusted.
- Each append is one `write(2)`: once `append` returns, the row survives a crash
  of this process. Power-loss durability follows the policy (`batch`, `every`,
  `terminal`); see `GroupCommitter`.
"""

from __future__ import annotations

from . import files
from .journals import Journals, RunSummary
from .reader import JournalRead, ReadStats, iter_row_chunks, iter_rows, read, read_rows
from .writer import (
    DEFAULT_MAX_EVENT_BYTES,
    DURABILITY_POLICIES,
    Appended,
    Durability,
    GroupCommitter,
    JournalBusy,
    RunJournal,
    truncate_payload,
)

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES", "DURABILITY_POLICIES", "Appended", "files", "Durability", "GroupCommitter", "JournalBusy",
    "JournalRead", "Journals", "ReadStats", "RunJournal", "RunSummary", "iter_row_chunks", "iter_rows", "read", "read_rows",
    "truncate_payload",
]
