"""Recovery holds one copy of what it recovers: text joined once, rows handed to the merge and freed."""

from __future__ import annotations

import copy

from hermes_jupyter import events as ev
from hermes_jupyter.sessions.store import Session
from hermes_jupyter.transcript import TranscriptFold, Verdict, merge
from hermes_jupyter.transcript.fold import _JOIN_EVERY

from .test_fold import RUN, SID, rows


def test_a_segment_longer_than_one_block_keeps_every_piece_in_order_and_strips_only_its_ends() -> None:
    pieces = ["  \n", " "] + [f"w{i} " for i in range(3 * _JOIN_EVERY + 5)] + ["end", " \n", "  "]
    folder = TranscriptFold(RUN, SID)
    folder.feed(rows(*((ev.TOKEN, {"text": p}) for p in pieces)))
    live = folder.snapshot()
    final = folder.snapshot(Verdict())
    assert live.rows[0].text == final.rows[0].text == "".join(pieces).strip()


def test_an_interim_message_after_a_long_segment_joins_it_after_a_blank_line() -> None:
    tokens = [(ev.TOKEN, {"text": "x"}) for _ in range(_JOIN_EVERY + 1)]
    t = TranscriptFold(RUN, SID)
    t.feed(rows(*tokens, (ev.INTERIM_ASSISTANT, {"text": "said"})))
    assert t.snapshot(Verdict()).rows[0].text == "x" * (_JOIN_EVERY + 1) + "\n\nsaid"


def _journal() -> list[ev.JournalRow]:
    return rows(
        (ev.REASONING, {"text": "think"}), (ev.TOKEN, {"text": "one"}),
        (ev.TOOL, {"tid": "t1", "name": "terminal", "args": {"command": "ls"}}),
        (ev.TOOL_COMPLETE, {"tid": "t1", "name": "terminal", "preview": "ok"}),
        (ev.TOKEN, {"text": "two"}), (ev.APPROVAL, {"approval_id": "a1", "status": "pending"}),
    )


def test_a_consuming_merge_gives_the_session_the_same_rows_and_leaves_the_transcript_empty() -> None:
    kept, taken = TranscriptFold(RUN, SID), TranscriptFold(RUN, SID)
    kept.feed(_journal())
    taken.feed(_journal())
    base = Session(session_id=SID, messages=[{"role": "user", "content": "go", "timestamp": 1}])
    a, b = copy.deepcopy(base), copy.deepcopy(base)
    merge(a, kept.snapshot(Verdict()), 0)
    transcript = taken.take(Verdict())
    merge(b, transcript, 0, consume=True)
    assert (b.messages, b.tool_calls, b.context_messages) == (a.messages, a.tool_calls, a.context_messages)
    assert len(a.tool_calls) == 2 and transcript.rows == [] and transcript.meta == {}


def test_a_fold_that_handed_its_transcript_over_still_knows_whether_it_had_output() -> None:
    quiet, talking = TranscriptFold(RUN, SID), TranscriptFold(RUN, SID)
    quiet.feed(rows((ev.USAGE, {"input_tokens": 1})))
    talking.feed(rows((ev.TOKEN, {"text": "  "}), (ev.TOKEN, {"text": "hi"})))
    assert (quiet.has_output, talking.has_output) == (False, True)
    assert talking.has_output == talking.snapshot().has_output
    quiet.take(Verdict())
    talking.take(Verdict())
    assert (quiet.has_output, talking.has_output) == (False, True)
    assert talking.terminal is None and talking.last_seq == 2
