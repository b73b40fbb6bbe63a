"""Joining a run in one message: the journal folded so far, instead of one frame per journal row.

A client that attaches to a long run asks the stream for a snapshot (docs/api.md, "Joining a run in
one message"): the server folds the journal once, off the event loop, and sends the folded rows and
the open segment as one `snapshot` message; live rows follow from the seq it covers. So re-attaching costs about the
run's text on the wire, not a frame (and its envelope) per token. A run that already ended needs
no snapshot: its settled message is the folded run.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..journal import Journals
from ..sessions.store import SessionStore
from ..transcript import Transcript, TranscriptFold
from ..transcript.proposals import with_decisions
from ..transcript.rows import Row
from .proposals import session_decisions


class OpenSegment(msgspec.Struct, kw_only=True):
    """The text segment still receiving tokens: its ordinal (row ids `<run>:a:<n>`, `<run>:r:<n>`)
    and its text and reasoning so far, untrimmed."""

    n: int
    text: str
    reasoning: str


class Snapshot(msgspec.Struct, kw_only=True):
    """The `snapshot` message: a run's rows up to `last_seq`; the rows after it come as journal lines."""

    type: Literal["snapshot"] = "snapshot"
    run_id: str
    session_id: str
    last_seq: int
    #: The closed rows, in display order (the open segment's rows are not among them).
    rows: list[Row]
    open: OpenSegment
    #: The note of each wait for the model, by `wait_id` (a later waiting row updates that note).
    waits: dict[str, str]


class CatchUp(msgspec.Struct, frozen=True):
    """What a joining client is sent first: a snapshot (None for an ended run), and the seq it covers."""

    snapshot: Snapshot | None
    last_seq: int
    #: The fold met the run's terminal row: only the settled message is left to send.
    ended: bool


def catch_up(journals: Journals, store: SessionStore, session_id: str, run_id: str) -> CatchUp:
    """Fold the run's journal as it stands, with the session's decisions on proposed cells."""
    fold = TranscriptFold(run_id, session_id)
    try:
        fold.feed_chunks(journals.iter_row_chunks(session_id, run_id))
    except FileNotFoundError:
        pass  # admitted, nothing journaled yet: an empty snapshot, every row follows live
    if fold.terminal is not None:
        return CatchUp(None, fold.last_seq, True)
    snapshot = snapshot_of(fold)
    with_decisions(Transcript(run_id=run_id, session_id=session_id, rows=snapshot.rows),
                   *session_decisions(store, session_id))  # updates the rows in place
    return CatchUp(snapshot, fold.last_seq, False)


def snapshot_of(fold: TranscriptFold) -> Snapshot:
    """The snapshot message of a fold that has not met its run's end (pure: the golden fixtures pin it)."""
    point = fold.resume_point()
    return Snapshot(
        run_id=fold.run_id, session_id=fold.session_id, last_seq=fold.last_seq, rows=point.rows,
        open=OpenSegment(n=point.segment, text=point.text, reasoning=point.reasoning), waits=point.waits,
    )


def ended_run(journals: Journals, session_id: str, run_id: str) -> CatchUp:
    """A run nobody runs any more: nothing to fold here, its settled message is the folded run.
    `ended` says whether its journal has a terminal row (else the stream says it stopped short)."""
    summary = journals.summary(session_id, run_id)
    return CatchUp(None, summary.last_seq, summary.terminal is not None)
