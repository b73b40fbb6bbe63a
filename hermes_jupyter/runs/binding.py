"""The session-split guard: which backend session a chat is bound to, moved only by compare-and-swap.

A backend may rotate its own session id during a turn (Hermes Agent does when
context compression splits a session), even in a turn that then fails. The
binding may follow the rotation only along the edge the turn started from, only
if the run is still the current one for its session (no cancel or reset since
it began), and only if nobody moved the binding meanwhile.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..sessions.store import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitSync:
    """What the caller learns: the backend's true session id, and whether the binding moved to it."""

    backend_session_id: str | None
    split: bool
    #: The binding now points at the rotated id (moved now, or already published).
    persisted: bool
    #: This call moved it (the session must be saved).
    moved: bool
    history_offset: int


def sync_session_split(
    session: Session,
    *,
    started_id: str | None,
    reported_id: str | None,
    run_generation: int,
    current_generation: int,
    history_len: int,
    compacted: bool = False,
) -> SplitSync:
    """Apply a reported rotation to `session.backend_session_id` if, and only if, it is safe.

    `history_offset` is 0 whenever the history was split or compacted (the caller
    must replace, not append to, the stored history), else `history_len`.
    """
    if not reported_id or reported_id == started_id:
        return SplitSync(started_id, False, False, False, 0 if compacted else history_len)
    if run_generation != current_generation:
        log.info("skipping session split sync for a stale run (%s -> %s)", started_id, reported_id)
        return SplitSync(reported_id, True, False, False, 0)
    if session.backend_session_id == reported_id:
        return SplitSync(reported_id, True, True, False, 0)
    if session.backend_session_id != started_id:
        log.info("skipping session split sync: the binding moved to %s", session.backend_session_id)
        return SplitSync(reported_id, True, False, False, 0)
    session.backend_session_id = reported_id
    return SplitSync(reported_id, True, True, True, 0)
