"""Collaboration rooms (jupyter-collaboration's server extension, `jupyter_server_ydoc`), when installed and on.

Recovery of a notebook that a room holds goes through the room's shared document
(`notebook/shared.py`): never a file write the room would overwrite. One recovery per
notebook at a time, so several browsers asking at once (each one saw the kernel restart)
write each output once.

The kernel's display owns a run it follows to the end, and writes its final bundle a few
milliseconds after the terminal row. A run that settled less than `FOLLOWER_GRACE_S` ago
is given that time first, so the server never races the kernel on the same output.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable

from ..journal import Journals
from ..notebook.outputs import MimeBundle, run_ref_of
from ..notebook.shared import replace_by_run, unfinished

if TYPE_CHECKING:
    from ..notebook.recover import IsLive, VerdictOf

log = logging.getLogger(__name__)

#: Seconds a settled run's own follower (the kernel's display) gets to write its final bundle.
FOLLOWER_GRACE_S = 2.0
#: The server extension of jupyter-collaboration.
YDOC_EXTENSION = "jupyter_server_ydoc"

Offload = Callable[..., Any]


class RoomUnavailable(Exception):
    """A room may hold the notebook but its shared document could not be reached."""


class SharedNotebooks:
    """The open collaboration rooms of this server's notebooks."""

    def __init__(self, serverapp: Any) -> None:
        self._serverapp = serverapp
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def _extension(self) -> Any | None:
        manager = getattr(self._serverapp, "extension_manager", None)
        apps = (getattr(manager, "extension_apps", None) or {}).get(YDOC_EXTENSION) or set()
        for app in apps:
            if not getattr(app, "disable_rtc", False) and hasattr(app, "get_document"):
                return app
        return None

    @property
    def enabled(self) -> bool:
        """Real-time collaboration is on in this server."""
        return self._extension() is not None

    async def document(self, path: str) -> Any | None:
        """The live shared notebook of the room open on `path`, or None when no room holds it."""
        extension = self._extension()
        if extension is None:
            return None
        try:
            return await extension.get_document(
                path=path, content_type="notebook", file_format="json", copy=False, create=False
            )
        except Exception as exc:
            log.warning("hermes: cannot reach the collaboration room of %s: %s", path, exc)
            raise RoomUnavailable(path) from exc

    async def recover(
        self, path: str, journals: Journals, *, is_live: IsLive, verdict_of: VerdictOf, offload: Offload,
    ) -> int | None:
        """Recover through the room holding `path`; None when no room holds it (the file is the notebook)."""
        async with self._locks[path]:
            doc = await self.document(path)
            if doc is None:
                return None
            bundles = await offload(_bundles, unfinished(doc), journals, is_live, verdict_of)
            wait = await offload(_grace_left, journals, bundles)
            if wait > 0:
                await asyncio.sleep(wait)
                bundles = await offload(_bundles, unfinished(doc), journals, is_live, verdict_of)
            return replace_by_run(doc, {run_id: bundle for run_id, (_, bundle) in bundles.items()})


def _bundles(
    outputs: list[dict[str, Any]], journals: Journals, is_live: IsLive, verdict_of: VerdictOf,
) -> dict[str, tuple[str, MimeBundle]]:
    """run_id → (session_id, bundle) of the settled runs among `outputs` (live ones stay their follower's)."""
    from ..notebook.recover import recovered_bundle, runs_of

    read = runs_of(journals, verdict_of)  # settled turns and decisions as the sessions keep them (the one builder)
    found: dict[str, tuple[str, MimeBundle]] = {}
    for output in outputs:
        ref = run_ref_of(output)
        bundle = recovered_bundle(output, journals, is_live, verdict_of, settled_only=True, transcript_of=read)
        if ref is not None and bundle is not None:
            found[ref["run_id"]] = (ref["session_id"], bundle)
    return found


def _grace_left(journals: Journals, bundles: dict[str, tuple[str, MimeBundle]]) -> float:
    """Seconds until every run in `bundles` settled at least FOLLOWER_GRACE_S ago (its journal's last write)."""
    now = time.time()
    left = 0.0
    for run_id, (session_id, _) in bundles.items():
        try:
            written = journals.path(session_id, run_id).stat().st_mtime
        except OSError:
            continue
        left = max(left, written + FOLLOWER_GRACE_S - now)
    return min(left, FOLLOWER_GRACE_S)
