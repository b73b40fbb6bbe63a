"""Host Hermes Agent's `AIAgent` behind a newline-JSON protocol on stdio (protocol version 1).

This file runs with the interpreter of a hermes-agent install, never inside the Jupyter
server: it imports only the standard library and hermes-agent, and nothing from
hermes_jupyter. It forwards AIAgent's callbacks as raw wire messages; the mapping to
hermes-jupyter events lives in `protocol.py`, on the host side. stdout carries protocol
lines only: fd 1 is re-pointed at stderr before hermes is imported, and fd 0 at /dev/null,
so stray prints and tool subprocesses can neither corrupt nor swallow the protocol.

Host -> runner (one JSON object a line, key "op"):
  {"op": "turn", "run", "session", "hermes_session", "message", "history", "model",
   "toolsets", "persist", "approval_timeout_s", "host_tools", "tool_timeout_s"}
  {"op": "interrupt", "run"}
  {"op": "steer", "run", "text"}   (AIAgent.steer: the text joins the next tool result)
  {"op": "allowlist", "id", "revoke": str | null}   -> {"ev": "reply", "id", "patterns": [str]}
  {"op": "approval", "run", "approval_id", "choice": "allow_once" | "allow_session" | "allow_always" | "deny"}
  {"op": "clarify", "run", "clarify_id", "answer": str | null}
  {"op": "tool_result", "run", "tool_id", "text", "is_error"}   (the answer to a "tool_request")
  {"op": "warm", "model", "toolsets", "persist"}   (build a spare agent now, for the next session's first turn)
  {"op": "shutdown"}
Runner -> host (key "ev"): "ready", "reply", "started", "delta", "reasoning", "interim", "progress",
  "tool_start", "tool_complete", "hermes_event", "status", "approval_request", "clarify_request",
  "tool_request", "call", "call_end" (each request to the model: runner_hooks.py), "result", "warmed", "fatal".

Host tools: a turn's `host_tools` (OpenAI function schemas: the notebook tools) are registered with
hermes-agent's own tool registry, under the toolset `hermes-jupyter`, and offered to that turn's
agent. Their handler does not run anything here: it sends a `tool_request` and waits for the host's
`tool_result`, so the host runs every call through its one implementation, approvals and journal.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import os
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import runner_hooks  # beside this file (its folder is on sys.path when it runs as a script)

PROTOCOL_VERSION = 1
MAX_CACHED_AGENTS = 8
HOST_TOOLSET = "hermes-jupyter"
#: Hermes' approval answers (tools/approval.py) for the host's choices; anything else denies.
_APPROVAL_ANSWERS = {"allow_once": "once", "allow_session": "session", "allow_always": "always"}
_COUNTERS = {
    "input_tokens": "session_input_tokens",
    "output_tokens": "session_output_tokens",
    "cache_read_tokens": "session_cache_read_tokens",
    "cache_write_tokens": "session_cache_write_tokens",
    "reasoning_tokens": "session_reasoning_tokens",
    "prompt_tokens": "session_prompt_tokens",
    "completion_tokens": "session_completion_tokens",
    "total_tokens": "session_total_tokens",
    "estimated_cost_usd": "session_estimated_cost_usd",
}


class Wire:
    """The protocol stream: private duplicates of fd 0 and fd 1, one writer at a time."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "wb", buffering=0)
        self._in = os.fdopen(os.dup(0), "rb")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, default=str, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            try:
                self._out.write(line)
            except (BrokenPipeError, OSError):
                os._exit(0)  # the host is gone; nobody is left to report to

    def lines(self) -> Iterator[dict[str, Any]]:
        for raw in self._in:
            raw = raw.strip()
            if raw:
                yield json.loads(raw)


