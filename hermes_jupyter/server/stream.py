"""WebSocket run stream: one journal row per message from a cursor, live until the terminal row.

The handler only connects a socket to a run observer (runs/fanout.py) and
forwards; cursors, backfill and ordering live there. Writes are awaited, so a
slow client only slows itself. When idle it sends `{"type": "heartbeat"}`
(more often than the 30 s after which proxies drop idle connections). A run
that ended without a terminal row (a crash, a full disk) gets one last message
`{"type": "closed", "terminal": false, "message": ...}` before the socket closes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..ids import InvalidId, validate_id
from ..runs.diskfull import DISK_FULL, DISK_FULL_MESSAGE
from ..runs.fanout import Heartbeat, Observer
from ..runs.status import UnknownRun
from .errors import PlainValueError, mapped
from .inputs import parse_count
from .services import HermesServices

#: The last message of a stream whose run has no terminal row, by why it has none.
UNFINISHED = {
    DISK_FULL: DISK_FULL_MESSAGE,
    None: "The run stopped before it finished. Reload the session to see what was recovered.",
}


class RunStreamHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):
    auth_resource = "hermes:runs"
    observer: Observer | None = None
    pump: asyncio.Task[None] | None = None

    @property
    def hermes(self) -> HermesServices:
        return self.settings["hermes"]  # type: ignore[no-any-return]

    def set_default_headers(self) -> None:
        """Websockets take none of JupyterHandler's default headers."""

    async def pre_get(self, run_id: str) -> None:
        """Authorize and resolve the run before the upgrade, so errors are plain HTTP errors."""
        authorized = await ensure_async(self.authorizer.is_authorized(self, self.current_user, "read", "hermes:runs"))
        if not authorized:
            raise web.HTTPError(403)
        try:
            wanted = parse_count(self.get_query_argument("after_seq", None), "after_seq", 0)
            run_id = validate_id(run_id, "run id")
            status = self.hermes.manager.run_status(run_id)
            after_seq = wanted if wanted <= status["last_seq"] else 0  # a cursor ahead of the run replays all
            self.observer = self.hermes.manager.attach(run_id, after_seq)
        except (InvalidId, PlainValueError, UnknownRun) as exc:
            error = mapped(exc)
            assert error is not None
            raise error from exc

    @ws_authenticated
    async def get(self, run_id: str) -> None:
        await self.pre_get(run_id)
        result = super().get(run_id)
        if result is not None:
            await result

    def open(self, run_id: str) -> None:
        self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        assert self.observer is not None
        try:
            async for batch in self.observer.batches():
                if isinstance(batch, Heartbeat):
                    await self.write_message(json.dumps({"type": "heartbeat", "last_seq": batch.last_seq}))
                    continue
                last: Any = None
                for appended in batch:
                    last = self.write_message(appended.line.rstrip(b"\n").decode())
                await last
            if not self.observer.finished:
                await self._send_unfinished()
            self.close(1000, "run ended")
        except WebSocketClosedError:
            pass

    async def _send_unfinished(self) -> None:
        channel = self.observer.channel if self.observer is not None else None
        failure = channel.failure if channel is not None else None
        message = UNFINISHED.get(failure, UNFINISHED[None])
        await self.write_message(json.dumps({"type": "closed", "terminal": False, "reason": failure, "message": message}))

    def on_message(self, message: str | bytes) -> None:
        """Clients only listen; anything they send is ignored."""

    def on_close(self) -> None:
        if self.pump is not None:
            self.pump.cancel()
