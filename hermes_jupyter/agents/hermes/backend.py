"""HermesAgent: Hermes Agent driven out of process through our runner (see docs/hermes-acp-notes.md).

One child process serves every session of this backend. The engine's history travels with
each turn, so a crashed child is simply respawned (with backoff) for the next turn; nothing
has to be reloaded into it. A turn whose child dies returns `outcome="crashed"`; a turn that ignores an interrupt for `interrupt_timeout`
seconds gets its child killed and respawned, so a session can never wedge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from dataclasses import dataclass, field
from typing import Any, cast

from traitlets import Any as AnyTrait
from traitlets import Bool, Dict, Enum, Float, List, Unicode, default
from traitlets.config import Configurable

from ...events import APPROVAL, CLARIFY, STATUS
from .. import approvals, clarify
from ..always import AlwaysUnavailable
from ..approvals import ApprovalHandler, ApprovalRequest
from ..base import EventSink, TurnRequest, TurnResult
from ..bubblewrap import SandboxMode, SandboxUnavailable, wrap
from ..clarify import ClarifyHandler, ClarifyRequest
from ..errors import failed_turn
from ..models import model_entry
from ..tools_registry import ToolRegistry, call_tool
from . import protocol
from .home_secrets import hermes_home, known_secrets
from .process import AgentGone, AgentProcess, AgentStartError, default_command, scrubbed_env

log = logging.getLogger(__name__)

DEFAULT_TOOLSETS = ("todo", "memory", "session_search", "skills", "web", "vision", "clarify")
DEFAULT_ENV_ALLOW = (
    "OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "NOUS_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY",
)
# Interpreter settings of the server's environment would mix its packages into Hermes' venv.
_PYTHON_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH")




@dataclass(slots=True)
class _RunSlot:
    sink: EventSink
    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    proc: AgentProcess | None = None
    interrupted: bool = False
    stderr_mark: int = 0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    #: question id -> (its answering task, the event and payload that resolve it unanswered)
    questions: dict[str, tuple[asyncio.Task[None], str, dict[str, Any]]] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    #: The turn's notebook tools (offered to Hermes, run here) and the calls of them still running.
    tools: ToolRegistry | None = None
    tool_calls: set[asyncio.Task[None]] = field(default_factory=set)


class HermesAgent(Configurable):
    """Hermes Agent (hermes-agent 0.19) in its own process and venv."""

    name = "hermes"

    command = List(
        Unicode(), config=True,
        help="argv that starts the agent process: a Python with hermes-agent installed, then the path "
        "of hermes_jupyter/agents/hermes/runner.py. Default: the venv of scripts/ensure_hermes_agent.sh "
        "($HERMES_AGENT_VENV or ~/.cache/hermes-jupyter/hermes-agent-venv), else the Python of `hermes` on PATH.",
    )
    model = Unicode(
        None, allow_none=True, config=True,
        help="Model name for Hermes (default None: `model.default` of Hermes' config.yaml).",
    )
    toolsets = List(
        Unicode(), default_value=list(DEFAULT_TOOLSETS), config=True,
        help="Hermes toolsets the agent may use. Add 'terminal' for shell access (dangerous commands "
        "then ask for approval), 'file' or 'code_execution' at your own risk: they run without asking, "
        "inside the sandbox where there is one (see `sandbox`).",
    )
    env = Dict(
        value_trait=Unicode(), config=True,
        help="Extra environment variables for the agent process (e.g. HERMES_HOME), set after scrubbing.",
    )
    env_allow = List(
        Unicode(), default_value=list(DEFAULT_ENV_ALLOW), config=True,
        help="fnmatch patterns of *_TOKEN/*_SECRET/*_KEY/*_PASSWORD variables the agent may inherit "
        "(default: common model-provider API keys). Jupyter and JupyterHub tokens never pass.",
    )
    cwd = Unicode(None, allow_none=True, config=True,
                  help="Working directory of the agent process (default None: the server's).")
    sandbox = Enum(
        ["auto", "require", "off"], default_value="auto", config=True,
        help="Run the agent process in a bubblewrap sandbox that cannot see the server's process, the Jupyter "
        "runtime and config dirs or the hermes state dir (docs/agent-reach.md). auto (default): where bwrap "
        "works, else without it and with a warning in the log; require: refuse to start without it; off: never.",
    )
    bwrap = Unicode("bwrap", config=True, help="The bubblewrap executable (Debian and Ubuntu package bubblewrap).")
    sandbox_writable = List(
        Unicode(), config=True,
        help="Paths the sandboxed agent may write, besides its working directory and HERMES_HOME "
        "(the server adds its root_dir).",
    )
    sandbox_hidden = List(
        Unicode(), config=True,
        help="Paths hidden from the sandboxed agent, besides the Jupyter runtime and config dirs and the "
        "hermes state dir (the server adds its own).",
    )
    persist_sessions = Bool(
        True, config=True, help="Let Hermes record the sessions in its own state.db (default True).",
    )
    startup_timeout = Float(60.0, config=True, help="Seconds to wait for the agent process to be ready.")
    interrupt_timeout = Float(
        10.0, config=True,
        help="Seconds a turn may take to stop after an interrupt before the process is killed and respawned.",
    )
    idle_timeout = Float(
        0.0, config=True,
        help="Seconds of silence from a running turn (no event, no pending approval) after which the "
        "process is killed and the turn fails (default 0: never).",
    )
    approval_timeout = Float(
        300.0, config=True, help="Seconds an approval may stay unanswered before it counts as a deny.",
    )
    waiting_note_after = Float(
        15.0, config=True,
        help="Seconds a request to the model may go without an answer before a status note says it is being "
        "waited for, updated as often; one note per wait, retries included (default 15; 0: never).",
    )
    respawn_backoff = Float(
        1.0, config=True,
        help="Seconds before a respawn after the second crash in a row, doubling per crash (the first is immediate).",
    )
    respawn_backoff_max = Float(30.0, config=True, help="Longest wait before a respawn, in seconds.")
    approval_handler = AnyTrait(
        None, allow_none=True,
        help="async (ApprovalRequest) -> one of its options ('allow_once', 'allow_session', 'allow_always', "
        "'deny'). None denies every request.",
    )
    clarify_handler = AnyTrait(
        None, allow_none=True,
        help="async (ClarifyRequest) -> the user's answer. None leaves every question unanswered.",
    )
    tools_factory = AnyTrait(
        None, allow_none=True,
        help="Builds a turn's notebook tools (agents/tools.py; set by the server). Hermes is offered them and "
        "each call is run here, through the same registry, approvals and journal as for `openai`. None: no tools.",
    )
    tool_timeout = Float(
        900.0, config=True,
        help="Seconds Hermes waits for a notebook tool's answer (a run_code approval and its run included).",
    )
    warm_start = Bool(
        True, config=True,
        help="When the server starts, start the agent process and build one agent in the background, so the "
        "first turn does not wait for them (default True).",
    )

    @default("command")
    def _default_command(self) -> list[str]:
        return default_command()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._proc: AgentProcess | None = None
        self._spawn_lock = asyncio.Lock()
        self._runs: dict[str, _RunSlot] = {}
        self._killed: set[int] = set()
        self._crashes = 0
        self._respawn_at = 0.0
        self._closed = False
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}

    @property
    def pid(self) -> int | None:
        """The agent process id, while one is running."""
        return self._proc.pid if self._proc is not None and self._proc.alive else None

    async def start(self) -> None:
        """Spawn the agent process now rather than at the first turn (it takes about 1-3 s), and have it
        build one agent with this backend's settings, which the first session's first turn takes."""
        proc = await self._ensure_process()
        await self._send_quietly(proc, protocol.warm_op(
            model=self.model, toolsets=list(self.toolsets), persist=self.persist_sessions))

    async def run_turn(self, request: TurnRequest, sink: EventSink) -> TurnResult:
        slot = self._runs[request.run_id] = _RunSlot(sink)
        kept = request.continues.partial if request.continues is not None else None
        translator = protocol.TurnTranslator(sink, request.backend_session_id, len(request.history), kept=kept,
                                             waiting_note_after=self.waiting_note_after)
        try:
            try:
                proc = await self._ensure_process()
            except AgentStartError as exc:
                return failed_turn("agent_unavailable", str(exc), backend_session_id=request.backend_session_id)
            if slot.interrupted:
                return TurnResult(outcome="interrupted", backend_session_id=request.backend_session_id)
            slot.proc = proc
            slot.stderr_mark = proc.stderr_mark()
            slot.tools = self.tools_factory(request, sink) if self.tools_factory is not None else None
            await proc.send(protocol.turn_op(
                request, model=self.model, toolsets=list(self.toolsets), persist=self.persist_sessions,
                approval_timeout_s=self.approval_timeout, tool_timeout_s=self.tool_timeout,
                host_tools=slot.tools.schemas() if slot.tools is not None else [],
            ))
            return await self._follow(request, slot, translator)
        except AgentGone:
            return translator.cut_short(kind="agent_crashed", detail=self._exit_detail(slot),
                                        interrupted=slot.interrupted)
        except asyncio.CancelledError:
            if slot.proc is not None:  # the engine gave up on this turn: stop it in the child too
                asyncio.ensure_future(self._send_quietly(slot.proc, protocol.interrupt_op(request.run_id)))
            raise
        finally:
            self._settle_questions(slot, "turn ended")
            self._runs.pop(request.run_id, None)
            for task in slot.tasks:
                task.cancel()

    async def _follow(self, request: TurnRequest, slot: _RunSlot,
                      translator: protocol.TurnTranslator) -> TurnResult:
        """Relay the turn's messages until its result, or until the process is gone."""
        assert slot.proc is not None
        while True:
            try:
                message = await (asyncio.wait_for(slot.queue.get(), self.idle_timeout)
                                 if self.idle_timeout > 0 else slot.queue.get())
            except TimeoutError:
                if any(not task.done() for task, _, _ in slot.questions.values()) or slot.tool_calls:
                    continue  # waiting on a person or a notebook tool, not on the agent
                log.warning("hermes: run %s silent for %g s; restarting the agent", request.run_id,
                            self.idle_timeout)
                self._kill(slot.proc)
                return translator.cut_short(kind="agent_timeout", detail=f"no word for {self.idle_timeout:g} s",
                                            interrupted=False)
            if message is None:
                return translator.cut_short(kind="agent_crashed", detail=self._exit_detail(slot),
                                            interrupted=slot.interrupted)
            kind = message.get("ev")
            if kind == "result":
                if message.get("pending_steer"):
                    slot.sink.emit(STATUS, {"level": "warning", "text": (
                        "Hermes finished before it could read what you added to this turn. Send it again as a "
                        f"new message: {message['pending_steer']}")})
                result = translator.finish(message)
                if result.outcome != "errored":
                    self._crashes = 0
                return result
            if kind == "approval_request":
                self._ask_approval(request, message, slot)
                continue
            if kind == "clarify_request":
                self._ask_clarify(request, message, slot)
                continue
            if kind == "tool_request":
                self._call_tool(request, message, slot)
                continue
            translator.feed(message)

    async def steer(self, run_id: str, text: str) -> bool:
        """Hand `text` to the running turn (Hermes adds it to its next tool result); False before it started."""
        slot = self._runs.get(run_id)
        if slot is None or slot.proc is None or slot.interrupted:
            return False
        await self._send_quietly(slot.proc, protocol.steer_op(run_id, text))
        return True

    async def interrupt(self, run_id: str) -> None:
        slot = self._runs.get(run_id)
        if slot is None or slot.interrupted:
            return
        slot.interrupted = True
        proc = slot.proc
        if proc is None:
            return  # still spawning: run_turn sees the flag before sending the turn
        self._settle_questions(slot, "interrupted")  # the runner gives up on them itself on interrupt
        await self._send_quietly(proc, protocol.interrupt_op(run_id))
        slot.tasks.add(asyncio.create_task(self._unwedge(run_id, proc)))

    async def _unwedge(self, run_id: str, proc: AgentProcess) -> None:
        await asyncio.sleep(self.interrupt_timeout)
        slot = self._runs.get(run_id)
        if slot is not None and slot.proc is proc and proc.alive:
            log.warning("hermes: run %s still running %g s after interrupt; restarting the agent",
                        run_id, self.interrupt_timeout)
            self._kill(proc)

    @staticmethod
    def _exit_detail(slot: _RunSlot) -> str:
        """How the process ended, quoting only what it wrote to stderr during this turn."""
        if slot.proc is None:
            return "the Hermes Agent process exited"
        return slot.proc.describe_exit(since=slot.stderr_mark)

    def _ask_approval(self, request: TurnRequest, message: dict[str, Any], slot: _RunSlot) -> None:
        """Journal the request now, in stream order, and answer it in a task (the turn waits on it)."""
        offered = tuple(str(o) for o in message.get("options") or () if o in approvals.APPROVAL_CHOICES)
        approval = ApprovalRequest(
            run_id=request.run_id, session_id=request.session_id,
            approval_id=str(message.get("approval_id")), command=str(message.get("command") or ""),
            description=str(message.get("description") or ""), timeout_s=self.approval_timeout,
            options=offered or approvals.APPROVAL_OPTIONS,
        )

        async def answer() -> None:
            handler: ApprovalHandler | None = self.approval_handler
            choice, reason, by = await approvals.decide(handler, approval)
            await self._resolve(slot, APPROVAL, approvals.resolved_payload(approval.approval_id, choice, reason, by),
                          protocol.approval_op(approval.run_id, approval.approval_id, choice))

        self._ask(slot, APPROVAL, approvals.pending_payload(approval), approval.approval_id, answer(),
                  approvals.unanswered_payload(approval.approval_id, "the turn ended first"))

    def _ask_clarify(self, request: TurnRequest, message: dict[str, Any], slot: _RunSlot) -> None:
        """Journal Hermes' question, then collect the user's answer in a task; no answer is answer null."""
        question = ClarifyRequest(
            run_id=request.run_id, session_id=request.session_id, clarify_id=str(message.get("clarify_id")),
            question=str(message.get("question") or ""), timeout_s=self.approval_timeout,
            choices=tuple(str(c) for c in message.get("choices") or ()),
        )

        async def answer() -> None:
            handler: ClarifyHandler | None = self.clarify_handler
            reply, reason, by = await clarify.collect(handler, question)
            await self._resolve(slot, CLARIFY, clarify.resolved_payload(question.clarify_id, reply, reason, by),
                          protocol.clarify_op(question.run_id, question.clarify_id, reply))

        self._ask(slot, CLARIFY, clarify.pending_payload(question), question.clarify_id, answer(),
                  clarify.unanswered_payload(question.clarify_id, "the turn ended first"))

    def _call_tool(self, request: TurnRequest, message: dict[str, Any], slot: _RunSlot) -> None:
        """Run a notebook tool Hermes called through the turn's registry (the `openai` backend's too),
        in a task, and send Hermes the result; the tool card itself comes from Hermes' own callbacks."""
        tool_id, name, args = str(message.get("tool_id")), str(message.get("name") or ""), message.get("args")

        async def call() -> None:
            text, is_error = await call_tool(slot.tools, name, args if isinstance(args, dict) else {}, tool_id)
            if slot.proc is not None:
                await self._send_quietly(slot.proc, protocol.tool_result_op(request.run_id, tool_id, text, is_error))

        task = asyncio.create_task(call())
        slot.tasks.add(task)
        slot.tool_calls.add(task)
        task.add_done_callback(slot.tool_calls.discard)

    @staticmethod
    def _ask(slot: _RunSlot, event: str, pending: dict[str, Any], question_id: str,
             answer: Any, unanswered: dict[str, Any]) -> None:
        slot.sink.emit(event, pending)
        slot.questions[question_id] = (asyncio.create_task(answer), event, unanswered)

    async def _resolve(self, slot: _RunSlot, event: str, resolved: dict[str, Any], op: dict[str, Any]) -> None:
        slot.resolved.add(str(resolved.get("approval_id") or resolved.get("clarify_id")))
        slot.sink.emit(event, resolved)
        if slot.proc is not None:
            await self._send_quietly(slot.proc, op)

    @staticmethod
    def _settle_questions(slot: _RunSlot, reason: str) -> None:
        """Journal every question still waiting as resolved unanswered, so none stays pending after its turn."""
        for question_id, (task, event, unanswered) in slot.questions.items():
            task.cancel()
            if question_id not in slot.resolved:
                slot.resolved.add(question_id)
                slot.sink.emit(event, {**unanswered, "reason": reason})

    async def allowed_always(self) -> list[str]:
        """What "allow always" answers allow, as Hermes keeps them (config.yaml `command_allowlist`)."""
        return await self._allowlist(None)

    async def revoke_always(self, pattern: str) -> list[str]:
        """Stop allowing `pattern` always (and for any session it was allowed in); what is left."""
        return await self._allowlist(pattern)

    async def _allowlist(self, revoke: str | None) -> list[str]:
        request_id = secrets.token_hex(8)
        reply = self._replies[request_id] = asyncio.get_running_loop().create_future()
        try:
            proc = await self._ensure_process()
            await proc.send(protocol.allowlist_op(request_id, revoke))
            message = await asyncio.wait_for(reply, self.startup_timeout)
        except (AgentStartError, AgentGone, TimeoutError) as exc:
            raise AlwaysUnavailable(f"hermes allowlist: {exc or type(exc).__name__}") from exc
        finally:
            self._replies.pop(request_id, None)
        return [str(p) for p in message.get("patterns") or ()]

    def known_secrets(self) -> list[str]:
        """Hermes' own configured keys (config.yaml, .env, auth.json of its home and profiles): every
        run of this backend masks them exactly (home_secrets.py)."""
        return known_secrets(hermes_home(self.env))

    async def list_models(self) -> tuple[str | None, list[dict[str, str]]]:
        """This backend's model, else `model.default` of Hermes' config.yaml (in the agent's HERMES_HOME)."""
        configured = self.model or await asyncio.to_thread(self._configured_model)
        return configured, [model_entry(configured)] if configured else []

    def _configured_model(self) -> str | None:
        import yaml  # type: ignore[import-untyped]  # a jupyter_server dependency (via jupyter_events)

        home = self.env.get("HERMES_HOME") or os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes")
        try:
            with open(os.path.join(home, "config.yaml"), encoding="utf-8") as f:
                config = yaml.safe_load(f) or {}
        except (OSError, yaml.YAMLError):
            return None
        model = config.get("model") if isinstance(config, dict) else None
        value = model.get("default") if isinstance(model, dict) else model
        return str(value) if value else None

    async def aclose(self) -> None:
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            self._killed.add(id(proc))
            await proc.aclose()

    # ---- the child process ------------------------------------------------------

    def _child_env(self) -> dict[str, str]:
        env = scrubbed_env(os.environ, self.env_allow)
        for name in _PYTHON_ENV:
            env.pop(name, None)
        return scrubbed_env(env, self.env_allow, dict(self.env))

    async def _ensure_process(self) -> AgentProcess:
        async with self._spawn_lock:
            if self._proc is not None and self._proc.alive:
                return self._proc
            if self._closed:
                raise AgentStartError("the hermes backend is closed")
            delay = self._respawn_at - asyncio.get_running_loop().time()
            if delay > 0:
                log.info("hermes: respawning the agent in %.1f s", delay)
                await asyncio.sleep(delay)
            env = self._child_env()
            try:
                argv = await wrap(list(self.command), mode=cast(SandboxMode, self.sandbox), bwrap=self.bwrap,
                                  env=env, cwd=self.cwd, writable=self.sandbox_writable, hidden=self.sandbox_hidden)
            except SandboxUnavailable as exc:
                raise AgentStartError(str(exc)) from exc
            proc = AgentProcess(argv, env, self._dispatch, self._on_exit, cwd=self.cwd)
            try:
                info = await proc.start(self.startup_timeout)
            except AgentStartError:
                self._note_crash()
                raise
            log.info("hermes: agent process %s ready (hermes-agent %s)", proc.pid, info.get("hermes_version"))
            self._proc = proc
            return proc

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("ev") == "reply":
            reply = self._replies.get(str(message.get("id")))
            if reply is not None and not reply.done():
                reply.set_result(message)
            return
        if message.get("ev") == "warmed":
            log.info("hermes: agent warmed (ok=%s, %s s)", message.get("ok"), message.get("seconds"))
            return
        slot = self._runs.get(str(message.get("run")))
        if slot is not None:
            slot.queue.put_nowait(message)
        # else: a late message of a turn we already settled; dropping it is correct

    def _on_exit(self, proc: AgentProcess) -> None:
        if proc is self._proc:
            self._proc = None
        if id(proc) in self._killed:
            self._killed.discard(id(proc))
        elif proc.info:  # a ready process died on its own
            log.warning("hermes: %s", proc.describe_exit())
            self._note_crash()
        for slot in self._runs.values():
            if slot.proc is proc:
                slot.queue.put_nowait(None)

    def _note_crash(self) -> None:
        self._crashes += 1
        backoff = 0.0 if self._crashes <= 1 else self.respawn_backoff * 2 ** (self._crashes - 2)
        self._respawn_at = asyncio.get_running_loop().time() + min(backoff, self.respawn_backoff_max)

    def _kill(self, proc: AgentProcess) -> None:
        """Kill on purpose (wedged turn): the next turn respawns without backoff."""
        self._killed.add(id(proc))
        proc.kill()

    @staticmethod
    async def _send_quietly(proc: AgentProcess, op: dict[str, Any]) -> None:
        with contextlib.suppress(AgentGone):
            await proc.send(op)