class Run:
    """One turn in flight: its agent (once built), interrupt flag and questions waiting for the host."""

    def __init__(self, run_id: str, session: str = "", tool_timeout_s: float = 900.0) -> None:
        self.run_id = run_id
        self.session = session
        self.tool_timeout_s = tool_timeout_s
        self.agent: Any = None
        self.interrupted = threading.Event()
        #: question id -> (answered, answer box); interrupt answers them all with None
        self.questions: dict[str, tuple[threading.Event, list[Any]]] = {}
        self.lock = threading.Lock()
        self._seq = 0

    def ask(self, wire: Wire, kind: str, message: dict[str, Any], timeout_s: float) -> Any:
        """Send a question (`<kind>_request`) to the host and wait for its answer; None if none came.

        Ids are `<run>-<a|c><n>`: unique within the run and never a model's tool-call id.
        """
        answered = threading.Event()
        box: list[Any] = []
        with self.lock:
            if self.interrupted.is_set():
                return None
            self._seq += 1
            question_id = f"{self.run_id}-{kind[0]}{self._seq}"
            self.questions[question_id] = (answered, box)
        wire.send({"ev": f"{kind}_request", "run": self.run_id, f"{kind}_id": question_id,
                   "timeout_s": timeout_s, **message})
        answered.wait(timeout_s)
        with self.lock:
            self.questions.pop(question_id, None)
        return box[0] if box else None

    def answer(self, question_id: str, value: Any) -> None:
        with self.lock:
            pending = self.questions.get(question_id)
        if pending is not None:
            pending[1][:] = [value]
            pending[0].set()


