"""The user's decisions on proposed cells, applied to transcript rows and session cards. Pure.

A `proposal` journal row is always pending: the run that proposed the cell may have
ended (its journal sealed) long before the user decides, so the decision is kept in
the session (`Session.proposal_decisions`, keyed by the row id) and laid over the
folded rows wherever the server shows them (docs/proposals.md).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..store import Session
from .rows import PROPOSAL_DECISIONS, ProposalRow, ProposalStatus, Row, Transcript


def decision_of(row: ProposalRow, decisions: Mapping[str, str]) -> ProposalStatus:
    """The proposal's status: the session's recorded decision, else what the journal says (pending)."""
    decided = decisions.get(row.id)
    if decided == "accepted":
        return "accepted"
    return "rejected" if decided == "rejected" else row.status


def with_decisions(transcript: Transcript, decisions: Mapping[str, str]) -> Transcript:
    """The transcript with each proposal's status as the session records it (the rows are updated in place)."""
    if decisions:
        for row in transcript.rows:
            if isinstance(row, ProposalRow):
                row.status = decision_of(row, decisions)
    return transcript


def proposal_card(row: ProposalRow) -> dict[str, Any]:
    """A proposal as a session `tool_calls` entry (the shape the sidebar reads for settled turns)."""
    return {
        "kind": "proposal", "name": "propose_cell", "preview": row.source, "snippet": row.source,
        "tid": row.proposal_id, "args": {}, "done": True, "is_error": False,
        "action": row.action, "cell_id": row.cell_id, "cell_type": row.cell_type, "source": row.source,
        "old_source": row.old_source, "status": row.status,
    }


def find_proposal(rows: list[Row], proposal_id: str) -> ProposalRow | None:
    return next((r for r in rows if isinstance(r, ProposalRow) and r.proposal_id == proposal_id), None)


def record_decision(session: Session, run_id: str, row: ProposalRow, decision: str) -> None:
    """Keep the decision in the session and on its stored card (if the turn is already settled)."""
    if decision not in PROPOSAL_DECISIONS:
        raise ValueError(f"decision must be one of {sorted(PROPOSAL_DECISIONS)}")
    session.proposal_decisions[row.id] = decision
    for card in session.tool_calls:
        owner = card.get("_run_id") or card.get("_recovered_stream_id")
        if card.get("kind") == "proposal" and card.get("tid") == row.proposal_id and owner == run_id:
            card["status"] = decision
