"""What a run's journal proves about how the run ended. Read-only.

Recovery decides from evidence, never from a file's mere presence: rows are
identity-checked by the reader, and a terminal row is trusted only if no
foreign row claiming to be terminal follows it. The journal is folded as it is
read, so judging a run of a million events holds a chunk of rows at a time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from .. import events
from ..events import JournalRow
from ..journal import Journals, ReadStats
from ..transcript import Transcript, TranscriptFold, Verdict

log = logging.getLogger(__name__)


@dataclass
class Evidence:
    """One streaming read of a run's journal: the fold of its rows (never the rows themselves)."""

    fold: TranscriptFold | None = None
    exists: bool = False
    read_failed: bool = False
    writer_alive: bool = False

    @property
    def terminal(self) -> JournalRow | None:
        return self.fold.terminal if self.fold is not None else None

    @property
    def completed(self) -> bool:
        return self.terminal is not None and self.terminal.terminal_state == "completed"

    @property
    def has_visible_output(self) -> bool:
        return self.fold is not None and self.fold.has_output

    @property
    def still_arriving(self) -> bool:
        """A journal that may still grow: a writer holds it, or it exists but nothing is in it yet."""
        if self.terminal is not None:
            return False
        return self.writer_alive or (self.exists and (self.fold is None or self.fold.last_seq == 0))

    @property
    def sealed_without_output(self) -> bool:
        """The journal is there, nobody writes it any more, and it shows nothing to recover."""
        return self.exists and not self.read_failed and not self.writer_alive and not self.has_visible_output

    def transcript(self, cause: str = "unknown", *, take: bool = False) -> Transcript | None:
        """The run's closed transcript: ended by its terminal row, else by the verdict `cause`.

        `take` hands the rows over (`TranscriptFold.take`): a merge that consumes them frees
        each as it goes, so recovery never holds the fold's rows and the session's at once.
        """
        if self.fold is None:
            return None
        verdict = None if self.fold.terminal is not None else Verdict(cause=cause)
        return self.fold.take(verdict) if take else self.fold.snapshot(verdict)


def read_evidence(journals: Journals, session_id: str, run_id: str) -> Evidence:
    """One streaming pass over the journal, folded as it is read (memory does not grow with its length).

    An OSError is reported as `read_failed` (retry later).
    """
    stats = ReadStats()
    fold = TranscriptFold(run_id, session_id)
    try:
        fold.feed_chunks(journals.iter_row_chunks(session_id, run_id, stats=stats))
    except FileNotFoundError:
        return Evidence()
    except OSError as exc:
        log.warning("run journal %s/%s could not be read (will retry): %s", session_id, run_id, exc)
        return Evidence(read_failed=True)
    if stats.malformed or stats.foreign:
        log.warning(
            "run journal %s/%s: skipped %d malformed and %d foreign rows",
            session_id, run_id, stats.malformed, stats.foreign,
        )
    terminal = fold.terminal
    if terminal is not None and stats.foreign_terminal_after is not None:
        if stats.foreign_terminal_after >= terminal.seq:
            fold.distrust_terminal()  # later terminal evidence exists but is not ours: trust neither
    return Evidence(fold=fold, exists=True, writer_alive=journals.writer_alive(session_id, run_id))


def read_transcript(
    journals: Journals, session_id: str, run_id: str, *, live: bool, verdict_of: Callable[[], Verdict]
) -> Transcript:
    """A run as every view shows it, folded while its journal is read.

    A terminal row ends it; a live run (`live` must be checked before the read, so
    a run that just ended has its terminal row) is shown running; any other run is
    closed by the server's verdict. Raises FileNotFoundError without a journal.
    """
    fold = TranscriptFold(run_id, session_id)
    fold.feed_chunks(journals.iter_row_chunks(session_id, run_id))
    if fold.terminal is not None or live:
        return fold.snapshot()
    return fold.snapshot(verdict_of())


@dataclass(frozen=True)
class TerminalError:
    """A terminal error whose session save failed, carried in the journal so it is not lost."""

    event_id: str
    stream_id: str
    message: dict[str, Any]


def recoverable_terminal_error(evidence: Evidence, session_id: str, run_id: str) -> TerminalError | None:
    """The journaled error row of a run whose error settle could not be saved, if its identity holds."""
    row = evidence.terminal
    if row is None or row.event != events.APPERROR or row.type != events.APPERROR:
        return None
    payload = row.payload
    embedded = payload.get("session")
    if payload.get("session_id") != session_id or not isinstance(embedded, dict):
        return None
    if embedded.get("session_id") != session_id:
        return None
    if payload.get("terminal_session_persisted") is True and (
        payload.get("terminal_session_persisted_session_id") == session_id
    ):
        return None
    message = _last_error_after_last_user(embedded.get("messages"))
    if message is None:
        return None
    return TerminalError(event_id=row.event_id, stream_id=run_id, message=message)


def _last_error_after_last_user(messages: Any) -> dict[str, Any] | None:
    if not isinstance(messages, list):
        return None
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    for message in reversed(messages[last_user + 1:]):
        if (
            isinstance(message, dict) and message.get("role") == "assistant" and message.get("_error") is True
            and isinstance(message.get("content"), str) and message["content"].strip()
        ):
            return dict(message)
    return None


@dataclass(frozen=True)
class RecoveryVerdict:
    """What recovery proved about a dead pending turn, and the cause it would name."""

    evidence: Evidence
    cause: str
    #: Hermes Agent's own transcript, when the session was empty and the core has one.
    core: dict[str, Any] | None = None
    #: The run was cut off by a full disk: the settled turn ends with the note saying so.
    disk_full: bool = False