class Runner:
    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.runs: dict[str, Run] = {}
        self.agents: dict[str, tuple[tuple[Any, ...], Any]] = {}
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hermes-turn")
        self.lock = threading.Lock()
        self._db: Any = None
        #: One agent built ahead of time (`warm`), taken by the first session whose settings match;
        #: a turn that arrives while it is being built waits for it rather than building a second.
        self._spare: tuple[tuple[Any, ...], Any] | None = None
        self._warming: tuple[tuple[Any, ...], threading.Event] | None = None
        #: Host tools registered with hermes' registry (once per process; each turn says which it offers).
        self.host_tools: set[str] = set()

    # ---- agent construction ------------------------------------------------

    def _session_db(self) -> Any:
        if self._db is None:
            from hermes_state import SessionDB

            self._db = SessionDB()
        return self._db

    def _build_agent(self, op: dict[str, Any]) -> Any:
        """An AIAgent configured like `hermes acp` does it: config.yaml plus the runtime provider."""
        from run_agent import AIAgent

        kwargs: dict[str, Any] = {
            "platform": "jupyter",
            "quiet_mode": True,
            "enabled_toolsets": list(op.get("toolsets") or []) or None,
            "model": op.get("model") or "",
        }
        try:
            from hermes_cli.config import load_config
            from hermes_cli.runtime_provider import resolve_runtime_provider

            config = load_config()
            model_cfg = config.get("model")
            provider = None
            if isinstance(model_cfg, dict):
                kwargs["model"] = kwargs["model"] or str(model_cfg.get("default") or "")
                provider = model_cfg.get("provider")
            elif isinstance(model_cfg, str):
                kwargs["model"] = kwargs["model"] or model_cfg.strip()
            runtime = resolve_runtime_provider(requested=provider)
            for key in ("provider", "api_mode", "base_url", "api_key", "command"):
                if runtime.get(key):
                    kwargs[key] = runtime[key]
            if runtime.get("args"):
                kwargs["args"] = list(runtime["args"])
        except Exception:  # noqa: BLE001 - fall back to AIAgent's own provider resolution
            print("hermes-jupyter runner: provider resolution failed, using defaults", file=sys.stderr)
            traceback.print_exc()
        if op.get("hermes_session"):
            kwargs["session_id"] = op["hermes_session"]
        if op.get("persist", True):
            kwargs["session_db"] = self._session_db()
        accepted = inspect.signature(AIAgent.__init__).parameters
        return AIAgent(**{k: v for k, v in kwargs.items() if k in accepted})

    def _agent_for(self, op: dict[str, Any]) -> Any:
        key = _agent_key(op)
        session = str(op.get("session"))
        with self.lock:
            cached = self.agents.get(session)
        hermes_session = op.get("hermes_session")
        if cached and cached[0] == key and (not hermes_session or cached[1].session_id == hermes_session):
            with self.lock:
                self.agents[session] = self.agents.pop(session, cached)  # most recently used last
            return cached[1]
        agent = self._take_spare(key) if not hermes_session else None
        agent = agent or self._build_agent(op)
        with self.lock:
            self.agents.pop(session, None)
            self.agents[session] = (key, agent)
            while len(self.agents) > MAX_CACHED_AGENTS:
                self.agents.pop(next(iter(self.agents)))
        return agent

    def warm(self, op: dict[str, Any]) -> None:
        """Build one agent now (provider resolution, endpoint probe) so a first turn does not wait for it."""
        done = threading.Event()
        with self.lock:
            self._warming = (_agent_key(op), done)

        def build() -> None:
            started = time.monotonic()
            try:
                agent = self._build_agent(op)
            except Exception:  # noqa: BLE001 - the first turn builds its own and reports the failure
                traceback.print_exc()
                self.wire.send({"ev": "warmed", "ok": False})
                return
            finally:
                done.set()
            _warm_streaming_imports()
            runner_hooks.import_first_turn_modules()
            with self.lock:
                self._spare = (_agent_key(op), agent)
            self.wire.send({"ev": "warmed", "ok": True, "seconds": round(time.monotonic() - started, 3)})

        self.pool.submit(build)

    def _take_spare(self, key: tuple[Any, ...]) -> Any:
        with self.lock:
            warming, self._warming = self._warming, None
        if warming is not None and warming[0] == key:
            warming[1].wait(120)  # already half built: finishing it is quicker than starting over
        with self.lock:
            spare, self._spare = self._spare, None
        return spare[1] if spare is not None and spare[0] == key else None

    # ---- callbacks -----------------------------------------------------------

    def _bind_callbacks(self, agent: Any, run: Run, events: list[tuple[str, dict[str, Any]]]) -> None:
        rid = run.run_id
        send = self.wire.send
        max_chars = 4000

        def delta(text: str | None) -> None:
            send({"ev": "delta", "run": rid, "text": text})

        def reasoning(text: str) -> None:
            if text:
                send({"ev": "reasoning", "run": rid, "text": text})

        def interim(text: str, already_streamed: bool = False, **_: Any) -> None:
            send({"ev": "interim", "run": rid, "text": text, "already_streamed": bool(already_streamed)})

        def progress(event: str, name: Any = None, preview: Any = None, args: Any = None, **kw: Any) -> None:
            if not str(event).startswith("tool."):
                return
            extra = {k: kw[k] for k in ("duration", "is_error") if k in kw}
            send({"ev": "progress", "run": rid, "event": event, "name": name, "preview": preview,
                  "args": args, "kw": extra})

        def tool_start(tid: str, name: str, args: Any) -> None:
            send({"ev": "tool_start", "run": rid, "tid": tid, "name": name, "args": args})

        def tool_complete(tid: str, name: str, args: Any, result: Any) -> None:
            text = result if isinstance(result, str) else json.dumps(result, default=str)
            send({"ev": "tool_complete", "run": rid, "tid": tid, "name": name,
                  "result": text[:max_chars], "truncated": len(text) > max_chars})

        def hermes_event(name: str, data: Any = None) -> None:
            events.append((name, data if isinstance(data, dict) else {}))
            send({"ev": "hermes_event", "run": rid, "name": name, "data": data})

        said: set[str] = set()

        def status(kind: Any, message: Any = None) -> None:
            if message and str(message) not in said:  # Hermes may flush the same retry notice twice
                said.add(str(message))
                send({"ev": "status", "run": rid, "kind": str(kind), "text": str(message)})

        agent.stream_delta_callback = delta
        agent.reasoning_callback = reasoning
        agent.thinking_callback = None
        agent.interim_assistant_callback = interim
        agent.tool_progress_callback = progress
        agent.tool_start_callback = tool_start
        agent.tool_complete_callback = tool_complete
        agent.event_callback = hermes_event
        agent.status_callback = status
        agent.step_callback = None
        runner_hooks.watch_model_calls(agent, rid, send)

    def _approval_callback(self, run: Run, timeout_s: float) -> Callable[..., str]:
        """Hermes' dangerous-command prompt, answered by the host; no answer (or an unknown one) denies."""

        def ask(command: str, description: str = "", **_: Any) -> str:
            choice = run.ask(self.wire, "approval", {
                "command": command, "description": description, "options": list(_APPROVAL_ANSWERS) + ["deny"],
            }, timeout_s)
            return _APPROVAL_ANSWERS.get(str(choice), "deny")

        return ask

    def _clarify_callback(self, run: Run, timeout_s: float) -> Callable[..., str]:
        """Hermes' clarify tool, answered by the user; with no answer the tool reports that, never a guess."""

        def ask(question: str, choices: Any = None) -> str:
            answer = run.ask(self.wire, "clarify", {
                "question": str(question), "choices": [str(c) for c in choices or []],
            }, timeout_s)
            if answer is None:
                raise RuntimeError("the user did not answer the question")
            return str(answer)

        return ask

    # ---- host tools ------------------------------------------------------------

    def _offer_host_tools(self, agent: Any, schemas: Any) -> None:
        """Give this turn's agent exactly the host tools of this turn (a session may be bound or unbound
        between turns, so the cached agent's previous host tools are replaced, never added to)."""
        offered: list[dict[str, Any]] = []
        for schema in schemas if isinstance(schemas, list) else []:
            function = schema.get("function") if isinstance(schema, dict) else None
            if isinstance(function, dict) and self._register_host_tool(function):
                offered.append(schema)
        names = {s["function"]["name"] for s in offered}
        previous = getattr(agent, "_host_tool_names", set())
        kept = [t for t in agent.tools or [] if (t.get("function") or {}).get("name") not in previous]
        agent.tools = kept + offered  # a new list: hermes may share its cached definitions between agents
        agent.valid_tool_names = (set(agent.valid_tool_names or ()) - previous) | names
        agent._host_tool_names = names

    def _register_host_tool(self, function: dict[str, Any]) -> bool:
        name = str(function.get("name") or "")
        if not name or name in self.host_tools:
            return bool(name)
        from tools.registry import registry

        if registry.get_entry(name) is not None:  # never shadow one of hermes' own tools
            print(f"hermes-jupyter runner: host tool {name!r} clashes with a hermes tool", file=sys.stderr)
            return False
        registry.register(name=name, toolset=HOST_TOOLSET, schema=function,
                          handler=lambda args, **kw: self._host_call(name, args, **kw))
        self.host_tools.add(name)
        return True

    def _host_call(self, name: str, args: Any, **kw: Any) -> str:
        """A host tool's handler (on hermes' tool thread): ask the host, wait for its result."""
        run = self._run_of_task(kw.get("task_id"))
        if run is None:
            return json.dumps({"error": f"{name} can only be used during a turn of the notebook's conversation."})
        answer = run.ask(self.wire, "tool", {"name": name, "args": args if isinstance(args, dict) else {}},
                         run.tool_timeout_s)
        if not isinstance(answer, dict):
            return json.dumps({"error": f"{name} got no answer from the notebook (the turn was stopped)."})
        text = str(answer.get("text") or "")
        return json.dumps({"error": text}, ensure_ascii=False) if answer.get("is_error") else text

    def _run_of_task(self, task_id: Any) -> Run | None:
        """The turn a tool call belongs to: `task_id` is the host session of the turn (one turn per session)."""
        with self.lock:
            runs = list(self.runs.values())
        mine = [r for r in runs if r.session == str(task_id)]
        return mine[0] if mine else (runs[0] if len(runs) == 1 else None)

    # ---- ops -------------------------------------------------------------------

    def turn(self, op: dict[str, Any]) -> None:
        run = Run(str(op["run"]), str(op.get("session")), float(op.get("tool_timeout_s") or 900))
        with self.lock:
            self.runs[run.run_id] = run
        ctx = contextvars.copy_context()
        self.pool.submit(ctx.run, self._turn, run, op)

    def _turn(self, run: Run, op: dict[str, Any]) -> None:
        try:
            self.wire.send(self._execute(run, op))
        except BaseException as exc:  # noqa: BLE001 - every turn must end with a result line
            traceback.print_exc()
            self.wire.send({"ev": "result", "run": run.run_id, "failed": True,
                            "error": f"{type(exc).__name__}: {exc}"})
        finally:
            with self.lock:
                self.runs.pop(run.run_id, None)

    def _execute(self, run: Run, op: dict[str, Any]) -> dict[str, Any]:
        agent = self._agent_for(op)
        with run.lock:
            run.agent = agent
        if run.interrupted.is_set():
            return {"ev": "result", "run": run.run_id, "interrupted": True, "final_response": "",
                    "context": [], "session_id": getattr(agent, "session_id", None)}
        events: list[tuple[str, dict[str, Any]]] = []
        self._bind_callbacks(agent, run, events)
        self._offer_host_tools(agent, op.get("host_tools"))
        agent.clarify_callback = self._clarify_callback(run, float(op.get("approval_timeout_s") or 600))
        self.wire.send({"ev": "started", "run": run.run_id, "session_id": getattr(agent, "session_id", None)})
        before = {key: getattr(agent, attr, 0) or 0 for key, attr in _COUNTERS.items()}
        session_before = getattr(agent, "session_id", None)
        restore = _enter_turn_context(str(op.get("session")), self._approval_callback(
            run, float(op.get("approval_timeout_s") or 600)))
        try:
            result = agent.run_conversation(
                op["message"], conversation_history=list(op.get("history") or []),
                task_id=str(op.get("session")),
            )
        finally:
            restore()
        if run.interrupted.is_set():
            agent.clear_interrupt()
        return _result_message(run, agent, result or {}, before, session_before, events)

    def interrupt(self, op: dict[str, Any]) -> None:
        with self.lock:
            run = self.runs.get(str(op.get("run")))
        if run is None:
            return
        with run.lock:
            run.interrupted.set()
            agent = run.agent
            waiting = list(run.questions)
        for question_id in waiting:
            run.answer(question_id, None)
        if agent is not None:
            agent.interrupt()

    def steer(self, op: dict[str, Any]) -> None:
        with self.lock:
            run = self.runs.get(str(op.get("run")))
        agent = run.agent if run is not None else None
        if agent is not None:
            agent.steer(str(op.get("text") or ""))

    def allowlist(self, op: dict[str, Any]) -> None:
        """Hermes' "allow always" patterns (config.yaml `command_allowlist`), after revoking one if asked.

        A revoked pattern is also dropped from every session's "allow for this session" set:
        "always" granted it there too, and a revoke must take effect at once.
        """
        from tools import approval

        patterns = approval.load_permanent_allowlist()
        revoke = op.get("revoke")
        if isinstance(revoke, str) and revoke:
            keys = approval._approval_key_aliases(revoke) | {revoke}
            with approval._lock:
                approval._permanent_approved.difference_update(keys)
                for approved in approval._session_approved.values():
                    approved.difference_update(keys)
                patterns = set(approval._permanent_approved)
            approval.save_permanent_allowlist(patterns)
        self.wire.send({"ev": "reply", "id": op.get("id"), "patterns": sorted(str(p) for p in patterns)})

    def approval(self, op: dict[str, Any]) -> None:
        self._answer(op, str(op.get("approval_id")), op.get("choice"))

    def clarify(self, op: dict[str, Any]) -> None:
        self._answer(op, str(op.get("clarify_id")), op.get("answer"))

    def tool_result(self, op: dict[str, Any]) -> None:
        self._answer(op, str(op.get("tool_id")), {"text": op.get("text"), "is_error": bool(op.get("is_error"))})

    def _answer(self, op: dict[str, Any], question_id: str, value: Any) -> None:
        with self.lock:
            run = self.runs.get(str(op.get("run")))
        if run is not None:
            run.answer(question_id, value)


