"""The Python client of a running hermes server: find it (docs/api.md), call its REST API, follow a run's stream.

Two users: the kernel magic, and `jupyter hermes recover` asking the server that serves a notebook
(notebook/defer.py); it sits below both, so neither imports the other. What a caller shows comes
from the server's journal rows, read over a WebSocket that resumes from its cursor after a drop
(so no row is lost or repeated), or by polling when no WebSocket gets through.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from . import events
from .events import JournalRow

API_PREFIX = "hermes/api/"


class ServerNotFound(RuntimeError):
    """No hermes server could be found from this kernel."""


class HermesApiError(RuntimeError):
    """The server answered with an error (`{"message": ...}`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ServerInfo:
    """Where the server is: `url` includes its base_url and ends with `/`."""

    url: str
    token: str
    source: str
    root_dir: str | None = None

    @property
    def api_url(self) -> str:
        return self.url + API_PREFIX


def _server(url: str, token: str | None, source: str, root_dir: str | None = None) -> ServerInfo:
    return ServerInfo(url if url.endswith("/") else url + "/", token or "", source, root_dir)


def find_server(
    env: Mapping[str, str] | None = None,
    *,
    running_servers: Callable[[], Iterable[Mapping[str, Any]]] | None = None,
    parent_pid: int | None = None,
) -> ServerInfo:
    """The server to talk to, in the order docs/api.md gives.

    1. `HERMES_JUPYTER_URL` (+ `HERMES_JUPYTER_TOKEN`): an explicit choice wins.
    2. `HERMES_JUPYTER_SERVER_URL`/`_TOKEN`: set by the hermes server that started this kernel (the
       token is this kernel's own, which opens the hermes routes of this kernel's sessions only:
       server/kernel_token.py, server/scope.py).
    3. jupyter_server's runtime files: the server whose pid is this kernel's parent
       (`JPY_PARENT_PID`, else the OS parent); a single running server otherwise.
    4. JupyterHub's environment: `JUPYTERHUB_SERVICE_URL` (or `JUPYTERHUB_SERVICE_PREFIX`
       on the local default port) with this kernel's token, else `JUPYTERHUB_API_TOKEN` (which a
       kernel started by a hermes server no longer inherits).
    """
    env = os.environ if env is None else env
    if env.get("HERMES_JUPYTER_URL"):
        return _server(env["HERMES_JUPYTER_URL"], env.get("HERMES_JUPYTER_TOKEN"), "HERMES_JUPYTER_URL")
    if env.get("HERMES_JUPYTER_SERVER_URL"):
        return _server(
            env["HERMES_JUPYTER_SERVER_URL"], env.get("HERMES_JUPYTER_SERVER_TOKEN"), "parent-server",
            env.get("HERMES_JUPYTER_SERVER_ROOT"),
        )
    found = _from_runtime_files(env, running_servers, parent_pid)
    if found is not None:
        return found
    hub_token = env.get("HERMES_JUPYTER_SERVER_TOKEN") or env.get("JUPYTERHUB_API_TOKEN")
    if env.get("JUPYTERHUB_SERVICE_URL"):
        return _server(env["JUPYTERHUB_SERVICE_URL"], hub_token, "jupyterhub")
    if env.get("JUPYTERHUB_SERVICE_PREFIX"):
        prefix = "/" + env["JUPYTERHUB_SERVICE_PREFIX"].strip("/") + "/"
        return _server(f"http://127.0.0.1:8888{prefix}", hub_token, "jupyterhub")
    raise ServerNotFound(
        "no Jupyter server with hermes-jupyter found: start this notebook from `jupyter lab`, or set "
        "HERMES_JUPYTER_URL (and HERMES_JUPYTER_TOKEN) to the server's URL"
    )


def _from_runtime_files(
    env: Mapping[str, str],
    running_servers: Callable[[], Iterable[Mapping[str, Any]]] | None,
    parent_pid: int | None,
) -> ServerInfo | None:
    if running_servers is None:
        from jupyter_server.serverapp import list_running_servers

        running_servers = list_running_servers
    servers = list(running_servers())
    parents = {parent_pid if parent_pid is not None else os.getppid()}
    if (env.get("JPY_PARENT_PID") or "").isdigit():
        parents.add(int(env["JPY_PARENT_PID"]))
    chosen = [s for s in servers if s.get("pid") in parents]
    if not chosen and len(servers) == 1:
        chosen = servers
    if not chosen:
        return None
    info = chosen[0]
    return _server(str(info["url"]), str(info.get("token") or ""), "runtime-file", info.get("root_dir"))


class HermesClient:
    """REST calls to `{base_url}hermes/api/` with `Authorization: token …`."""

    def __init__(self, server: ServerInfo, *, timeout_s: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        self.server = server
        headers = {"Authorization": f"token {server.token}"} if server.token else {}
        self._http = httpx.Client(base_url=server.api_url, headers=headers, timeout=timeout_s, transport=transport)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, *, body: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        response = self._http.request(method, path, json=body, params=params)
        if response.status_code >= 400:
            try:
                message = str(response.json().get("message") or response.reason_phrase)
            except (ValueError, AttributeError):
                message = response.text[:200] or response.reason_phrase
            raise HermesApiError(response.status_code, message)
        return response.json() if response.content else None

    def session_page(
        self, limit: int = 50, before: str | None = None, notebook_path: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of sessions, newest first, and the cursor of the next page (None on the last)."""
        params: dict[str, Any] = {"limit": limit}
        if before is not None:
            params["before"] = before
        if notebook_path is not None:
            params["notebook_path"] = notebook_path
        body = self.request("GET", "sessions", params=params)
        if isinstance(body, list):  # a server from before pages answers the whole list
            return body, None
        return list(body["sessions"]), body.get("next")

    def list_sessions(self, notebook_path: str | None = None, *, page: int = 500) -> list[dict[str, Any]]:
        """Every session (of one notebook, if given), newest first, read page by page."""
        rows, cursor = self.session_page(page, None, notebook_path)
        while cursor is not None:
            more, cursor = self.session_page(page, cursor, notebook_path)
            rows.extend(more)
        return rows

    def create_session(self, **fields: Any) -> dict[str, Any]:
        return dict(self.request("POST", "sessions", body={k: v for k, v in fields.items() if v is not None}))

    def get_session(self, session_id: str) -> dict[str, Any]:
        return dict(self.request("GET", f"sessions/{quote(session_id)}"))

    def edit_session(self, session_id: str, **changes: str | None) -> dict[str, Any]:
        """`PATCH sessions/{sid}`: e.g. `model=` for this and the next turns."""
        return dict(self.request("PATCH", f"sessions/{quote(session_id)}", body=changes))

    def start_run(self, session_id: str, message: str, **binding: str | None) -> dict[str, Any]:
        """Start a turn; `binding` is `notebook_path`, `cell_id`, `kernel_id` (None values are left out)."""
        body = {"message": message, **{k: v for k, v in binding.items() if v}}
        return dict(self.request("POST", f"sessions/{quote(session_id)}/runs", body=body))

    def continue_session(self, session_id: str, **binding: str | None) -> dict[str, Any]:
        """Continue the session's last interrupted or cancelled turn: `{run_id, session_id, continues}`."""
        body = {k: v for k, v in binding.items() if v}
        return dict(self.request("POST", f"sessions/{quote(session_id)}/continue", body=body))

    def run_status(self, run_id: str) -> dict[str, Any]:
        return dict(self.request("GET", f"runs/{quote(run_id)}"))

    def bundle(self, run_id: str) -> dict[str, Any]:
        """The run's cell bundle as the server renders it (its verdict included)."""
        return dict(self.request("GET", f"runs/{quote(run_id)}/bundle"))

    def events(self, run_id: str, after_seq: int = 0, limit: int = 1000) -> dict[str, Any]:
        """A page of a run's rows: `{"events": [JournalRow, ...], "next_seq", "terminal"}`."""
        page = dict(self.request("GET", f"runs/{quote(run_id)}/events", params={"after_seq": after_seq, "limit": limit}))
        page["events"] = events.rows_from_json(page.get("events"))
        return page

    def cancel(self, run_id: str, cause: str | None = None) -> dict[str, Any]:
        """Cancel a run; `cause="kernel_restart"`: this kernel is going away, the run ends interrupted."""
        body = {"cause": cause} if cause else {}
        return dict(self.request("POST", f"runs/{quote(run_id)}/cancel", body=body))

    def stream(self, run_id: str, after_seq: int = 0) -> RunStream:
        return RunStream(self, run_id, after_seq)

    def ws_url(self, run_id: str, after_seq: int) -> str:
        parts = urlsplit(self.server.api_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        path = parts.path + f"runs/{quote(run_id)}/stream"
        return urlunsplit((scheme, parts.netloc, path, f"after_seq={after_seq}", ""))


class StreamLost(RuntimeError):
    """The run's stream could not be followed any more (server gone longer than the patience)."""


_END = object()


class RunStream:
    """Journal rows of one run, from `after_seq + 1` to the terminal row, read on a background thread.

    The thread runs its own asyncio loop (the kernel's loop is blocked while the
    magic waits). Each (re)connect asks for `after_seq = last seq seen`, and rows
    at or below it are dropped, so a drop costs neither a row nor a duplicate.
    After `ws_failures_before_poll` failed connects in a row it polls `events`.
    """

    def __init__(
        self, client: HermesClient, run_id: str, after_seq: int = 0, *,
        retry_delay_s: float = 0.25, patience_s: float = 60.0, ws_failures_before_poll: int = 3,
        poll_interval_s: float = 0.2,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.last_seq = after_seq
        self.retry_delay_s = retry_delay_s
        self.patience_s = patience_s
        self.ws_failures_before_poll = ws_failures_before_poll
        self.poll_interval_s = poll_interval_s
        self.reconnects = 0
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hermes-stream-{run_id}", daemon=True)
        self._finished = False

    def start(self) -> RunStream:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()

    def get_batch(self, timeout_s: float) -> list[JournalRow] | None:
        """Rows that arrived, waiting up to `timeout_s` for the first; None once the stream ended.

        Raises `StreamLost` if the thread gave up.
        """
        if self._finished:
            return None
        items: list[Any] = []
        try:
            items.append(self._queue.get(timeout=timeout_s))
            while True:
                items.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        rows: list[JournalRow] = []
        for item in items:
            if item is _END:
                self._finished = True
            elif isinstance(item, BaseException):
                self._finished = True
                raise StreamLost(str(item)) from item
            else:
                rows.append(item)
        if not rows and self._finished:
            return None
        return rows

    # -- background thread -------------------------------------------------------------------
    def _run(self) -> None:
        try:
            asyncio.run(self._follow())
            self._queue.put(_END)
        except BaseException as exc:  # handed to the reader thread, which raises it
            self._queue.put(exc)

    def _accept(self, row: JournalRow | None) -> bool:
        """Queue a row if it is new; True when it was the terminal row."""
        if row is None or row.seq <= self.last_seq:
            return False
        self.last_seq = row.seq
        self._queue.put(row)
        return row.terminal is True

    async def _follow(self) -> None:
        failures = 0
        polling = False
        lost_since: float | None = None
        while not self._stop.is_set():
            try:
                done = await (self._poll_once() if polling else self._ws_once())
                if not done and not polling:
                    self.reconnects += 1
                    polling = await self._run_is_over()  # closed without a terminal row: drain over REST
            except (OSError, httpx.TransportError, _WsFailed) as exc:
                failures += 1
                polling = polling or failures >= self.ws_failures_before_poll
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > self.patience_s:
                    raise StreamLost(f"lost the run stream for {self.patience_s:.0f} s: {exc}") from exc
                await asyncio.sleep(self.retry_delay_s)
                continue
            failures, lost_since = 0, None
            if done:
                return

    async def _run_is_over(self) -> bool:
        """After a stream closed without a terminal row: did the run end without one (a dead run)?"""
        status = await asyncio.to_thread(self.client.run_status, self.run_id)
        return status.get("status") != "running"

    async def _ws_once(self) -> bool:
        """One WebSocket connection; True once the terminal row arrived."""
        from tornado.httpclient import HTTPClientError, HTTPRequest
        from tornado.websocket import WebSocketClosedError, websocket_connect

        headers = {"Authorization": f"token {self.client.server.token}"} if self.client.server.token else {}
        request = HTTPRequest(self.client.ws_url(self.run_id, self.last_seq), headers=headers, connect_timeout=10)
        try:
            conn = await websocket_connect(request)
        except HTTPClientError as exc:
            if exc.code in (401, 403, 404):
                raise HermesApiError(exc.code, f"run stream refused: {exc}") from exc
            raise _WsFailed(str(exc)) from exc
        open_ = True
        try:
            while not self._stop.is_set():
                message = await conn.read_message()
                if message is None:
                    open_ = False
                    return False  # closed by the server or the network: reconnect from the cursor
                if self._accept(events.parse_row(message)):  # None for a heartbeat
                    return True
        except WebSocketClosedError:
            open_ = False
            return False
        finally:
            await _close(conn, wait=open_)
        return True

    async def _poll_once(self) -> bool:
        """One REST read of the rows after the cursor; True once the run is over."""
        page = await asyncio.to_thread(self.client.events, self.run_id, self.last_seq)
        terminal = any([self._accept(row) for row in page.get("events", [])])
        if terminal or page.get("terminal"):
            return True
        if not page.get("events"):
            await asyncio.sleep(self.poll_interval_s)
        return False


async def _close(conn: Any, *, wait: bool, timeout_s: float = 2.0) -> None:
    """Close a WebSocket; when we close first, wait for the handshake so its socket is released with the loop."""
    conn.close()
    if not wait:
        return
    try:
        async with asyncio.timeout(timeout_s):
            while await conn.read_message() is not None:
                pass
    except TimeoutError:
        pass


class _WsFailed(RuntimeError):
    """A WebSocket connect failed for a reason worth retrying."""
