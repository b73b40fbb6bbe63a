"""Run code in a user's kernel the way JupyterLab does: REST to start it, its WebSocket to execute.

Everything goes through the hub's proxy under `/user/<name>/` with the user's hub token, so a
cell here runs exactly where a cell the user types would run, with the environment the hub
gave that user's server.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect


@dataclass
class Execution:
    """What one execute_request produced: its reply status and its iopub outputs, in order."""

    status: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(o["content"].get("text", "") for o in self.outputs if o["msg_type"] == "stream")

    @property
    def error(self) -> str | None:
        errors = [o["content"] for o in self.outputs if o["msg_type"] == "error"]
        return "\n".join(f"{e['ename']}: {e['evalue']}" for e in errors) or None

    def bundles(self, mime: str) -> list[Any]:
        """Every `mime` payload displayed or updated, in order."""
        kinds = ("display_data", "update_display_data", "execute_result")
        return [o["content"]["data"][mime] for o in self.outputs
                if o["msg_type"] in kinds and mime in o["content"].get("data", {})]


class KernelSession:
    """One kernel of a Jupyter server, started over REST and driven over its channels WebSocket."""

    def __init__(self, server_url: str, token: str) -> None:
        self.server_url = server_url
        self.token = token
        self.kernel_id = ""
        self.session = uuid.uuid4().hex
        self._ws: WebSocketClientConnection | None = None

    async def __aenter__(self) -> KernelSession:
        async with httpx.AsyncClient(headers=self._headers, timeout=60) as http:
            response = await http.post(self.server_url + "api/kernels", json={"name": "python3"})
            response.raise_for_status()
            self.kernel_id = response.json()["id"]
        ws_url = self.server_url.replace("http://", "ws://") + f"api/kernels/{self.kernel_id}/channels?session_id={self.session}"
        self._ws = await websocket_connect(HTTPRequest(ws_url, headers=self._headers))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            self._ws.close()
        async with httpx.AsyncClient(headers=self._headers, timeout=60) as http:
            await http.delete(self.server_url + f"api/kernels/{self.kernel_id}")

    @property
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    async def execute(self, code: str, timeout_s: float = 60) -> Execution:
        """Send `code`; return once the reply and the kernel's return to idle have both arrived."""
        assert self._ws is not None
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session, "username": "test",
                  "date": "", "version": "5.3"}
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        await self._ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {},
                                                 "content": content, "channel": "shell", "buffers": []}))
        result = Execution()
        idle = False
        async with asyncio.timeout(timeout_s):
            while not (result.status and idle):
                raw = await self._ws.read_message()
                if raw is None:
                    raise ConnectionError("kernel WebSocket closed")
                if not isinstance(raw, str):
                    continue  # binary frames carry widget buffers; nothing to check in them here
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if kind == "execute_reply":
                    result.status = msg["content"]["status"]
                elif kind == "status":
                    idle = msg["content"]["execution_state"] == "idle"
                elif kind in ("stream", "display_data", "update_display_data", "execute_result", "error"):
                    result.outputs.append({"msg_type": kind, "content": msg["content"]})
        return result
