"""A small API client for tests (instead of raw fetches in every test)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tornado.httpclient import HTTPClientError


class HermesClient:
    def __init__(self, jp_fetch: Any, jp_ws_fetch: Any) -> None:
        self.fetch = jp_fetch
        self.ws_fetch = jp_ws_fetch

    async def call(self, method: str, *path: str, body: Any = None, **params: Any) -> tuple[int, Any]:
        kwargs: dict[str, Any] = {"method": method}
        if params:
            kwargs["params"] = params
        if body is not None:
            kwargs["body"] = body if isinstance(body, (bytes, str)) else json.dumps(body)
        elif method in ("POST", "PATCH"):
            kwargs["body"] = "{}"
        try:
            response = await self.fetch("hermes", "api", *path, **kwargs)
        except HTTPClientError as err:
            payload = json.loads(err.response.body) if err.response is not None and err.response.body else None
            return err.code, payload
        return response.code, json.loads(response.body) if response.body else None

    async def create_session(self, **body: Any) -> dict[str, Any]:
        code, session = await self.call("POST", "sessions", body=body)
        assert code == 201, session
        return session  # type: ignore[no-any-return]

    async def start(self, sid: str, message: str, **extra: Any) -> str:
        code, data = await self.call("POST", "sessions", sid, "runs", body={"message": message, **extra})
        assert code == 202, data
        return data["run_id"]  # type: ignore[no-any-return]

    async def stream(self, run_id: str, after_seq: int = 0, *, stop_after: int | None = None) -> list[dict[str, Any]]:
        """Rows from the WebSocket until it closes (or `stop_after` rows)."""
        ws = await self.ws_fetch("hermes", "api", "runs", run_id, "stream", params={"after_seq": str(after_seq)})
        rows: list[dict[str, Any]] = []
        try:
            while True:
                message = await asyncio.wait_for(ws.read_message(), 30)
                if message is None:
                    return rows
                data = json.loads(message)
                if "event_id" not in data:  # a heartbeat, or the closing message of an unfinished run
                    continue
                rows.append(data)
                if stop_after is not None and len(rows) >= stop_after:
                    return rows
        finally:
            ws.close()

    async def wait_status(self, run_id: str, *statuses: str, timeout_s: float = 20) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            code, status = await self.call("GET", "runs", run_id)
            assert code == 200, status
            if status["status"] in statuses:
                return status  # type: ignore[no-any-return]
            assert loop.time() < deadline, f"run {run_id} stuck in {status}"
            await asyncio.sleep(0.02)