def _warm_streaming_imports() -> None:
    """Import and exercise what the first streamed reply needs (the OpenAI SDK's streaming and chunk
    models load lazily on the first request): about 1 s off the first turn's first token."""
    try:
        import openai._streaming  # noqa: F401
        import openai.resources.chat.completions  # noqa: F401
        from openai.types.chat.chat_completion_chunk import ChatCompletionChunk

        ChatCompletionChunk.model_validate({
            "id": "warm", "object": "chat.completion.chunk", "created": 0, "model": "warm",
            "choices": [{"index": 0, "delta": {"content": "warm"}, "finish_reason": None}],
        })
    except Exception:  # noqa: BLE001 - only an optimisation
        traceback.print_exc()


def _agent_key(op: dict[str, Any]) -> tuple[Any, ...]:
    return (op.get("model"), tuple(op.get("toolsets") or ()), bool(op.get("persist", True)))


def _enter_turn_context(session: str, approval: Callable[..., str]) -> Callable[[], None]:
    """Make this thread an interactive host for hermes' approval checks, as `hermes acp` does.

    Without it, a dangerous terminal command in a non-interactive context is auto-approved
    with only a log warning.
    """
    from tools import terminal_tool
    from tools.approval import reset_hermes_interactive_context, set_hermes_interactive_context

    previous = terminal_tool._get_approval_callback()
    terminal_tool.set_approval_callback(approval)
    token = set_hermes_interactive_context(True)
    session_tokens = None
    clear: Callable[[Any], None] | None = None
    try:
        from gateway.session_context import clear_session_vars, set_session_vars

        session_tokens, clear = set_session_vars(session_key=session), clear_session_vars
    except Exception:  # noqa: BLE001 - optional in older hermes versions
        pass

    def restore() -> None:
        reset_hermes_interactive_context(token)
        terminal_tool.set_approval_callback(previous)
        if session_tokens is not None and clear is not None:
            clear(session_tokens)

    return restore


