"""The user's decisions on proposed cells, applied to transcript rows and session cards. Pure.

A `proposal` journal row is always pending: the run that proposed the cell may have
ended (its journal sealed) long before the user decides, so the decision is kept in
the session (`Session.proposal_decisions`, keyed by the row id) and laid over the
folded rows wherever the server shows them (docs/proposals.md). Who decided is kept
beside it (`Session.proposal_answered_by`, by the same row id), so a card says "Accepted by alice".
"""

from __future__ import annotations

from typing import Any, Mapping

from ..agents.answered import AnsweredBy, answered_by_of
from ..sessions.store import Session
from .rows import PROPOSAL_DECISIONS, ProposalRow, ProposalStatus, Row, Transcript
from .turns import with_decision


def decision_of(row: ProposalRow, decisions: Mapping[str, str]) -> ProposalStatus:
    """The proposal's status: the session's recorded decision, else what the journal says (pending)."""
    decided = decisions.get(row.id)
    if decided == "accepted":
        return "accepted"
    return "rejected" if decided == "rejected" else row.status


def decider_of(row: ProposalRow, deciders: Mapping[str, Any]) -> AnsweredBy | None:
    """Who decided the proposal (None: undecided, or decided before deciders were kept)."""
    return answered_by_of(deciders.get(row.id)) if row.status != "pending" else None


def decision_fields(row: ProposalRow, session: Session) -> dict[str, Any]:
    """A proposal session card's `status` and `answered_by`, as the session records them."""
    status = decision_of(row, session.proposal_decisions)
    by = answered_by_of(session.proposal_answered_by.get(row.id)) if status != "pending" else None
    return {"status": status, "answered_by": by.to_json() if by is not None else None}


def with_decisions(
    transcript: Transcript, decisions: Mapping[str, str], deciders: Mapping[str, Any] | None = None
) -> Transcript:
    """The transcript with each proposal's status, and who decided it, as the session records them
    (the rows are updated in place)."""
    if decisions:
        for row in transcript.rows:
            if isinstance(row, ProposalRow):
                row.status = decision_of(row, decisions)
                row.answered_by = decider_of(row, deciders or {})
    return transcript


def proposal_card(row: ProposalRow) -> dict[str, Any]:
    """A proposal as a session `tool_calls` entry (the shape the sidebar reads for settled turns)."""
    return {
        "kind": "proposal", "name": "propose_cell", "preview": row.source, "snippet": row.source,
        "tid": row.proposal_id, "args": {}, "done": True, "is_error": False,
        "action": row.action, "cell_id": row.cell_id, "cell_type": row.cell_type, "source": row.source,
        "old_source": row.old_source, "status": row.status,
        "answered_by": row.answered_by.to_json() if row.answered_by is not None else None,
    }


def find_proposal(rows: list[Row], proposal_id: str) -> ProposalRow | None:
    return next((r for r in rows if isinstance(r, ProposalRow) and r.proposal_id == proposal_id), None)


def record_decision(session: Session, run_id: str, row: ProposalRow, decision: str, by: AnsweredBy) -> None:
    """Keep the decision and who made it in the session, and on its stored row and card (if the turn is settled)."""
    if decision not in PROPOSAL_DECISIONS:
        raise ValueError(f"decision must be one of {sorted(PROPOSAL_DECISIONS)}")
    session.proposal_decisions[row.id] = decision
    session.proposal_answered_by[row.id] = by.to_json()
    session.turns = with_decision(session.turns, row.id, decision, by)  # a new list: copies stay apart
    for card in session.tool_calls:
        owner = card.get("_run_id") or card.get("_recovered_stream_id")
        if card.get("kind") == "proposal" and card.get("tid") == row.proposal_id and owner == run_id:
            card["status"] = decision
            card["answered_by"] = by.to_json()
