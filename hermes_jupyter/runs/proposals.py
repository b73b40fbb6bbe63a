"""Decide a proposed cell: the server keeps the user's decision, so every client shows the same state.

A run's journal may be sealed by the time the user decides, so the decision is not
journaled; it is saved in the run's session (`Session.proposal_decisions`) under
the session lock, and laid over the run's rows wherever the server shows them
(docs/proposals.md). The server never applies a proposal: a frontend does, through
the open notebook, and only after the user accepted it.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

import msgspec

from ..agents.answered import AnsweredBy
from ..sessions.store import CorruptSession, SessionStore, UnknownSession
from ..transcript import Transcript
from ..transcript.proposals import decider_of, find_proposal, record_decision


class UnknownProposal(KeyError):
    """The run proposed no cell with that id (404)."""


class ProposalDecided(RuntimeError):
    """The proposal was already decided the other way (409)."""


def session_decisions(store: SessionStore, session_id: str) -> tuple[Mapping[str, str], Mapping[str, Any]]:
    """The session's decisions and who made them (none for a session gone or unreadable: its run is
    shown as journaled)."""
    try:
        session = store.load(session_id)
    except (UnknownSession, CorruptSession, ValueError, OSError):
        return {}, {}
    return dict(session.proposal_decisions), dict(session.proposal_answered_by)


def decide(
    store: SessionStore, transcript: Transcript, proposal_id: str, decision: str, by: AnsweredBy
) -> dict[str, Any]:
    """Record `accepted`/`rejected`, decided `by` someone, for one proposal of the run in `transcript`;
    its row as JSON.

    Deciding again the same way is a no-op (a retried request: the first decider is kept); the other
    way is refused. Saved first: a failed save leaves the session as it was.
    """
    row = find_proposal(transcript.rows, proposal_id)
    if row is None:
        raise UnknownProposal(f"run {transcript.run_id} has no proposal {proposal_id}")
    with store.lock(transcript.session_id):
        session = store.load(transcript.session_id)
        current = session.proposal_decisions.get(row.id)
        if current is not None and current != decision:
            raise ProposalDecided(f"proposal {proposal_id} was already {current}")
        if current is None:
            changed = copy.copy(session)
            changed.proposal_decisions = dict(session.proposal_decisions)
            changed.proposal_answered_by = dict(session.proposal_answered_by)
            changed.tool_calls = [dict(card) for card in session.tool_calls]
            record_decision(changed, transcript.run_id, row, decision, by)
            store.save(changed, touch=False)
            session = changed
    decided = copy.copy(row)
    decided.status = "accepted" if decision == "accepted" else "rejected"
    decided.answered_by = decider_of(decided, session.proposal_answered_by)
    return msgspec.to_builtins(decided)  # type: ignore[no-any-return]
