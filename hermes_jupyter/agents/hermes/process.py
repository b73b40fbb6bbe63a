"""The Hermes Agent child process: a scrubbed environment, spawn, line I/O, exit detection.

The child never inherits the server's secrets (JupyterHub and Jupyter tokens, any
`*_TOKEN` / `*_SECRET` / `*_KEY` / `*_PASSWORD` not allow-listed). It runs in its own
process group, so killing it also kills the shells its tools started.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

# The scrubber lives in sandbox.py (shared by every agent); re-exported here for older imports.
from ..sandbox import ALWAYS_DROPPED as ALWAYS_DROPPED
from ..sandbox import SECRET_PATTERNS as SECRET_PATTERNS
from ..sandbox import is_secret_name as is_secret_name
from ..sandbox import scrubbed_env as scrubbed_env

log = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("runner.py")
LINE_LIMIT_BYTES = 64 * 1024 * 1024  # one protocol line carries a turn's whole context


def cached_venv() -> Path:
    """Where `scripts/ensure_hermes_agent.sh` installs hermes-agent."""
    if os.environ.get("HERMES_AGENT_VENV"):
        return Path(os.environ["HERMES_AGENT_VENV"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "hermes-jupyter" / "hermes-agent-venv"


def _script_interpreter(script: str) -> str | None:
    """The Python named on a console script's shebang line (the venv hermes was installed into)."""
    try:
        with open(script, "rb") as f:
            first = f.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if first.startswith("#!") and "python" in first:
        return first[2:].strip().split()[0]
    return None


def default_command() -> list[str]:
    """The runner under the cached venv's Python, else under the Python of `hermes` on PATH."""
    python = cached_venv() / "bin" / "python"
    if python.exists():
        return [str(python), str(RUNNER)]
    hermes = shutil.which("hermes")
    interpreter = _script_interpreter(hermes) if hermes else None
    return [interpreter or "python3", str(RUNNER)]


class AgentStartError(RuntimeError):
    """The agent process could not be started or did not become ready."""


class AgentGone(ConnectionError):
    """The agent process exited; nothing can be sent to it any more."""


class AgentProcess:
    """One running agent process: JSON lines out, JSON lines in, and a callback when it exits."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        on_message: Callable[[dict[str, Any]], None],
        on_exit: Callable[[AgentProcess], None],
        cwd: str | None = None,
        stderr_tail_lines: int = 200,
    ) -> None:
        self.argv = argv
        self._env = env
        self._cwd = cwd
        self._on_message = on_message
        self._on_exit = on_exit
        self._proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._ready: asyncio.Future[dict[str, Any]] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=stderr_tail_lines)
        self._stderr_lines = 0  # lines read so far, for `stderr_mark`
        self._write_lock = asyncio.Lock()
        self.exited = asyncio.Event()
        self.info: dict[str, Any] = {}

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and not self.exited.is_set()

    def stderr_tail(self, lines: int = 20, since: int = 0) -> str:
        """The last `lines` lines of stderr, only from those written after `stderr_mark()` returned `since`."""
        fresh = max(0, min(len(self._stderr), self._stderr_lines - since))
        kept = list(self._stderr)[len(self._stderr) - fresh:] if fresh else []
        return "\n".join(kept[-lines:])

    def stderr_mark(self) -> int:
        """A mark of how much stderr was read so far: a turn quotes only what came after it."""
        return self._stderr_lines

    def describe_exit(self, since: int = 0) -> str:
        code = self.returncode
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
        tail = self.stderr_tail(5, since)
        return f"the Hermes Agent process {how}" + (f"; last output:\n{tail}" if tail else "")

    async def start(self, ready_timeout_s: float) -> dict[str, Any]:
        """Spawn and wait for the runner's `ready` line; raises AgentStartError on failure."""
        self._ready = asyncio.get_running_loop().create_future()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self._env, cwd=self._cwd,
                limit=LINE_LIMIT_BYTES, start_new_session=True,
            )
        except OSError as exc:
            raise AgentStartError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]
        exited = asyncio.create_task(self.exited.wait())
        waiters: set[asyncio.Future[Any]] = {self._ready, exited}
        try:
            await asyncio.wait(waiters, timeout=ready_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
        if self._ready.done() and self._ready.exception() is None:
            self.info = self._ready.result()
            return self.info
        error = self._ready.exception() if self._ready.done() else AgentStartError(
            f"the Hermes Agent process was not ready after {ready_timeout_s:g} s")
        self.kill()
        await self.exited.wait()
        self._ready.exception()  # retrieved: a late failure set by the reader is not "never retrieved"
        raise error if isinstance(error, AgentStartError) else AgentStartError(str(error))

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while line := await self._proc.stdout.readline():
                self._handle_line(line)
        except (ValueError, asyncio.LimitOverrunError) as exc:
            log.error("hermes agent: unreadable protocol line (%s); killing the process", exc)
            self.kill()
        await self._proc.wait()
        self.kill_group()  # shells the runner's tools left behind would hold stderr open
        _, pending = await asyncio.wait(self._tasks[1:], timeout=1.0)
        for task in pending:
            task.cancel()
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(AgentStartError(self.describe_exit()))
        self.exited.set()
        self._on_exit(self)

    def _handle_line(self, line: bytes) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            log.warning("hermes agent: ignoring a non-JSON line on stdout: %r", line[:200])
            return
        kind = message.get("ev") if isinstance(message, dict) else None
        if kind == "ready" and self._ready is not None and not self._ready.done():
            self._ready.set_result(message)
        elif kind == "fatal" and self._ready is not None and not self._ready.done():
            self._ready.set_exception(AgentStartError(str(message.get("message"))))
        elif kind:
            self._on_message(message)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while line := await self._proc.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            self._stderr.append(text)
            self._stderr_lines += 1
            log.debug("hermes agent[%s]: %s", self.pid, text)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one op; raises AgentGone if the process has exited."""
        if self._proc is None or self._proc.stdin is None or self.exited.is_set():
            raise AgentGone("the Hermes Agent process is not running")
        data = orjson.dumps(message, default=str) + b"\n"
        async with self._write_lock:
            try:
                self._proc.stdin.write(data)
                await self._proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                raise AgentGone(str(exc) or "the Hermes Agent process closed its input") from exc

    def kill(self) -> None:
        """SIGKILL the runner and its process group (its tools' shells)."""
        if self._proc is None or self._proc.returncode is not None:
            return
        self.kill_group()
        with contextlib.suppress(ProcessLookupError):
            self._proc.kill()

    def kill_group(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """Ask the runner to stop, then kill it if it lingers; returns once it has exited."""
        if self._proc is None:
            return
        if not self.exited.is_set():
            with contextlib.suppress(AgentGone):
                await self.send({"op": "shutdown"})
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            try:
                await asyncio.wait_for(self.exited.wait(), timeout_s)
            except TimeoutError:
                self.kill()
                await self.exited.wait()
        await asyncio.gather(*self._tasks, return_exceptions=True)
