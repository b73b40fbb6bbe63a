"""`%%hermes` / `%hermes`: ask the hermes server from a notebook cell and stream the answer into it.

The kernel is only a client: the server runs the agent and journals every
event; the magic starts the run, follows its stream and renders it. It never
executes what the agent writes. Interrupting the kernel (■) cancels the run on
the server and keeps its partial output and the cancel note, without a traceback.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..api_client import HermesApiError, HermesClient, RunStream, ServerInfo, StreamLost, find_server
from .parts import earlier_parts
from .view import LiveCell

USAGE = """\
%%hermes [--session NAME | --new] [--model NAME]   the cell body is the prompt
                                    (--session NAME: this kernel's session of that title, made if none;
                                    --model switches the session's model from this turn on)
%hermes PROMPT                      a one-line prompt
%hermes sessions                    list this notebook's sessions, newest first (a kernel sees only its
                                    own notebook's sessions; the sidebar shows them all)
%hermes cancel                      cancel the running turn of this notebook's session
%hermes continue                    continue this notebook session's last interrupted or stopped answer"""
#: Rows `%hermes sessions` shows: one page of the listing (this notebook's sessions), newest first.
SESSIONS_SHOWN = 50
#: Seconds between two looks at a queued turn (is it running yet?).
QUEUED_POLL_S = 0.25
#: Seconds to wait for the cancel row after an interrupt before leaving the cell.
CANCEL_WAIT_S = 10.0
#: Seconds an interrupt waits to see whether a shutdown follows. jupyter_client interrupts a kernel
#: right before it restarts or shuts it down; that run is the server's to settle (`kernel_restart`),
#: not the user's to cancel.
SHUTDOWN_GRACE_S = 0.5
#: Seconds a kernel's shutdown waits while a cell ends its run with the marker: the cell saved by a
#: headless frontend (nbclient, papermill) holds the partial and the marker. jupyter_client kills a
#: kernel that has not exited after `shutdown_wait_time` (5 s by default), so this stays below it.
SHUTDOWN_HOLD_S = 3.0
#: Seconds the cell waits for the interrupted run's terminal row before it leaves with what it has.
SHUTDOWN_SETTLE_S = 2.0
_KERNEL_FILE = re.compile(r"kernel-(.+)\.json$")


class UsageError(ValueError):
    """The magic line could not be understood."""


@dataclass(frozen=True)
class Request:
    """A parsed magic line: an action or a prompt, and which session to use."""

    action: str  # "ask", "sessions", "cancel", "continue"
    prompt: str = ""
    session: str | None = None
    new: bool = False
    model: str | None = None


def _option_value(head: str, tail: str, name: str) -> tuple[str, str]:
    """The value of `--name VALUE` or `--name=VALUE`, and the rest of the line."""
    if head.startswith(f"--{name}="):
        value, rest = head.split("=", 1)[1], tail
    else:
        value, _, rest = tail.strip().partition(" ")
    if not value:
        raise UsageError(f"--{name} needs a NAME\n\n{USAGE}")
    return value, rest


def parse(line: str, cell: str | None) -> Request:
    """Parse by hand: a prompt is free text, so shlex (as magic_arguments uses) would choke on `what's`."""
    rest = line.strip()
    session: str | None = None
    model: str | None = None
    new = False
    while rest.startswith("--"):
        head, _, tail = rest.partition(" ")
        if head == "--new":
            new = True
        elif head == "--session" or head.startswith("--session="):
            session, tail = _option_value(head, tail, "session")
        elif head == "--model" or head.startswith("--model="):
            model, tail = _option_value(head, tail, "model")
        else:
            raise UsageError(f"unknown option {head}\n\n{USAGE}")
        rest = tail.strip()
    if new and session:
        raise UsageError(f"use either --session NAME or --new\n\n{USAGE}")
    if cell is None and rest in ("sessions", "cancel", "continue"):
        if rest == "continue" and new:
            raise UsageError(f"a new session has nothing to continue\n\n{USAGE}")
        return Request(rest, session=session, new=new, model=model)
    prompt = cell.strip() if cell is not None else rest
    if cell is not None and rest:
        raise UsageError(f"%%hermes takes only options on its first line\n\n{USAGE}")
    if not prompt:
        raise UsageError(USAGE)
    return Request("ask", prompt, session, new, model)


@dataclass(frozen=True)
class KernelContext:
    """Where this cell runs: the notebook (server-relative when known), the cell and the kernel."""

    notebook_path: str | None
    cell_id: str | None
    kernel_id: str | None


def kernel_context(shell: Any, server: ServerInfo, env: dict[str, str] | None = None) -> KernelContext:
    env = dict(os.environ) if env is None else env
    return KernelContext(_notebook_path(env.get("JPY_SESSION_NAME"), server.root_dir), _cell_id(shell), _kernel_id())


def _notebook_path(name: str | None, root_dir: str | None) -> str | None:
    """JPY_SESSION_NAME is an absolute path when the server set it; sessions use the root-relative one."""
    if not name:
        return None
    if root_dir and os.path.isabs(name):
        try:
            relative = Path(name).resolve().relative_to(Path(root_dir).resolve())
        except ValueError:
            return name
        return relative.as_posix()
    return name


def _cell_id(shell: Any) -> str | None:
    """The executing cell's id, from the execute request's metadata (JupyterLab and Notebook 7 send it)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent("shell")
    except (AttributeError, LookupError, TypeError):
        return None
    value = (parent or {}).get("metadata", {}).get("cellId")
    return str(value) if value else None


def _kernel_id() -> str | None:
    try:
        from ipykernel.connect import get_connection_file

        match = _KERNEL_FILE.search(os.path.basename(get_connection_file()))
    except (ImportError, RuntimeError, AttributeError):
        return None
    return match.group(1) if match else None


@magics_class
class HermesMagics(Magics):
    """The `hermes` line/cell magic. One server client and one current session per kernel."""

    def __init__(self, shell: Any, client_factory: Callable[[], HermesClient] | None = None) -> None:
        super().__init__(shell)
        self._client_factory = client_factory or (lambda: HermesClient(find_server()))
        self._client: HermesClient | None = None
        self.session_id: str | None = None
        self.last_cell: LiveCell | None = None
        self.shutting_down = watch_shutdown(getattr(shell, "kernel", None))

    def close(self) -> None:
        """Release the HTTP connections (on `%unload_ext`)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    @property
    def client(self) -> HermesClient:
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    @line_cell_magic
    def hermes(self, line: str, cell: str | None = None) -> None:
        """Ask the hermes agent; the answer streams into this cell. See `%hermes?`."""
        try:
            request = parse(line, cell)
        except UsageError as exc:
            print(exc)
            return
        try:
            if request.action == "sessions":
                self._show_sessions()
            elif request.action == "cancel":
                self._cancel_current()
            elif request.action == "continue":
                self._continue(request)
            else:
                self._ask(request)
        except HermesApiError as exc:
            print(f"hermes: the server refused: {exc.message} (HTTP {exc.status})")

    # -- sessions ------------------------------------------------------------------------------
    def _context(self) -> KernelContext:
        return kernel_context(self.shell, self.client.server)

    def _resolve_session(self, request: Request, ctx: KernelContext) -> str:
        """`--session NAME`: the session titled NAME; `--new`: a fresh one; else this notebook's bound session.

        A fresh session gets no title here: the server names it after its first prompt.
        """
        if request.new:
            created = self.client.create_session(notebook_path=ctx.notebook_path, kernel_id=ctx.kernel_id)
            self.session_id = str(created["session_id"])
        elif request.session:
            named = [s for s in self.client.list_sessions() if s.get("title") == request.session]
            if named:
                self.session_id = str(named[0]["session_id"])
            else:
                created = self.client.create_session(
                    title=request.session, notebook_path=ctx.notebook_path, kernel_id=ctx.kernel_id
                )
                self.session_id = str(created["session_id"])
        elif self.session_id is None:
            bound = self._bound_session(ctx)
            if bound is not None:
                self.session_id = bound
            else:
                created = self.client.create_session(notebook_path=ctx.notebook_path, kernel_id=ctx.kernel_id)
                self.session_id = str(created["session_id"])
        return self.session_id

    def _bound_session(self, ctx: KernelContext) -> str | None:
        """The session this notebook's kernel is bound to, after a kernel restart or a reopen.

        A restart keeps the kernel id, and the sidebar's "Bind to" sets it too: the newest
        session of this notebook bound to this kernel wins over sessions of the notebook bound
        elsewhere (another kernel, or none); only without one is it the notebook's newest.
        """
        if not ctx.notebook_path:
            return None
        mine = [r for r in self.client.list_sessions(ctx.notebook_path) if not r.get("corrupt")]
        newest = mine[0] if mine else None
        chosen = next((r for r in mine if ctx.kernel_id and r.get("kernel_id") == ctx.kernel_id), newest)
        return str(chosen["session_id"]) if chosen is not None else None

    def _show_sessions(self) -> None:
        from IPython.display import Markdown, display

        rows, more = self.client.session_page(SESSIONS_SHOWN)
        lines = ["| | session | title | messages | notebook | updated |", "|---|---|---|---|---|---|"]
        for row in rows:
            mark = "▶" if row.get("session_id") == self.session_id else ""
            updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(row.get("updated_at") or 0)))
            title = str(row.get("title") or "").replace("|", "\\|")
            lines.append(
                f"| {mark} | `{row.get('session_id')}` | {title} | {row.get('message_count', 0)} | "
                f"{row.get('notebook_path') or ''} | {updated} |"
            )
        if more is not None:
            lines.append(f"\n*The {SESSIONS_SHOWN} most recent sessions; `jupyter hermes sessions` lists them all.*")
        display(Markdown("\n".join(lines) if rows else "*No hermes sessions yet.*"))

    def _current_session(self) -> str | None:
        """This kernel's session, else the one bound to this kernel, else the notebook's newest; never a new one."""
        if self.session_id is None:
            self.session_id = self._bound_session(self._context())
        return self.session_id

    def _cancel_current(self) -> None:
        self._current_session()
        run_id = self.client.get_session(self.session_id).get("active_stream_id") if self.session_id else None
        if not run_id:
            print("hermes: nothing is running in this notebook's session.")
            return
        self.client.cancel(str(run_id))
        print(f"hermes: cancelled run {run_id}.")

    # -- asking --------------------------------------------------------------------------------
    def _ask(self, request: Request) -> None:
        ctx = self._context()
        binding = {"notebook_path": ctx.notebook_path, "cell_id": ctx.cell_id, "kernel_id": ctx.kernel_id}
        session_id = self._resolve_session(request, ctx)
        try:
            started = self._start(session_id, request, binding)
        except HermesApiError as exc:
            if exc.status != 404 or request.session or request.new:
                raise
            self.session_id = None  # the remembered session was deleted meanwhile: use a fresh one
            session_id = self._resolve_session(request, ctx)
            started = self._start(session_id, request, binding)
        self._show_run(session_id, started)

    def _continue(self, request: Request) -> None:
        """`%hermes continue`: the rest of the last interrupted answer streams into this cell.

        This cell, not the one the answer began in: a kernel writes only to the cell it
        runs. Once it ends, the cell holds the server's bundle of the whole answer (every
        part, the marker between them kept), so it reads as one answer.
        """
        if request.session:
            named = [s for s in self.client.list_sessions() if s.get("title") == request.session]
            self.session_id = str(named[0]["session_id"]) if named else None
        else:
            self._current_session()
        if self.session_id is None:
            print("hermes: this notebook has no hermes session yet, so there is nothing to continue.")
            return
        ctx = self._context()
        started = self.client.continue_session(
            self.session_id, notebook_path=ctx.notebook_path, cell_id=ctx.cell_id, kernel_id=ctx.kernel_id)
        self._show_run(self.session_id, started)

    def _show_run(self, session_id: str, started: dict[str, Any]) -> None:
        """Stream a started (or queued) run into this cell, the magic's one way to show a run."""
        run_id = str(started["run_id"])
        cell = LiveCell(session_id, run_id, base_path=urlsplit(self.client.server.url).path or "/")
        if started.get("continues"):  # live as it ends: the whole answer, every part
            cell.output.earlier = earlier_parts(self.client, session_id, str(started["continues"]))
        self.last_cell = cell
        cell.show(queued=bool(started.get("queued")))
        if started.get("queued") and not self._wait_queued(cell, run_id):
            return
        stream = self.client.stream(run_id).start()
        try:
            with shutdown_hold(self.shutting_down):
                try:
                    self._follow(cell, stream)
                except KeyboardInterrupt:
                    self._stop_after_interrupt(cell, run_id)
        except StreamLost as exc:
            cell.finish()
            print(f"hermes: lost the stream ({exc}); the run goes on on the server: "
                  "`jupyter hermes recover` fills in this cell once it is saved.")
        finally:
            stream.close()

    def _start(self, session_id: str, request: Request, binding: dict[str, str | None]) -> dict[str, Any]:
        """`--model` first (the session keeps it for later turns too), then the turn."""
        if request.model:
            self.client.edit_session(session_id, model=request.model)
        return self.client.start_run(session_id, request.prompt, **binding)

    def _wait_queued(self, cell: LiveCell, run_id: str) -> bool:
        """A turn sent while another runs waits in the server's queue: True once it runs.

        ■ meanwhile takes it off the queue; so does Stop in the cell or the sidebar.
        """
        try:
            while True:
                try:
                    status = self.client.run_status(run_id).get("status")
                except HermesApiError as exc:
                    if exc.status != 404:
                        raise
                    status = None  # taken off the queue before it started
                if status != "queued":
                    break
                time.sleep(QUEUED_POLL_S)
        except KeyboardInterrupt:
            self.client.cancel(run_id)
            status = None
            mark_failed(self.shell, RunStopped("the queued hermes message was taken off the queue"))
        if status is None:
            cell.finish("cancelled")
            print("hermes: this message was taken off the queue before it started.")
            return False
        cell.started()
        return True

    def _follow(self, cell: LiveCell, stream: RunStream) -> None:
        wait_s = 0.05
        while True:
            rows = stream.get_batch(wait_s)
            if rows is None:
                break
            cell.feed(rows)
            wait_s = max(0.01, cell.tick())
        self._finish(cell)

    def _finish(self, cell: LiveCell) -> None:
        """End the cell with its static bundle: the kernel's own render of the rows (the same rows and
        renderer as the server's bundle route: the same bytes), or the server's bundle when the run has no
        terminal row (its verdict) or continues another (the whole answer, every part)."""
        if cell.output.terminal is None:
            cell.finish(bundle=self.client.bundle(cell.output.run_id))
        elif not cell.output.continues:
            cell.finish()
        else:
            try:
                bundle = self.client.bundle(cell.output.run_id)
            except Exception:  # noqa: BLE001 - without the server's bundle the cell keeps this part's own render
                bundle = None
            cell.finish(bundle=bundle)

    def _stop_after_interrupt(self, cell: LiveCell, run_id: str) -> None:
        """■ during a run: the cell ends with the partial output and the server's cancel note, no traceback.

        Swallowing the interrupt alone would let Run All go on to the next
        cell, so the cell is still marked failed (see `mark_failed`).
        """
        try:
            if self.shutting_down.wait(SHUTDOWN_GRACE_S):
                self._end_for_restart(cell, run_id)
            else:
                self._cancel_after_interrupt(cell, run_id)
        except KeyboardInterrupt:
            cell.finish()  # a second ■ while waiting for the cancel row: leave now, the server still cancels
        mark_failed(self.shell, RunStopped("the hermes run was stopped by a kernel interrupt"))

    def _end_for_restart(self, cell: LiveCell, run_id: str) -> None:
        """The kernel is going away: tell the server (a server that did not start this kernel cannot see its
        restart), then end the cell with the partial output and the interrupted marker, so a headless
        frontend saves them without a recover step. Its shutdown waits for this (`shutdown_hold`)."""
        try:
            self._cancel_after_interrupt(cell, run_id, cause="kernel_restart", wait_s=SHUTDOWN_SETTLE_S)
        except Exception:  # noqa: BLE001 - the server is unreachable: the run is settled later, by recovery
            cell.finish()

    def _cancel_after_interrupt(
        self, cell: LiveCell, run_id: str, *, cause: str | None = None, wait_s: float = CANCEL_WAIT_S
    ) -> None:
        """Cancel on the server, then read the rows up to the cancel row so the cell shows how it ended."""
        try:
            self.client.cancel(run_id, cause)
            deadline = time.monotonic() + wait_s
            while cell.output.terminal is None and time.monotonic() < deadline:
                page = self.client.events(run_id, cell.output.seq)
                cell.feed(page.get("events", []))
                if page.get("terminal"):
                    break
                if not page.get("events"):
                    time.sleep(0.05)
        finally:
            if cell.output.terminal is not None:
                self._finish(cell)
            else:
                cell.finish()


