"""The runner's wire messages → hermes-jupyter events (docs/journal.md) and a `TurnResult`.

The runner (`runner.py`, inside the Hermes venv) forwards AIAgent's callbacks raw; this
module does the mapping on our side, so it can be tested without hermes-agent. It keeps
one invariant for the transcript: every `tool` it emits is closed by a `tool_complete`
with the same `tid` before the turn's result, even when the turn was cut short.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict, deque
from typing import Any

from ...events import COMPACTION, INTERIM_ASSISTANT, PLAN, REASONING, STATUS, TOKEN, TOOL, TOOL_COMPLETE
from ..base import EventSink, TurnRequest, TurnResult
from ..continuing import CONTINUE_INSTRUCTION, OverlapTrim, continuation_history, overlap
from ..errors import failed_turn
from ..waiting import WaitingNote
from .endings import CallLog, empty_answer, failure_kind, slow_down_note, wait_asked

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
    host_tools: list[dict[str, Any]] | None = None,
    tool_timeout_s: float = 900.0,
) -> dict[str, Any]:
    """The `turn` op: the engine's history travels with every turn, so a respawned runner needs no reload.

    A continued turn sends the answer so far as the agent's own last message in its
    history, and the continue instruction as the turn's message (agents/continuing.py).
    `host_tools` are the turn's notebook tools (OpenAI function schemas); the runner offers them to
    Hermes and sends each call back as a `tool_request` (answered with `tool_result_op`).
    """
    message, history = request.model_message, request.history
    if request.continues is not None:
        message, history = CONTINUE_INSTRUCTION, continuation_history(request.history, request.continues)
    return {
        "op": "turn",
        "run": request.run_id,
        "session": request.session_id,
        "hermes_session": request.backend_session_id,
        "message": message,
        "history": history,
        "model": request.model or model or None,
        "toolsets": toolsets,
        "persist": persist,
        "approval_timeout_s": approval_timeout_s,
        "host_tools": list(host_tools or []),
        "tool_timeout_s": tool_timeout_s,
    }


def interrupt_op(run_id: str) -> dict[str, Any]:
    return {"op": "interrupt", "run": run_id}


def allowlist_op(request_id: str, revoke: str | None = None) -> dict[str, Any]:
    """Ask for Hermes' "allow always" patterns (after revoking `revoke`, when given); answered by a `reply`."""
    return {"op": "allowlist", "id": request_id, "revoke": revoke}


def steer_op(run_id: str, text: str) -> dict[str, Any]:
    """Hand `text` to the running turn: Hermes adds it to the next tool result (`AIAgent.steer`)."""
    return {"op": "steer", "run": run_id, "text": text}


def approval_op(run_id: str, approval_id: str, choice: str) -> dict[str, Any]:
    return {"op": "approval", "run": run_id, "approval_id": approval_id, "choice": choice}


def clarify_op(run_id: str, clarify_id: str, answer: str | None) -> dict[str, Any]:
    return {"op": "clarify", "run": run_id, "clarify_id": clarify_id, "answer": answer}


def tool_result_op(run_id: str, tool_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"op": "tool_result", "run": run_id, "tool_id": tool_id, "text": text, "is_error": is_error}


def warm_op(*, model: str | None, toolsets: list[str], persist: bool) -> dict[str, Any]:
    return {"op": "warm", "model": model, "toolsets": toolsets, "persist": persist}


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


# Leading pictographs of Hermes' status lines ("🗜️ Compacting context…"): the note shows the words.
_STATUS_DECORATION = re.compile(r"^[^\w(\[\"']+")


def status_payload(kind: str, text: str) -> dict[str, Any] | None:
    """Hermes' `status_callback(kind, message)` as a `status` note; None for an empty one."""
    words = _STATUS_DECORATION.sub("", text.strip()).strip()
    if not words:
        return None
    warning = kind in ("warn", "retry") or text.lstrip().startswith(("⚠", "❌", "💀"))
    return {"text": words, "level": "warning" if warning else "info"}


def compaction_payload(messages_before: int, messages_after: int) -> dict[str, Any]:
    return {
        "messages_before": messages_before, "messages_after": messages_after,
        "text": f"The conversation was compacted to fit the model's context "
                f"({messages_before} messages became {messages_after}).",
    }


def plan_payload(entries: list[dict[str, str]]) -> dict[str, Any]:
    """The `plan` event: docs/journal.md `items {text, status}`, plus the older `entries {content, status}`."""
    items = [{"text": e["content"], "status": e["status"]} for e in entries]
    return {"items": items, "entries": entries}


