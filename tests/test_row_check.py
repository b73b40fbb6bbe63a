"""The journal reader's identity check and the fold's chunked path, against their plain definitions.

The reader returns a chunk as it is when every row passes and copies it only when one is dropped;
the fold skips per-row seq checks for reader chunks. Both shortcuts must give exactly what the
row-by-row definitions give, for any mix of foreign rows, repeats, cursors and chunkings.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_jupyter import events as ev
from hermes_jupyter.events import JournalRow
from hermes_jupyter.journal.reader import ReadStats, _RowCheck
from hermes_jupyter.transcript import TranscriptFold, Verdict
from hermes_jupyter.transcript.rows import rows_json

SID, RUN = "sid_1", "run_1"


def _row(seq: int, *, run: str = RUN, session: str = SID, event_id: str | None = None,
         event: str = ev.TOKEN, payload: dict[str, Any] | None = None) -> JournalRow:
    state = ev.terminal_state_for(event, payload or {})
    return JournalRow(event_id=event_id or f"{run}:{seq}", seq=seq, run_id=run, session_id=session, event=event,
                      type=event, created_at=float(seq), terminal=state is not None, terminal_state=state,
                      payload=payload if payload is not None else {"text": f"t{seq} "})


@st.composite
def journal_rows(draw: st.DrawFn) -> list[JournalRow]:
    """Mostly the run's next rows, with foreign ones (other run, other session, wrong event id,
    a seq going back) and terminal claims mixed in."""
    out: list[JournalRow] = []
    seq = 0
    for kind in draw(st.lists(st.sampled_from(["next"] * 6 + ["gap", "run", "session", "id", "back", "end"]), max_size=60)):
        if kind in ("next", "gap", "end"):
            seq += 1 if kind != "gap" else 3
            out.append(_row(seq, event=ev.DONE if kind == "end" else ev.TOKEN, payload={} if kind == "end" else None))
        elif kind == "back":
            out.append(_row(max(0, seq - 1)))
        else:
            out.append(_row(seq + 1, **{"run": {"run": "other"}, "session": {"session": "other"},
                                         "id": {"event_id": "x:1"}}[kind]))
    return out


def _reference(rows: list[JournalRow], after_seq: int) -> tuple[list[JournalRow], int, int | None]:
    """The check as the contract states it, one row at a time."""
    kept, last, foreign, terminal_after = [], 0, 0, None
    for row in rows:
        if row.seq > last and row.event_id == f"{RUN}:{row.seq}" and row.run_id == RUN and row.session_id == SID:
            last = row.seq
            if row.seq > after_seq:
                kept.append(row)
        else:
            foreign += 1
            terminal_after = last if row.terminal is True else terminal_after
    return kept, foreign, terminal_after


@settings(max_examples=300)
@given(rows=journal_rows(), after_seq=st.integers(0, 40), cuts=st.lists(st.integers(0, 60), max_size=4))
def test_the_identity_check_keeps_exactly_the_rows_the_contract_keeps(rows: list[JournalRow], after_seq: int,
                                                                     cuts: list[int]) -> None:
    check = _RowCheck(SID, RUN, after_seq, ReadStats())
    bounds = [0, *sorted(min(c, len(rows)) for c in cuts), len(rows)]
    kept = [row for a, b in zip(bounds, bounds[1:]) for row in check.valid(rows[a:b])]
    assert (kept, check.stats.foreign, check.stats.foreign_terminal_after) == _reference(rows, after_seq)


@settings(max_examples=200)
@given(
    events=st.lists(st.sampled_from([ev.TOKEN] * 8 + [ev.TOOL, ev.TOOL_COMPLETE, ev.REASONING, ev.INTERIM_ASSISTANT]),
                    max_size=80),
    cuts=st.lists(st.integers(0, 80), max_size=5),
    resume=st.integers(0, 80),
)
def test_a_chunked_fold_equals_the_row_by_row_fold(events: list[str], cuts: list[int], resume: int) -> None:
    """Chunks as the reader yields them, a read resumed `resume` rows back (repeats), or one row at a time."""
    payloads = {ev.TOKEN: lambda i: {"text": f" w{i}"}, ev.TOOL: lambda i: {"tid": f"t{i}", "name": "terminal"},
                ev.TOOL_COMPLETE: lambda i: {"name": "terminal", "preview": "ok"},
                ev.REASONING: lambda i: {"text": f"r{i}"}, ev.INTERIM_ASSISTANT: lambda i: {"text": f"said {i}"}}
    rows = [_row(i, event=e, payload=payloads[e](i)) for i, e in enumerate(events, 1)]
    one_by_one, chunked = TranscriptFold(RUN, SID), TranscriptFold(RUN, SID)
    for row in rows:
        one_by_one.feed_row(row)
    bounds = [0, *sorted(min(c, len(rows)) for c in cuts), len(rows)]
    chunks = [rows[a:b] for a, b in zip(bounds, bounds[1:])]
    chunked.feed_chunks(chunks[:1])
    chunked.feed_chunks([rows[max(0, bounds[1] - resume):b] for b in bounds[2:]])  # each read repeats a stretch
    assert rows_json(chunked.snapshot(Verdict()).rows) == rows_json(one_by_one.snapshot(Verdict()).rows)
    assert chunked.last_seq == one_by_one.last_seq == len(rows)
