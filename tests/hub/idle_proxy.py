"""A TCP relay that drops any connection idle for `idle_s`: the load balancer in front of a hub.

Why it exists: configurable-http-proxy never times out an idle WebSocket (its http-proxy sets
the socket timeout to 0). What drops quiet streams in production sits in front of it:
ingress-nginx (`proxy-read-timeout`, 60 s by default) or a cloud load balancer (idle timeout,
60 s). This relay does what they do, on 127.0.0.1, with a timeout short enough for a test:
no byte in either direction for `idle_s` closes both sides.
"""

from __future__ import annotations

import asyncio
import threading
import time


class IdleTimeoutProxy:
    """Relay 127.0.0.1:<port> to `target_port`; `dropped` counts connections closed for idleness."""

    def __init__(self, target_port: int, idle_s: float) -> None:
        self.target_port = target_port
        self.idle_s = idle_s
        self.port = 0
        self.dropped = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="idle-proxy", daemon=True)
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> IdleTimeoutProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._relay, "127.0.0.1", 0), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        last_byte_at = [time.monotonic()]

        async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while data := await reader.read(65536):
                last_byte_at[0] = time.monotonic()
                writer.write(data)
                await writer.drain()

        pumps = [asyncio.ensure_future(pump(client_r, upstream_w)), asyncio.ensure_future(pump(upstream_r, client_w))]
        try:
            while not any(p.done() for p in pumps):
                idle_for = time.monotonic() - last_byte_at[0]
                if idle_for >= self.idle_s:
                    self.dropped += 1
                    break
                await asyncio.wait(pumps, timeout=self.idle_s - idle_for, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for p in pumps:
                p.cancel()
            for w in (client_w, upstream_w):
                w.close()
