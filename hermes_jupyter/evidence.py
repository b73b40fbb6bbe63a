"""What a run's journal proves about how the run ended. Read-only.

Recovery decides from evidence, never from a file's mere presence: rows are
identity-checked by the reader, and a terminal row is trusted only if no
foreign row claiming to be terminal follows it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from . import events
from .events import JournalRow
from .journal import Journals, ReadStats

log = logging.getLogger(__name__)


@dataclass
class Evidence:
    rows: list[JournalRow] = field(default_factory=list)
    exists: bool = False
    read_failed: bool = False
    writer_alive: bool = False
    terminal: JournalRow | None = None

    @property
    def completed(self) -> bool:
        return self.terminal is not None and self.terminal.terminal_state == "completed"

    @property
    def has_visible_output(self) -> bool:
        return any(_visible(row) for row in self.rows)

    @property
    def still_arriving(self) -> bool:
        """A journal that may still grow: a writer holds it, or it exists but nothing is in it yet."""
        if self.terminal is not None:
            return False
        return self.writer_alive or (self.exists and not self.rows)

    @property
    def sealed_without_output(self) -> bool:
        """The journal is there, nobody writes it any more, and it shows nothing to recover."""
        return self.exists and not self.read_failed and not self.writer_alive and not self.has_visible_output


def _visible(row: JournalRow) -> bool:
    event, payload = row.event, row.payload
    if event == "token":
        return bool(payload.get("text"))
    if event == "reasoning":
        return bool(str(payload.get("text") or payload.get("reasoning") or "").strip())
    if event == "interim_assistant":
        return bool(payload.get("text")) and not payload.get("already_streamed")
    return event == "tool"


def read_evidence(journals: Journals, session_id: str, run_id: str) -> Evidence:
    """One streaming pass over the journal. An OSError is reported as `read_failed` (retry later)."""
    stats = ReadStats()
    try:
        rows = journals.read_rows(session_id, run_id, stats=stats)
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
    terminal = events.authoritative_terminal(rows)
    if terminal is not None and stats.foreign_terminal_after is not None:
        if stats.foreign_terminal_after >= terminal.seq:
            terminal = None  # later terminal evidence exists but is not ours: trust neither
    return Evidence(
        rows=rows, exists=True, terminal=terminal, writer_alive=journals.writer_alive(session_id, run_id)
    )


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
