"""WebSocket run stream: one journal row per message from a cursor, live until the terminal row.

The handler only connects a socket to a run observer (runs/fanout.py) and
forwards; cursors, backfill and ordering live there. A batch of rows goes out as
the journal's own lines, framed together in one socket write (`frames.py`), with
no JSON work per message. The pump waits for a write only when the socket did
not take it at once, so a slow client only slows itself and a fast one costs no
extra loop turn per row. After the last journal line it sends one settled message
(`{"settled": true, ...}`, docs/api.md): the transcript and cell bundle as the
server settled them. When idle it sends `{"type": "heartbeat"}` (more often
than the 30 s after which proxies drop idle connections).
A client that asks `?snapshot=1` is sent the run so far as one `snapshot` message instead of its rows
(runs/catchup.py, docs/api.md): a live run's folded rows, then its rows after the seq they cover; an
ended run only its settled message.
A run that ended without a terminal row (a crash, a full disk) is marked so in that
last message: `"type": "closed", "terminal": false` and a plain `message` saying why;
if not even a verdict can be read, that closed message alone ends the stream.
Every refusal before the upgrade (no credential, a bad id or cursor, an unknown run, a damaged
journal, a request that is not a WebSocket upgrade at all) is the same JSON error as the REST
routes answer (errors.py), never Jupyter's page template, which carries the server's token.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..ids import validate_id
from ..journal import Appended
from ..runs.catchup import catch_up, ended_run
from ..runs.diskfull import DISK_FULL, DISK_FULL_MESSAGE
from ..runs.fanout import Heartbeat, Observer
from .errors import mapped, user_error, write_json_error
from .frames import raw_stream, text_frames
from .inputs import parse_count
from .kernel_token import KernelTokenAuth
from .scope import check_run
from .services import HermesServices

#: The last message of a stream whose run has no terminal row, by why it has none.
UNFINISHED = {
    DISK_FULL: DISK_FULL_MESSAGE,
    None: "The run stopped before it finished. Reload the session to see what was recovered.",
}

#: A client asking for a snapshot that misses at most this many rows gets the rows: they cost less.
FEW_ROWS = 2048

NOT_A_SOCKET = ("This address streams a run live and answers only a WebSocket connection. Open it as a "
                "WebSocket, or read the run's events instead.")


class RunStreamHandler(WebSocketMixin, WebSocketHandler, KernelTokenAuth):
    auth_resource = "hermes:runs"
    observer: Observer | None = None
    pump: asyncio.Task[None] | None = None
    #: Set once the JSON error is written, so `finish` passes it through.
    json_error = False
    #: The snapshot message a client that asked for one gets before any row (runs/catchup.py).
    first_message: str | None = None

    @property
    def hermes(self) -> HermesServices:
        return self.settings["hermes"]  # type: ignore[no-any-return]

    def set_default_headers(self) -> None:
        """Websockets take none of JupyterHandler's default headers."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """The REST routes' JSON error (errors.write_json_error); JupyterHandler's would render its page."""
        self.json_error = True
        write_json_error(self, status_code, kwargs.get("exc_info", (None, None))[1])

    def finish(self, chunk: str | bytes | dict[str, Any] | None = None) -> Any:
        """Tornado refuses an upgrade it cannot make (a missing `Connection: Upgrade`, a cross-origin
        socket, an unknown protocol version) with a text body of its own: that too is answered as JSON."""
        status = self.get_status()
        if status >= 400 and not self.json_error:
            text = chunk.decode(errors="replace") if isinstance(chunk, bytes) else chunk
            refusal = web.HTTPError(status, "%s", text) if isinstance(text, str) and text else web.HTTPError(status)
            return self.write_error(status, exc_info=(type(refusal), refusal, None))
        return super().finish(chunk)

    async def pre_get(self, run_id: str) -> None:
        """Authorize and resolve the run before the upgrade, so errors are plain HTTP errors."""
        authorized = await ensure_async(self.authorizer.is_authorized(self, self.current_user, "read", "hermes:runs"))
        if not authorized:
            raise web.HTTPError(403)
        try:
            wanted = parse_count(self.get_query_argument("after_seq", None), "after_seq", 0)
            run_id = validate_id(run_id, "run id")
            await check_run(self, self.hermes, run_id)  # a kernel streams only its own sessions' runs (scope.py)
            status = self.hermes.manager.run_status(run_id)
            after_seq = wanted if wanted <= status["last_seq"] else 0  # a cursor ahead of the run replays all
            self.observer = self.hermes.manager.attach(run_id, after_seq)
            if parse_count(self.get_query_argument("snapshot", None), "snapshot", 0, maximum=1):
                await self._catch_up(status, after_seq)
        except Exception as exc:  # the REST routes' mapping: a damaged journal is the same 409 (api_errors)
            error = mapped(exc)
            if error is None:
                raise
            raise error from exc

    async def _catch_up(self, status: dict[str, Any], after_seq: int) -> None:
        """`?snapshot=1`: the run so far in one message, live rows after it (runs/catchup.py); a client
        missing only a few rows (a short drop) gets those rows instead."""
        assert self.observer is not None
        if after_seq and status["last_seq"] - after_seq <= FEW_ROWS:
            return
        manager = self.hermes.manager
        sid, run_id = status["session_id"], status["run_id"]
        if status["status"] == "running":
            point = await manager.offload(catch_up, manager.journals, manager.store, sid, run_id)
        else:
            point = await manager.offload(ended_run, manager.journals, sid, run_id)
        self.observer.skip_to(point.last_seq, ended=point.ended)
        if point.snapshot is not None:
            self.first_message = msgspec.json.encode(point.snapshot).decode()

    @ws_authenticated
    async def get(self, run_id: str) -> None:
        if self.request.headers.get("Upgrade", "").lower() != "websocket":  # a page or a plain GET
            raise user_error(400, NOT_A_SOCKET, 'Can "Upgrade" only to "WebSocket".')
        await self.pre_get(run_id)
        result = super().get(run_id)
        if result is not None:
            await result

    def open(self, run_id: str) -> None:
        if self.first_message is not None:
            self.write_message(self.first_message)  # the snapshot goes before any row after it
            self.first_message = None
        self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        assert self.observer is not None
        try:
            async for batch in self.observer.batches():
                if isinstance(batch, Heartbeat):
                    await self.write_message(json.dumps({"type": "heartbeat", "last_seq": batch.last_seq}))
                    continue
                pending = self._send_rows(batch)
                if pending is not None and not pending.done():
                    await pending  # the socket is full: wait for this client, and only for it
            await self._send_settled()
            self.close(1000, "run ended")
        except WebSocketClosedError:
            pass

    def _send_rows(self, batch: list[Appended]) -> Any:
        """Write a batch of rows, one text message each; returns the write's future."""
        connection = self.ws_connection
        if connection is None or connection.is_closing():
            raise WebSocketClosedError()
        stream = raw_stream(connection)
        if stream is None:  # compression or an unusual protocol: tornado frames each message
            last: Any = None
            for appended in batch:
                last = self.write_message(appended.line[:-1])
            return last
        try:
            return stream.write(text_frames(a.line for a in batch))
        except StreamClosedError:
            raise WebSocketClosedError() from None

    async def _send_settled(self) -> None:
        """The last message: the stored turn (its rows, user row and bundle), the server's verdict (docs/api.md);
        built once per turn and shared by every socket (runs/views.py).

        A run without a terminal row also gets the closed fields saying why (a full disk, a crash).
        """
        assert self.observer is not None
        manager = self.hermes.manager
        message: dict[str, Any] = {}
        text = ""
        try:
            message, text = await manager.offload(manager.views.settled_frame, self.observer.run_id)
        except Exception:  # the journal vanished (session deleted): the socket still closes cleanly
            self.log.exception("no settled message for run %s", self.observer.run_id)
            if self.observer.finished:
                return
        if not self.observer.finished:  # shared with other sockets: changed on a copy
            failure = self.observer.channel.failure if self.observer.channel is not None else None
            message = {**message, "type": "closed", "terminal": False, "reason": failure,
                       "message": UNFINISHED.get(failure, UNFINISHED[None])}
            text = msgspec.json.encode(message).decode()
        await self.write_message(text)

    def on_message(self, message: str | bytes) -> None:
        """Clients only listen; anything they send is ignored."""

    def on_close(self) -> None:
        if self.pump is not None:
            self.pump.cancel()