def _result_message(run: Run, agent: Any, result: dict[str, Any], before: dict[str, Any],
                    session_before: Any, events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    messages = list(result.get("messages") or [])
    compacted = any(name == "session:compress" for name, _ in events)
    session_after = result.get("session_id") or getattr(agent, "session_id", None)
    if compacted or (session_before and session_after != session_before):
        context, replace = messages, True
    else:
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user" and not _nudge(messages, i)),
                        default=-1)
        context, replace = messages[last_user + 1:], False
    usage: dict[str, Any] = {}
    for key, attr in _COUNTERS.items():
        now = getattr(agent, attr, 0) or 0
        usage[key] = now - before[key] if now >= before[key] else now
    usage["api_calls"] = result.get("api_calls")
    usage["model"] = result.get("model")
    usage["context_tokens"] = result.get("last_prompt_tokens")
    final = result.get("final_response") or ""
    return {
        "ev": "result", "run": run.run_id,
        "final_response": final if isinstance(final, str) else str(final),
        "context": context, "replace_context": replace, "usage": usage,
        "failed": bool(result.get("failed")), "error": result.get("error"),
        "interrupted": bool(result.get("interrupted")) or run.interrupted.is_set(),
        "completed": result.get("completed"), "exit_reason": result.get("turn_exit_reason"),
        "pending_steer": result.get("pending_steer"),
        "session_id": session_after, "previous_session_id": session_before,
    }


