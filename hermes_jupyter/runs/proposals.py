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

from ..store import CorruptSession, SessionStore, UnknownSession
from ..transcript import Transcript
from ..transcript.proposals import find_proposal, record_decision


class UnknownProposal(KeyError):
    """The run proposed no cell with that id (404)."""


class ProposalDecided(RuntimeError):
    """The proposal was already decided the other way (409)."""


def session_decisions(store: SessionStore, session_id: str) -> Mapping[str, str]:
    """The session's decisions (none for a session gone or unreadable: its run is shown as journaled)."""
    try:
        return dict(store.load(session_id).proposal_decisions)
    except (UnknownSession, CorruptSession, ValueError, OSError):
        return {}


def decide(store: SessionStore, transcript: Transcript, proposal_id: str, decision: str) -> dict[str, Any]:
    """Record `accepted`/`rejected` for one proposal of the run in `transcript`; its row as JSON.

    Deciding again the same way is a no-op (a retried request); the other way is refused.
    Saved first: a failed save leaves the session as it was.
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
            changed.tool_calls = [dict(card) for card in session.tool_calls]
            record_decision(changed, transcript.run_id, row, decision)
            store.save(changed, touch=False)
    decided = copy.copy(row)
    decided.status = "accepted" if decision == "accepted" else "rejected"
    return msgspec.to_builtins(decided)  # type: ignore[no-any-return]
