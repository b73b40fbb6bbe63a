"""Who answered: the fold keeps `answered_by`, closes what nobody answered as "not answered", ends a tool the
run ended under, and every view words it from one table (hermes_jupyter/wording.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_jupyter import events as ev
from hermes_jupyter.agents.answered import TIMEOUT, AnsweredBy, answered_by_of, person
from hermes_jupyter.notebook.outputs import render_markdown, render_plain
from hermes_jupyter.sessions.store import Session
from hermes_jupyter.transcript import Verdict, fold, merge
from hermes_jupyter.transcript.proposals import record_decision, with_decisions
from hermes_jupyter.transcript.rows import ApprovalRow, ClarifyRow, ProposalRow, ToolRow, Transcript, rows_json
from hermes_jupyter.wording import answer_words

from .test_fold import RUN, SID, rows

ALICE = {"kind": "person", "user": "alice"}


def _pending(approval_id: str) -> tuple[str, dict[str, Any]]:
    return ev.APPROVAL, {"approval_id": approval_id, "status": "pending", "choices": ["allow_once", "deny"]}


def _resolved(approval_id: str, choice: str, reason: str = "answered", **extra: Any) -> tuple[str, dict[str, Any]]:
    return ev.APPROVAL, {"approval_id": approval_id, "status": "resolved", "choice": choice, "reason": reason, **extra}


def test_the_fold_keeps_who_answered_and_an_old_row_says_nobody() -> None:
    t = fold(rows(
        _pending("a"), _resolved("a", "allow_once", answered_by=ALICE),
        _pending("b"), _resolved("b", "deny", "expired"),  # an old journal: no answered_by
        _pending("c"), _resolved("c", "deny", answered_by={"kind": "someone", "user": "x"}),  # malformed
        (ev.CLARIFY, {"clarify_id": "q", "status": "pending", "question": "Why?"}),
        (ev.CLARIFY, {"clarify_id": "q", "status": "resolved", "answer": "yes", "reason": "answered",
                      "answered_by": {"kind": "policy", "user": "ignored"}}),
        (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    assert [getattr(r, "answered_by", None) for r in t.rows] == [
        AnsweredBy(kind="person", user="alice"), None, None, AnsweredBy(kind="policy")]
    assert rows_json(t.rows)[0]["answered_by"] == ALICE
    assert rows_json(t.rows)[1]["answered_by"] is None
    assert "user" not in rows_json(t.rows)[3]["answered_by"]  # `{kind}` only: a policy has no user


@pytest.mark.parametrize("ending", [
    [(ev.APPERROR, {"type": ev.INTERRUPTED_ERROR_TYPE, "cause": "server_shutdown"})],
    [(ev.CANCEL, {})],
    [],  # no terminal row: recovery's verdict closes it
])
def test_an_approval_the_run_ended_before_is_not_answered_and_its_tool_ends(ending: list[Any]) -> None:
    t = fold(rows((ev.TOOL, {"tid": "t", "name": "terminal"}), _pending("a"), *ending),
             run_id=RUN, session_id=SID, verdict=Verdict(cause="server_restart"))
    tool, approval = t.rows[:2]
    assert isinstance(tool, ToolRow) and tool.status == "error"
    assert isinstance(approval, ApprovalRow)
    assert (approval.choice, approval.answered_by) == ("deny", TIMEOUT)  # the agent had a deny; nobody answered
    markdown, plain = render_markdown(t), render_plain(t)
    assert "· Not answered\n" in markdown and "Denied" not in markdown and "· running" not in markdown
    assert "terminal : error]" in plain and ": Not answered]" in plain


def test_a_tool_still_running_when_the_run_completed_ends_done() -> None:
    t = fold(rows((ev.TOOL, {"tid": "t", "name": "terminal"}), (ev.DONE, {})), run_id=RUN, session_id=SID)
    assert isinstance(t.rows[0], ToolRow) and t.rows[0].status == "done"


def test_a_live_run_keeps_its_card_waiting() -> None:
    t = fold(rows((ev.TOOL, {"tid": "t", "name": "terminal"}), _pending("a")), run_id=RUN, session_id=SID)
    assert [getattr(r, "status", None) for r in t.rows] == ["running", "pending"]


def test_a_question_nobody_answered_reads_not_answered_in_time_or_not_answered() -> None:
    t = fold(rows(
        (ev.CLARIFY, {"clarify_id": "q1", "status": "pending", "question": "One?"}),
        (ev.CLARIFY, {"clarify_id": "q1", "status": "resolved", "answer": None, "reason": "expired",
                      "answered_by": {"kind": "timeout"}}),
        (ev.CLARIFY, {"clarify_id": "q2", "status": "pending", "question": "Two?"}),
        (ev.DONE, {}),
    ), run_id=RUN, session_id=SID)
    first, second = t.rows
    assert isinstance(second, ClarifyRow) and second.answered_by == TIMEOUT and second.answer is None
    assert "One? · Not answered in time" in render_markdown(t)
    assert "Two? · Not answered\n" in render_markdown(t)


@pytest.mark.parametrize(("answer", "by", "reason", "words"), [
    ("allow_once", person("alice"), "answered", "Allowed once by alice"),
    ("allow_session", person("alice"), "answered", "Allowed for this session by alice"),
    ("allow_always", person("bob"), "answered", "Allowed always by bob"),
    ("deny", person("alice"), "answered", "Denied by alice"),
    ("deny", person(None), "answered", "Denied"),
    ("allow_once", AnsweredBy(kind="policy"), "answered", "Allowed by a standing rule"),
    ("deny", AnsweredBy(kind="policy"), "no approval handler", "Denied by a standing rule"),
    ("deny", TIMEOUT, "expired", "Not answered in time"),
    ("deny", TIMEOUT, "not answered before the run ended", "Not answered"),
    ("deny", None, "expired", "Denied (expired)"),
    ("answered", person("alice"), None, "Answered by alice"),
    ("accepted", person("bob"), None, "Accepted by bob"),
    ("rejected", None, None, "Rejected"),
])
def test_the_words_of_an_answer(answer: str, by: AnsweredBy | None, reason: str | None, words: str) -> None:
    assert answer_words(answer, by and by.kind, by and by.user, reason) == words


def test_a_proposal_decision_keeps_who_decided_in_the_session_and_the_rows() -> None:
    row = ProposalRow(id=f"{RUN}:proposal:p", proposal_id="p")
    session = Session(session_id=SID)
    record_decision(session, RUN, row, "accepted", person("bob"))
    restored = Session.from_json(session.to_json())  # through the sidecar's JSON
    t = with_decisions(Transcript(run_id=RUN, session_id=SID, rows=[row]), restored.proposal_decisions,
                       restored.proposal_answered_by)
    assert (row.status, row.answered_by) == ("accepted", AnsweredBy(kind="person", user="bob"))
    assert "· Accepted by bob" in render_markdown(t)
    merged = Session(session_id=SID, messages=[{"role": "user", "content": "x"}])
    merged.proposal_decisions, merged.proposal_answered_by = restored.proposal_decisions, restored.proposal_answered_by
    merge(merged, Transcript(run_id=RUN, session_id=SID, rows=[ProposalRow(id=row.id, proposal_id="p")]), 0)
    card = next(c for c in merged.tool_calls if c.get("kind") == "proposal")
    assert (card["status"], card["answered_by"]) == ("accepted", {"kind": "person", "user": "bob"})


def test_answered_by_is_read_strictly() -> None:
    assert answered_by_of({"kind": "person", "user": "alice"}) == person("alice")
    assert answered_by_of({"kind": "person", "user": 3}) == AnsweredBy(kind="person")
    assert answered_by_of({"kind": "timeout", "user": "x"}) == TIMEOUT
    assert answered_by_of("person") is None and answered_by_of(None) is None
