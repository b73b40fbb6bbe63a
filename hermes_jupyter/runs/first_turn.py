"""A session created together with its first turn, so a turn that cannot start leaves no empty session.

The sidebar used to create a session and then start its turn in a second call;
when the second failed (a busy server, a refused backend) an empty "New session"
stayed in everyone's list. Here the two are one step: the session is saved, the
turn admitted, and if admission fails the session and its journals are removed
before the error is answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sessions.store import Session
from .run import Run

if TYPE_CHECKING:  # the engine calls this (`RunManager.create_session`)
    from .manager import RunManager


async def create_with_first_turn(manager: RunManager, message: str, **fields: Any) -> tuple[Session, Run]:
    """Create a session from `fields` (as `SessionStore.create`) and start its first turn with `message`."""
    session = await manager.offload(manager.store.create, **fields)
    sid = session.session_id
    try:
        run = await manager.start_run(sid, message)
    except BaseException:
        await manager.delete_session(sid)  # its turn never started, so nothing of it is live
        raise
    return await manager.offload(manager.store.load, sid), run
