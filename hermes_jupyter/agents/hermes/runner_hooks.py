"""What the runner adds to hermes-agent besides its callbacks (runner.py; docs/hermes-acp-notes.md).

Runs with the interpreter of a hermes-agent install, like runner.py: the standard library and
hermes-agent only, nothing from hermes_jupyter. Two things: each request to the model is reported to
the host (`call` / `call_end`), and a model server's kind is asked once per process.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

Send = Callable[[dict[str, Any]], None]


def watch_model_calls(agent: Any, rid: str, send: Send) -> None:
    """Tell the host when each request to the model starts (`call`) and how it ended (`call_end`).

    The host needs both for what it shows: a waiting note from a request's start until the model
    answers, and where Hermes continues a cut answer by itself (a `length` ending, or a stream cut
    that Hermes stubs as one), so the continuation's re-sent opening can be trimmed. A refused request
    reports its HTTP status and `Retry-After`, which Hermes keeps to itself.
    """
    for name in ("_interruptible_streaming_api_call", "_interruptible_api_call"):
        method = getattr(type(agent), name, None)
        if method is not None:
            setattr(agent, name, _watched(method, agent, rid, send))


def _watched(method: Callable[..., Any], agent: Any, rid: str, send: Send) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        send({"ev": "call", "run": rid})
        try:
            response = method(agent, *args, **kwargs)
        except BaseException as exc:
            send({"ev": "call_end", "run": rid, "ok": False, **_refusal(exc),
                  "max_retries": getattr(agent, "_api_max_retries", None)})
            raise
        send({"ev": "call_end", "run": rid, "ok": True, **_ending(response)})
        return response

    return call


def _ending(response: Any) -> dict[str, Any]:
    """How a model response ended: its finish reason, and whether Hermes made it up for a cut stream."""
    choices = getattr(response, "choices", None) or []
    first = choices[0] if choices else None
    finish = getattr(first, "finish_reason", None) or getattr(response, "stop_reason", None)
    message = getattr(first, "message", None)
    return {"finish": str(finish) if finish else None, "stub": getattr(response, "id", None) == "partial-stream-stub",
            "tool_calls": bool(getattr(message, "tool_calls", None))}


def _refusal(exc: BaseException) -> dict[str, Any]:
    """A failed request's HTTP status and Retry-After (seconds), where the exception carries them."""
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    headers = getattr(response, "headers", None)
    retry_after = None
    if headers is not None and hasattr(headers, "get"):
        try:
            retry_after = float(headers.get("retry-after") or "")
        except ValueError:
            pass
    return {"status": status if isinstance(status, int) else None, "retry_after": retry_after}


def remember_server_kinds() -> None:
    """Ask a model server what kind it is once per process, not on every agent build and reply.

    hermes-agent probes five endpoints (LM Studio, Ollama, llama.cpp, vLLM) to learn a local server's
    kind, and remembers only a positive answer, so a server that is none of them (llama-cpp-python,
    a proxy, a mock) is probed again when each agent is built and after each reply (its pricing lookup).
    A server's kind does not change while this process runs.
    """
    try:
        from agent import model_metadata  # type: ignore[import-not-found]  # hermes-agent, in its own venv
    except Exception:  # noqa: BLE001 - another hermes-agent layout: keep its own behaviour
        return
    detect = getattr(model_metadata, "detect_local_server_type", None)
    if detect is None or getattr(detect, "_remembered", False):
        return
    known: dict[tuple[str, str], Any] = {}
    lock = threading.Lock()

    def remembered(base_url: str, api_key: str = "") -> Any:
        key = (str(base_url).rstrip("/"), api_key or "")
        with lock:
            if key in known:
                return known[key]
        kind = detect(base_url, api_key=api_key)
        if kind is not None or _listening(str(base_url)):  # a server not up yet may still turn out to be one
            with lock:
                known[key] = kind
        return kind

    remembered._remembered = True  # type: ignore[attr-defined]
    model_metadata.detect_local_server_type = remembered  # its callers look it up in the module


#: Modules hermes-agent imports lazily during an agent's first turn (the conversation loop, the system
#: prompt's builders, `unittest.mock` for its test-client check): about 0.1 s of the first token.
FIRST_TURN_MODULES = (
    "agent.conversation_loop", "agent.chat_completion_helpers", "agent.system_prompt", "agent.turn_finalizer",
    "agent.prompt_caching", "agent.turn_retry_state", "agent.verification_stop", "agent.verify_hooks",
    "agent.bounded_response", "agent.coding_context", "agent.rate_limit_tracker", "agent.stream_single_writer",
    "agent.display", "agent.aux_accounting", "agent.credits_tracker", "agent.kanban_stop",
    "hermes_cli.nous_subscription", "hermes_cli.moa_config", "hermes_cli.profiles", "hermes_cli.skin_engine",
    "tools.hook_output_spill", "tools.skill_provenance", "unittest.mock",
)


def import_first_turn_modules() -> None:
    """Import now (while the spare agent is warmed) what the first turn would import on its way to the
    model's request; a module a newer hermes-agent moved or dropped is skipped."""
    import importlib

    for name in FIRST_TURN_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - only an optimisation
            pass


def _listening(base_url: str) -> bool:
    """Whether something accepts connections at `base_url`'s host and port (a TCP connect, no request)."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=1.0):
            return True
    except (OSError, ValueError):
        return False