class RunStopped(Exception):
    """What the kernel reports for a cell whose run was stopped by an interrupt (its name, no traceback)."""


def mark_failed(shell: Any, error: BaseException) -> None:
    """Make the running cell's execute reply an error without printing anything.

    ipykernel answers `status: error` when the cell's execution result holds an
    error, and then drops the cells queued after it (Run All stops, as after any
    interrupt); only an exception that reaches IPython would also print its
    traceback. Outside a cell being run (a magic called directly) this does nothing.
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    if result is not None and getattr(result, "error_in_exec", None) is None:
        result.error_in_exec = error


class _Hold:
    """How many cells are following a run right now; a shutdown waits (briefly) while any is."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()


def _hold_of(event: threading.Event) -> _Hold:
    hold = getattr(event, "hermes_hold", None)
    if hold is None:
        hold = _Hold()
        event.hermes_hold = hold  # type: ignore[attr-defined]
    return hold


class shutdown_hold:  # noqa: N801 - used as a context manager, like contextlib's
    """While a cell follows a run, a shutdown of its kernel waits for the cell to end (`SHUTDOWN_HOLD_S`)."""

    def __init__(self, event: threading.Event) -> None:
        self.hold = _hold_of(event)

    def __enter__(self) -> None:
        with self.hold.lock:
            self.hold.count += 1

    def __exit__(self, *exc: object) -> None:
        try:  # ipykernel runs the cell inside its shell loop: release once the cell's reply is sent
            asyncio.get_running_loop().call_soon(self._release)
        except RuntimeError:  # no loop (a plain IPython shell): now
            self._release()

    def _release(self) -> None:
        with self.hold.lock:
            self.hold.count -= 1


