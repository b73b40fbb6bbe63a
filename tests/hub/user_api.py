"""The hermes API of a user's server as hub clients reach it: `{proxy}/user/<name>/hermes/api/` and a hub token."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect


@dataclass
class StreamRead:
    """What a WebSocket stream delivered: rows, heartbeats, and whether it ended on a terminal row."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    heartbeats: int = 0

    @property
    def ended(self) -> bool:
        return bool(self.rows) and bool(self.rows[-1].get("terminal"))

    @property
    def text(self) -> str:
        return "".join(r["payload"].get("text", "") for r in self.rows if r["event"] == "token")


class UserApi:
    """The server of user `name` behind the proxy at `proxy_url`; `token` is whichever hub token the caller holds."""

    def __init__(self, proxy_url: str, name: str, token: str) -> None:
        self.proxy_url = proxy_url
        self.server_url = f"{proxy_url}user/{name}/"
        self.api_url = self.server_url + "hermes/api/"
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return httpx.request(method, self.api_url + path, json=body, params=params or None, headers=self.headers,
                             timeout=30, follow_redirects=False)

    def new_session(self, **body: Any) -> str:
        response = self.call("POST", "sessions", body)
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    def start_run(self, session_id: str, message: str) -> str:
        response = self.call("POST", f"sessions/{session_id}/runs", {"message": message})
        assert response.status_code == 202, response.text
        return str(response.json()["run_id"])

    def wait_status(self, run_id: str, *statuses: str, timeout_s: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            response = self.call("GET", f"runs/{run_id}")
            assert response.status_code == 200, response.text
            if response.json()["status"] in statuses:
                return response.json()  # type: ignore[no-any-return]
            assert time.monotonic() < deadline, f"run {run_id} stuck: {response.json()}"
            time.sleep(0.1)

    async def open_stream(self, run_id: str, after_seq: int = 0, *, via: str | None = None) -> WebSocketClientConnection:
        """The run's WebSocket, through the hub's proxy or, with `via`, through another front on the same path."""
        url = self.api_url.replace(self.proxy_url, via or self.proxy_url, 1)
        ws_url = url.replace("http://", "ws://") + f"runs/{quote(run_id)}/stream?after_seq={after_seq}"
        return await websocket_connect(HTTPRequest(ws_url, headers=self.headers))

    async def read_stream(self, ws: WebSocketClientConnection, timeout_s: float = 60) -> StreamRead:
        """Everything until the socket closes, whoever closes it."""
        read = StreamRead()
        try:
            async with asyncio.timeout(timeout_s):
                while (message := await ws.read_message()) is not None:
                    data = json.loads(message)
                    if data.get("type") == "heartbeat":
                        read.heartbeats += 1
                    elif "event_id" in data:  # a journal line (the settled message that ends the stream has none)
                        read.rows.append(data)
        finally:
            ws.close()
        return read

    async def stream_status(self, run_id: str) -> int:
        """The HTTP status of the WebSocket handshake (101 when it opens)."""
        try:
            ws = await self.open_stream(run_id)
        except HTTPClientError as err:
            return err.code
        ws.close()
        return 101