def _nudge(messages: list[dict[str, Any]], i: int) -> bool:
    """Whether messages[i] is a user message Hermes wrote itself after a cut answer ("[System: ... Continue
    exactly where you left off ...]"), not the user's."""
    content, before = messages[i].get("content"), messages[i - 1] if i > 0 else {}
    return (isinstance(content, str) and content.startswith("[System:") and before.get("role") == "assistant"
            and before.get("finish_reason") == "length")


def main() -> None:
    wire = Wire()
    try:
        import run_agent  # noqa: F401 - the slow import (about 2 s) happens before "ready"
        from hermes_cli import __version__ as version
        runner_hooks.remember_server_kinds()
    except Exception as exc:  # noqa: BLE001 - report, then exit non-zero
        wire.send({"ev": "fatal", "message": f"cannot import hermes-agent: {exc}"})
        sys.exit(3)
    runner = Runner(wire)
    wire.send({"ev": "ready", "protocol": PROTOCOL_VERSION, "hermes_version": version,
               "pid": os.getpid(), "python": sys.executable, "t": time.time()})
    handlers = {"turn": runner.turn, "interrupt": runner.interrupt, "steer": runner.steer, "allowlist": runner.allowlist,
                "approval": runner.approval, "clarify": runner.clarify, "tool_result": runner.tool_result,
                "warm": runner.warm}
    for op in wire.lines():
        name = str(op.get("op"))
        if name == "shutdown":
            break
        handler = handlers.get(name)
        if handler is None:
            print(f"hermes-jupyter runner: unknown op {name!r}", file=sys.stderr)
            continue
        handler(op)
    # stdin closed or shutdown: stop running turns and leave without waiting for them.
    for run_id in list(runner.runs):
        runner.interrupt({"run": run_id})
    os._exit(0)


if __name__ == "__main__":
    main()
