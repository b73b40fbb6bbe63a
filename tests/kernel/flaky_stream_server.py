"""A tiny hermes-API look-alike whose run stream drops the connection every few rows.

It exists to prove the kernel's cursor resume: a real server rarely drops a
socket on cue, this one does it after every `drop_every` rows, sends
heartbeats, and can refuse WebSockets altogether to force the polling fallback.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tornado import httpserver, web, websocket

from hermes_jupyter.api_client import ServerInfo


@dataclass
class FlakyRun:
    rows: list[dict[str, Any]]
    drop_every: int = 7
    refuse_ws: bool = False
    #: What `GET runs/{id}` says; "running" keeps the client on the WebSocket across drops.
    status: str = "running"
    connects: list[int] = field(default_factory=list)
    token: str = "secret"


def make_rows(n: int, run_id: str = "run1", session_id: str = "s1", *, terminal: bool = True) -> list[dict[str, Any]]:
    rows = []
    for seq in range(1, n + 1):
        last = terminal and seq == n
        rows.append({
            "version": 1, "event_id": f"{run_id}:{seq}", "seq": seq, "run_id": run_id, "session_id": session_id,
            "event": "done" if last else "token", "type": "done" if last else "token", "created_at": 0.0,
            "terminal": last, "terminal_state": "completed" if last else None,
            "payload": {} if last else {"text": str(seq) if seq == 1 else f" {seq}"},
        })
    return rows


class _Base(web.RequestHandler):
    def initialize(self, run: FlakyRun) -> None:
        self.run = run

    def prepare(self) -> None:
        if self.request.headers.get("Authorization") != f"token {self.run.token}":
            raise web.HTTPError(403)


class _Stream(websocket.WebSocketHandler):
    def initialize(self, run: FlakyRun) -> None:
        self.run = run

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self.request.headers.get("Authorization") != f"token {self.run.token}" or self.run.refuse_ws:
            self.set_status(400 if self.run.refuse_ws else 403)
            self.finish()
            return
        await super().get(*args, **kwargs)

    async def open(self, run_id: str) -> None:
        after = int(self.get_argument("after_seq", "0"))
        self.run.connects.append(after)
        # Replay one row the client already has, as a server racing a reconnect might.
        pending = [r for r in self.run.rows if r["seq"] >= max(1, after)]
        await self.write_message(json.dumps({"type": "heartbeat", "last_seq": after}))
        for sent, row in enumerate(pending, 1):
            await self.write_message(json.dumps(row))
            if row["terminal"]:
                break
            if sent % self.run.drop_every == 0:
                break
        self.close()


class _Status(_Base):
    def get(self, run_id: str) -> None:
        last = self.run.rows[-1]
        self.finish({"run_id": run_id, "session_id": "s1", "status": self.run.status, "last_seq": last["seq"]})


class _Events(_Base):
    def get(self, run_id: str) -> None:
        after = int(self.get_argument("after_seq", "0"))
        rows = [r for r in self.run.rows if r["seq"] > after][:5]
        done = bool(rows and rows[-1]["terminal"]) or (not rows and not self.run.rows[-1]["terminal"])
        self.finish({"events": rows, "next_seq": rows[-1]["seq"] if rows else after, "terminal": done})


class FlakyServer:
    """Runs the app on its own thread and loop; `info` is what `find_server` would return."""

    def __init__(self, run: FlakyRun) -> None:
        self.run = run
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.port = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application([
            (r"/base/hermes/api/runs/([^/]+)/stream", _Stream, {"run": self.run}),
            (r"/base/hermes/api/runs/([^/]+)/events", _Events, {"run": self.run}),
            (r"/base/hermes/api/runs/([^/]+)", _Status, {"run": self.run}),
        ])
        server = httpserver.HTTPServer(app)
        sockets = __import__("tornado.netutil", fromlist=["bind_sockets"]).bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        server.add_sockets(sockets)
        self._server = server
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> FlakyServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._server.stop)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    @property
    def info(self) -> ServerInfo:
        return ServerInfo(f"http://127.0.0.1:{self.port}/base/", self.run.token, "test")
