"""Delete a session with its journals, all or nothing as the user sees it.

The sidecar is what makes a session visible, so it goes last: the journals
folder is first moved aside in one rename (undone if removing the sidecar
fails), the sidecar is removed, and only then is the moved folder emptied.
A failure at any step before the sidecar is gone leaves the session whole; a
failure after it leaves only an invisible folder that a later delete retries.
Nothing is followed through a symbolic link.
"""

from __future__ import annotations

from collections.abc import Callable

from ..journal import Journals
from .store import CorruptSession, RunActive, SessionStore


def delete_session(
    store: SessionStore, journals: Journals, is_live: Callable[[str], bool], session_id: str, *,
    corrupt: bool = False,
) -> None:
    """Remove `session_id`; `corrupt=True` also removes a sidecar that cannot be read.

    `is_live(run_id)` says whether a run is live in this process (the engine's `LiveRuns.is_live`).

    Raises RunActive while a turn of the session runs, CorruptSession for an
    unreadable sidecar without the flag, UnknownSession if there is none.
    """
    with store.lock(session_id):
        try:
            session = store.load(session_id)
        except CorruptSession:
            if not corrupt:
                raise
        else:
            if session.active_run_id and is_live(session.active_run_id):
                raise RunActive(f"session {session_id} has a running turn; cancel it first")
        detached = journals.detach_session(session_id)
        try:
            store.delete(session_id, corrupt=True)
        except BaseException:
            if detached is not None:
                journals.reattach_session(session_id, detached)
            raise
    if detached is not None:
        journals.purge_detached(detached)
