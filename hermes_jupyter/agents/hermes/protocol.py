"""The runner's wire messages → hermes-jupyter events (CONTRACT §4) and a `TurnResult`.

The runner (`runner.py`, inside the Hermes venv) forwards AIAgent's callbacks raw; this
module does the mapping on our side, so it can be tested without hermes-agent. It keeps
one invariant for the transcript: every `tool` it emits is closed by a `tool_complete`
with the same `tid` before the turn's result, even when the turn was cut short.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict, deque
from typing import Any

from ..base import EventSink, TurnRequest, TurnResult

PROTOCOL_VERSION = 1

# AIAgent's status text when a turn is interrupted before the model answered; not prose.
_INTERRUPT_STATUS_PREFIX = "Operation interrupted: waiting for model response ("


def turn_op(
    request: TurnRequest,
    *,
    model: str | None,
    toolsets: list[str],
    persist: bool,
    approval_timeout_s: float,
) -> dict[str, Any]:
    """The `turn` op: the engine's history travels with every turn, so a respawned runner needs no reload."""
    return {
        "op": "turn",
        "run": request.run_id,
        "session": request.session_id,
        "hermes_session": request.backend_session_id,
        "message": request.message,
        "history": request.history,
        "model": request.model or model or None,
        "toolsets": toolsets,
        "persist": persist,
        "approval_timeout_s": approval_timeout_s,
    }


def interrupt_op(run_id: str) -> dict[str, Any]:
    return {"op": "interrupt", "run": run_id}


def approval_op(run_id: str, approval_id: str, choice: str) -> dict[str, Any]:
    return {"op": "approval", "run": run_id, "approval_id": approval_id, "choice": choice}


def shutdown_op() -> dict[str, Any]:
    return {"op": "shutdown"}


def plan_entries(todo_result: str) -> list[dict[str, str]] | None:
    """The todo tool's JSON result as plan entries `{content, status}`; None if it is not a todo list."""
    try:
        data, _ = json.JSONDecoder().raw_decode(todo_result.strip())
    except (ValueError, AttributeError):
        return None
    todos = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(todos, list):
        return None
    entries = []
    for item in todos:
        if isinstance(item, dict) and str(item.get("content") or "").strip():
            entries.append({"content": str(item["content"]).strip(), "status": str(item.get("status") or "pending")})
    return entries


class TurnTranslator:
    """Folds one turn's wire messages into sink events and, at the end, a TurnResult."""

    def __init__(self, sink: EventSink, session_id: str | None = None) -> None:
        self._sink = sink
        self.session_id = session_id  # Hermes' session id, once the runner reports it
        self._text: list[str] = []
        self._previews: dict[str, deque[Any]] = defaultdict(deque)
        self._completions: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._open_tools: dict[str, tuple[str, float]] = {}

    @property
    def text(self) -> str:
        return "".join(self._text)

    def feed(self, message: dict[str, Any]) -> None:
        """Map one runner message; unknown kinds are ignored so a newer runner stays compatible."""
        kind = message.get("ev")
        if kind == "started":
            self.session_id = message.get("session_id") or self.session_id
        elif kind == "delta":
            text = message.get("text")
            if text:
                self._token(text)
        elif kind == "reasoning" and message.get("text"):
            self._sink.emit("reasoning", {"text": message["text"]})
        elif kind == "interim":
            self._sink.emit("interim_assistant", {
                "text": message.get("text") or "", "already_streamed": bool(message.get("already_streamed")),
            })
        elif kind == "progress":
            self._progress(message)
        elif kind == "tool_start":
            self._tool_start(message)
        elif kind == "tool_complete":
            self._tool_complete(message)

    def _token(self, text: str) -> None:
        self._text.append(text)
        self._sink.emit("token", {"text": text})

    def _progress(self, message: dict[str, Any]) -> None:
        # `tool.started` / `tool.completed` arrive just before the id-carrying start and
        # complete callbacks of the same tool; queue them by name to lend their preview,
        # duration and error flag to the paired event.
        name = str(message.get("name") or "")
        if message.get("event") == "tool.started":
            self._previews[name].append(message.get("preview"))
        elif message.get("event") == "tool.completed":
            self._completions[name].append(message.get("kw") or {})

    def _tool_start(self, message: dict[str, Any]) -> None:
        tid, name = str(message.get("tid")), str(message.get("name") or "")
        queue = self._previews.get(name)
        preview = queue.popleft() if queue else None
        payload: dict[str, Any] = {"tid": tid, "name": name, "args": message.get("args") or {}}
        if preview:
            payload["preview"] = str(preview)
        self._open_tools[tid] = (name, time.monotonic())
        self._sink.emit("tool", payload)

    def _tool_complete(self, message: dict[str, Any]) -> None:
        tid, name = str(message.get("tid")), str(message.get("name") or "")
        queue = self._completions.get(name)
        extra = queue.popleft() if queue else {}
        _, started = self._open_tools.pop(tid, (name, time.monotonic()))
        duration = extra.get("duration")
        result = str(message.get("result") or "")
        self._sink.emit("tool_complete", {
            "tid": tid, "name": name, "preview": result,
            "duration": float(duration) if isinstance(duration, (int, float)) else time.monotonic() - started,
            "is_error": bool(extra.get("is_error", False)),
        })
        if name == "todo":
            entries = plan_entries(result)
            if entries is not None:
                self._sink.emit("plan", {"entries": entries})

    def close_open_tools(self, reason: str) -> None:
        """Settle tools that started but never completed (interrupt, crash) as errors."""
        for tid, (name, started) in list(self._open_tools.items()):
            self._sink.emit("tool_complete", {
                "tid": tid, "name": name, "preview": reason,
                "duration": time.monotonic() - started, "is_error": True,
            })
        self._open_tools.clear()

    def finish(self, message: dict[str, Any]) -> TurnResult:
        """The TurnResult for the runner's `result` message."""
        interrupted = bool(message.get("interrupted"))
        self.close_open_tools("interrupted" if interrupted else "no result reported")
        final = str(message.get("final_response") or "")
        if interrupted and final.startswith(_INTERRUPT_STATUS_PREFIX):
            final = ""
        if not self._text and final:
            self._token(final)  # answered without streaming (or a hook rewrote it): journal it
        failed = bool(message.get("failed"))
        usage = {k: v for k, v in (message.get("usage") or {}).items() if v is not None}
        fields: dict[str, Any] = dict(
            final_text=self.text,
            context=list(message.get("context") or []),
            replace_context=bool(message.get("replace_context")),
            usage=usage,
            backend_session_id=message.get("session_id") or self.session_id,
        )
        if interrupted:
            return TurnResult(outcome="interrupted", **fields)
        if failed:
            return TurnResult.failure(str(message.get("error_type") or "agent_error"),
                                      str(message.get("error") or "Hermes Agent reported a failed turn"), **fields)
        return TurnResult(**fields)

    def cut_short(self, *, error: str, error_type: str, interrupted: bool) -> TurnResult:
        """The TurnResult when no `result` came: the process died or was killed."""
        self.close_open_tools("interrupted" if interrupted else error)
        text = self.text
        context = [{"role": "assistant", "content": text}] if text else []
        if interrupted:
            return TurnResult(final_text=text, context=context, outcome="interrupted",
                              backend_session_id=self.session_id)
        return TurnResult.failure(error_type, error, final_text=text, context=context,
                                  backend_session_id=self.session_id)
