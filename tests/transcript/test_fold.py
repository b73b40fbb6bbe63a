"""The one fold: cards keyed by their own ids, streaming snapshots, endings; and the merge into a session."""

from __future__ import annotations

from typing import Any

import msgspec

from hermes_jupyter import events as ev
from hermes_jupyter.events import JournalRow
from hermes_jupyter.sessions.store import Session
from hermes_jupyter.transcript import TranscriptFold, Verdict, fold, merge
from hermes_jupyter.transcript.rows import ApprovalRow, PlanRow, ToolRow, rows_json

RUN, SID = "r1", "s1"


def rows(*events: tuple[str, dict[str, Any]]) -> list[JournalRow]:
    out = []
    for seq, (event, payload) in enumerate(events, 1):
        state = ev.terminal_state_for(event, payload)
        out.append(JournalRow(event_id=f"{RUN}:{seq}", seq=seq, run_id=RUN, session_id=SID, event=event, type=event,
                              created_at=float(seq), terminal=state is not None, terminal_state=state, payload=payload))
    return out


def kinds(t: Any) -> list[str]:
    return [r["kind"] for r in rows_json(t.rows)]


def test_a_tool_and_an_approval_with_the_same_id_are_two_cards_and_the_tool_ends_done() -> None:
    t = fold(rows(
        (ev.TOOL, {"tid": "x", "name": "terminal"}),
        (ev.APPROVAL, {"approval_id": "x", "status": "pending", "options": ["allow_once", "deny"]}),
        (ev.APPROVAL, {"approval_id": "x", "status": "resolved", "choice": "allow_once"}),
        (ev.TOOL_COMPLETE, {"tid": "x", "name": "terminal", "preview": "ok"}),
        (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    tool, approval = t.rows
    assert isinstance(tool, ToolRow) and (tool.status, tool.preview) == ("done", "ok")
    assert isinstance(approval, ApprovalRow) and (approval.choice, approval.choices) == ("allow_once", ["allow_once", "deny"])


def test_a_completion_without_tid_pairs_with_the_newest_open_card_of_its_name() -> None:
    t = fold(rows(
        (ev.TOOL, {"name": "read"}), (ev.TOOL, {"name": "read"}), (ev.TOOL_COMPLETE, {"name": "read", "is_error": True}),
    ), run_id=RUN, session_id=SID)
    assert [(r.tid, r.status) for r in t.rows if isinstance(r, ToolRow)] == [("journal-1", "running"), ("journal-2", "error")]


def test_an_unanswered_approval_is_denied_when_the_run_ends_but_stays_pending_while_it_runs() -> None:
    journal = rows((ev.APPROVAL, {"approval_id": "a", "status": "pending"}), (ev.CANCEL, {}))
    live = TranscriptFold(RUN, SID)
    live.feed(journal[:1])
    assert live.snapshot().rows[0].status == "pending"  # type: ignore[union-attr]
    live.feed(journal[1:])
    approval = live.snapshot().rows[0]
    assert isinstance(approval, ApprovalRow)
    assert (approval.status, approval.choice, approval.reason) == ("resolved", "deny", "not answered before the run ended")


def test_a_live_snapshot_never_splits_the_text_and_repeats_are_skipped() -> None:
    journal = rows(*[(ev.TOKEN, {"text": f" {i}"}) for i in range(10)], (ev.DONE, {}))
    live = TranscriptFold(RUN, SID)
    for i in range(len(journal)):
        live.feed(journal[max(0, i - 3): i + 1])
        assert kinds(live.snapshot()) == ["assistant"]
    assert live.snapshot().text == "0 1 2 3 4 5 6 7 8 9" and live.last_seq == 11


def test_the_latest_plan_wins_where_the_first_one_was() -> None:
    t = fold(rows(
        (ev.TOKEN, {"text": "a"}), (ev.PLAN, {"entries": [{"content": "one", "status": "in_progress"}]}),
        (ev.TOKEN, {"text": "b"}), (ev.PLAN, {"items": [{"text": "one", "status": "completed"}]}), (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    assert kinds(t) == ["assistant", "plan", "assistant"]
    plan = t.rows[1]
    assert isinstance(plan, PlanRow) and [(i.text, i.status) for i in plan.items] == [("one", "completed")]


def test_a_later_done_supersedes_an_earlier_apperror_and_rows_after_the_end_are_not_folded() -> None:
    t = fold(rows(
        (ev.TOKEN, {"text": "x"}), (ev.APPERROR, {"type": "boom", "message": "m"}), (ev.TOKEN, {"text": "late"}),
        (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    assert t.status == "completed" and t.text == "x" and t.marker is None


def test_a_run_without_terminal_row_is_closed_only_by_a_verdict() -> None:
    journal = rows((ev.TOKEN, {"text": "partial"}))
    assert fold(journal, run_id=RUN, session_id=SID).status == "running"
    closed = fold(journal, run_id=RUN, session_id=SID, verdict=Verdict(cause="kernel_restart"))
    assert closed.status == "interrupted" and closed.marker is not None and closed.marker.cause == "kernel_restart"
    assert "partial output above was recovered" in closed.marker.text


def test_the_json_form_is_the_agreed_shape() -> None:
    t = fold(rows((ev.TOKEN, {"text": "hi"}), (ev.DONE, {})), run_id=RUN, session_id=SID)
    assert msgspec.json.decode(msgspec.json.encode(t.to_json())) == {
        "run_id": RUN, "session_id": SID, "status": "completed", "last_seq": 2,
        "rows": [{"kind": "assistant", "id": f"{RUN}:a:0", "text": "hi"}],
    }


def test_merging_the_same_transcript_twice_with_dedupe_adds_nothing_the_second_time() -> None:
    t = fold(rows(
        (ev.REASONING, {"text": "think"}), (ev.TOKEN, {"text": "Let me look at the files first."}),
        (ev.TOOL, {"tid": "t1", "name": "terminal", "args": {"command": "ls"}}),
        (ev.TOOL_COMPLETE, {"tid": "t1", "name": "terminal", "preview": "a b"}), (ev.TOKEN, {"text": "Two files."}),
        (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    session = Session(session_id=SID, messages=[{"role": "user", "content": "go"}])
    assert merge(session, t, 0, dedupe=True) is True
    first = ([dict(m) for m in session.messages], [dict(c) for c in session.tool_calls])
    assert merge(session, t, 0, dedupe=True) is False
    assert (session.messages, session.tool_calls) == first
    assert [m.get("reasoning") for m in session.messages] == [None, "think", None]
    assert session.tool_calls[0]["done"] is True and session.tool_calls[0]["assistant_msg_idx"] == 1