async def _released(hold: _Hold, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while hold.count > 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def watch_shutdown(kernel: Any) -> threading.Event:
    """An event set when the kernel receives a shutdown (or restart) request.

    The control thread handles that request while the magic blocks the main
    thread, so wrapping its handler is how the magic learns, after the
    interrupt jupyter_client sends first, that a restart is under way. The
    wrapped handler then lets a cell that follows a run end it first (`shutdown_hold`).
    """
    event = threading.Event()
    handlers = getattr(kernel, "control_handlers", None)
    if not isinstance(handlers, dict) or "shutdown_request" not in handlers:
        return event
    original = handlers["shutdown_request"]
    if getattr(original, "hermes_event", None) is not None:
        return original.hermes_event  # type: ignore[no-any-return]

    hold = _hold_of(event)

    async def shutdown_request(*args: Any) -> Any:
        event.set()
        await _released(hold, SHUTDOWN_HOLD_S)
        result = original(*args)
        return await result if inspect.isawaitable(result) else result

    shutdown_request.hermes_event = event  # type: ignore[attr-defined]
    handlers["shutdown_request"] = shutdown_request
    return event


def load_ipython_extension(ip: Any) -> None:
    """`%load_ext hermes_jupyter`: register the `hermes` magic (once per shell)."""
    ip.register_magics(HermesMagics(ip))


def unload_ipython_extension(ip: Any) -> None:
    """`%unload_ext hermes_jupyter`: remove the `hermes` magic again."""
    for kind in ("line", "cell"):
        ip.magics_manager.magics[kind].pop("hermes", None)
    registered = ip.magics_manager.registry.pop("HermesMagics", None)
    if isinstance(registered, HermesMagics):
        registered.close()