def merge_continuations(context: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turn's messages with Hermes' own continuations folded back into one answer.

    When Hermes continues a cut answer by itself it adds a "[System: ... continue ...]" user message and
    a second assistant message, which may re-send the first one's end. The model-facing history keeps
    one assistant message per answer, without the nudge and without the repeat (as the user saw it).
    """
    merged: list[dict[str, Any]] = []
    for row in context:
        content = row.get("content")
        after_cut = bool(merged) and _plain_answer(merged[-1]) and merged[-1].get("finish_reason") == "length"
        if after_cut and row.get("role") == "user" and isinstance(content, str) and content.startswith("[System:"):
            continue  # Hermes' continuation nudge: the next answer joins the cut one
        if after_cut and _plain_answer(row):
            kept, more = str(merged[-1]["content"]), str(content)
            merged[-1] = {**merged[-1], "content": kept + more[overlap(kept, more):],
                          "finish_reason": row.get("finish_reason")}
            continue
        merged.append(dict(row))
    return merged


def _plain_answer(row: dict[str, Any]) -> bool:
    return row.get("role") == "assistant" and not row.get("tool_calls") and isinstance(row.get("content"), str)


class TurnTranslator:
    """Folds one turn's wire messages into sink events and, at the end, a TurnResult."""

    def __init__(
        self, sink: EventSink, session_id: str | None = None, history_len: int = 0, *, kept: str | None = None,
        waiting_note_after: float = 0.0,
    ) -> None:
        """`kept`: a continuation's answer so far; text the model only re-sends from it is not shown again.
        `waiting_note_after`: seconds of a model request without an answer before a waiting note (0: never)."""
        self._sink = sink
        self._kept = kept or ""
        self._trim = OverlapTrim(kept) if kept else None
        self._calls = CallLog()
        self._continuing = False  # Hermes is about to continue an answer it found cut (next `call`)
        self._waiting_after = waiting_note_after
        self._waits = 0
        self._wait: WaitingNote | None = None
        self._heard = False
        self._history_len = history_len
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
                self._answered()
                self._heard = True
                self._new_text(text)
        elif kind == "reasoning" and message.get("text"):
            self._answered()
            self._sink.emit(REASONING, {"text": message["text"]})
        elif kind in ("call", "call_end"):
            self._model_call(kind, message)
        elif kind == "status":
            payload = status_payload(str(message.get("kind") or ""), str(message.get("text") or ""))
            if payload is not None:
                self._sink.emit(STATUS, payload)
        elif kind in ("progress", "tool_start", "interim"):
            self._answered()
            self._release()
            self._follow_up(kind, message)
        elif kind == "tool_complete":
            self._tool_complete(message)

    def _follow_up(self, kind: str, message: dict[str, Any]) -> None:
        if kind == "progress":
            self._progress(message)
        elif kind == "tool_start":
            self._tool_start(message)
        else:
            self._sink.emit(INTERIM_ASSISTANT, {
                "text": message.get("text") or "", "already_streamed": bool(message.get("already_streamed")),
            })

    def _model_call(self, kind: str, message: dict[str, Any]) -> None:
        """A request to the model starts (`call`) or ends (`call_end`): the waiting note and Hermes' own
        continuations. A refused request leaves the wait open: Hermes retries, and the user still waits."""
        if kind == "call":
            if self._wait is None and self._waiting_after > 0:
                self._waits += 1
                self._wait = WaitingNote(self._sink, f"wait-{self._waits}", self._waiting_after).start()
            if self._continuing:  # Hermes continues a cut answer: its opening may re-send what is shown
                self._release()
                self._continuing, self._trim = False, OverlapTrim(self._kept + self.text)
            return
        if message.get("ok"):
            self._answered()
        self._continuing = self._calls.note(message) is not None
        note = slow_down_note(message, self._calls.refusals)
        if note is not None:
            self._sink.emit(STATUS, {"text": note, "level": "info"})

    def _answered(self) -> None:
        """The model answered: the wait (if any) ends, its note saying how long it took."""
        if self._wait is not None:
            wait, self._wait = self._wait, None
            wait.answered()
            wait.close()

    def _stop_waiting(self) -> None:
        if self._wait is not None:
            wait, self._wait = self._wait, None
            wait.close()

    def _new_text(self, text: str) -> None:
        """Model text: through a continuation's trim (held while it may repeat the kept answer)."""
        if self._trim is not None:
            text = self._trim.feed(text)
            if not text:
                return
            self._trim = None
        self._token(text)

    def _release(self) -> None:
        """Show what the trim still holds (the reply moved on, or ended)."""
        if self._trim is not None:
            held, self._trim = self._trim.flush(), None
            if held:
                self._token(held)

    def _token(self, text: str) -> None:
        self._text.append(text)
        self._sink.emit(TOKEN, {"text": text})

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
        self._sink.emit(TOOL, payload)

    def _tool_complete(self, message: dict[str, Any]) -> None:
        tid, name = str(message.get("tid")), str(message.get("name") or "")
        queue = self._completions.get(name)
        extra = queue.popleft() if queue else {}
        _, started = self._open_tools.pop(tid, (name, time.monotonic()))
        duration = extra.get("duration")
        result = str(message.get("result") or "")
        self._sink.emit(TOOL_COMPLETE, {
            "tid": tid, "name": name, "preview": result,
            "duration": float(duration) if isinstance(duration, (int, float)) else time.monotonic() - started,
            "is_error": bool(extra.get("is_error", False)),
        })
        if name == "todo":
            entries = plan_entries(result)
            if entries is not None:
                self._sink.emit(PLAN, plan_payload(entries))

    def close_open_tools(self, reason: str) -> None:
        """Settle tools that started but never completed (interrupt, crash) as errors."""
        for tid, (name, started) in list(self._open_tools.items()):
            self._sink.emit(TOOL_COMPLETE, {
                "tid": tid, "name": name, "preview": reason,
                "duration": time.monotonic() - started, "is_error": True,
            })
        self._open_tools.clear()

    def finish(self, message: dict[str, Any]) -> TurnResult:
        """The TurnResult for the runner's `result` message.

        A failed turn's `final_response` is Hermes' error text, not an answer: it goes to the
        error's detail, never into a token, the transcript or the model's history.
        """
        self._stop_waiting()
        interrupted = bool(message.get("interrupted"))
        # Hermes reports some failures only as `completed: false` plus an `error` (a stream that stayed
        # truncated after its continuation attempts), and an empty reply as its "(empty)" sentinel answer:
        # neither is an answer.
        gave_up = message.get("completed") is False and bool(message.get("error"))
        empty = empty_answer(message) and not self._heard
        failed = (bool(message.get("failed")) or gave_up or empty) and not interrupted
        self.close_open_tools("interrupted" if interrupted else "no result reported")
        final = str(message.get("final_response") or "")
        if interrupted and final.startswith(_INTERRUPT_STATUS_PREFIX):
            final = ""
        if not self._heard and final and not failed:
            self._new_text(final)  # answered without streaming (or a hook rewrote it): journal it
        self._release()
        usage = {k: v for k, v in (message.get("usage") or {}).items() if v is not None}
        replace = bool(message.get("replace_context"))
        context = merge_continuations(list(message.get("context") or []))
        if replace:
            self._sink.emit(COMPACTION, compaction_payload(self._history_len + 1, len(context)))
        fields: dict[str, Any] = dict(
            context=context, replace_context=replace, usage=usage,
            backend_session_id=message.get("session_id") or self.session_id,
        )
        if interrupted:
            return TurnResult(final_text=self.text, outcome="interrupted", **fields)
        if failed:
            if not replace:
                fields["context"] = self._partial_context()
            if empty:
                return failed_turn("empty_answer", f"Hermes: {message.get('exit_reason')}", final_text="",
                                   **fields)
            detail = str(message.get("error") or final or "Hermes Agent reported a failed turn")
            kind = str(message.get("error_type") or "") or failure_kind(detail, self._calls)
            return failed_turn(kind, detail, final_text=self.text, wait_s=wait_asked(kind, self._calls), **fields)
        return TurnResult(final_text=self.text, **fields)

    def _partial_context(self) -> list[dict[str, Any]]:
        text = self.text
        return [{"role": "assistant", "content": text}] if text else []

    def cut_short(self, *, kind: str, detail: str, interrupted: bool) -> TurnResult:
        """The TurnResult when no `result` came: the process died or was killed."""
        self._stop_waiting()
        self._release()
        self.close_open_tools("interrupted" if interrupted else "the agent stopped")
        if interrupted:
            return TurnResult(final_text=self.text, context=self._partial_context(), outcome="interrupted",
                              backend_session_id=self.session_id)
        return failed_turn(kind, detail, final_text=self.text, context=self._partial_context(),
                           backend_session_id=self.session_id)
