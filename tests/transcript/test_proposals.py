"""The user's decisions on proposed cells, laid over folded rows and stored cards (pure)."""

from __future__ import annotations

from hermes_jupyter.sessions.store import Session
from hermes_jupyter.transcript import merge
from hermes_jupyter.transcript.proposals import with_decisions
from hermes_jupyter.transcript.rows import ProposalRow, Transcript


def test_a_decision_made_before_the_turn_settled_is_on_the_stored_card() -> None:
    row = ProposalRow(id="run-1:proposal:p-1", proposal_id="p-1", action="insert_end", source="x = 1")
    session = Session("s1", messages=[{"role": "user", "content": "go"}],
                      proposal_decisions={"run-1:proposal:p-1": "rejected"})
    merge(session, Transcript(run_id="run-1", session_id="s1", rows=[row]), 0, recovered=False)
    [card] = session.tool_calls
    assert card["kind"] == "proposal" and card["status"] == "rejected" and card["source"] == "x = 1"
    assert row.status == "pending"  # the journal's row is not changed by the session's record


def test_only_an_accepted_or_rejected_record_changes_a_row() -> None:
    rows = [ProposalRow(id=f"run-1:proposal:p-{i}", proposal_id=f"p-{i}") for i in range(3)]
    t = with_decisions(Transcript(run_id="run-1", session_id="s1", rows=list(rows)),
                       {"run-1:proposal:p-0": "accepted", "run-1:proposal:p-1": "maybe"})
    assert [r.status for r in t.rows if isinstance(r, ProposalRow)] == ["accepted", "pending", "pending"]
