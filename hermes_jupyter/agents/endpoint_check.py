"""Test an OpenAI-compatible endpoint, and find local model servers (docs/models.md).

Why two requests for a test: llama.cpp answers `GET /models` without looking at the key, so a
wrong key shows only on `POST /chat/completions`. That request carries no messages, which every
server refuses *after* checking the key (401/403 before, 400 after) and none turns into a
generation: a test costs no tokens. Answers are plain sentences; the key is never in one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import httpx

CheckKind = Literal["ok", "wrong_key", "unreachable", "unknown_model", "not_openai", "error"]

#: Seconds a test waits for each answer.
CHECK_TIMEOUT_S: Final = 5.0
#: Seconds a local server gets to answer its `/v1/models` (all ports are asked at once).
LOCAL_TIMEOUT_S: Final = 0.3
#: The usual ports of local model servers, by name (HermesJupyter.local_model_ports).
LOCAL_PORTS: Final = {"Ollama": 11434, "llama.cpp": 8080, "vLLM": 8000, "LM Studio": 1234}
#: Models named in a sentence; the rest are in `models`.
_NAMED: Final = 8


@dataclass
class CheckResult:
    ok: bool
    kind: CheckKind
    message: str
    models: list[str] = field(default_factory=list)
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "kind": self.kind, "message": self.message, "models": self.models,
                "detail": self.detail}


def _headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _model_ids(response: httpx.Response) -> list[str] | None:
    """The ids of an OpenAI `{"data": [{"id"}]}` list (Ollama and LM Studio answer the same), else None."""
    try:
        data = response.json().get("data")
        return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
    except (ValueError, AttributeError, TypeError):
        return None


def _listing(models: list[str]) -> str:
    shown = ", ".join(models[:_NAMED])
    return shown + (f" and {len(models) - _NAMED} more" if len(models) > _NAMED else "")


async def check_endpoint(url: str, key: str, model: str, timeout_s: float = CHECK_TIMEOUT_S) -> CheckResult:
    """Reach `url`, check the key and the model; one plain answer."""
    base = url.rstrip("/")
    try:
        async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
            listed = await client.get(base + "/models", headers=_headers(key))
            refused = _refused_key(listed)
            if refused is None and listed.status_code < 400:
                refused = await _probe_key(client, base, key, model)
    except (httpx.TimeoutException, httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
        return CheckResult(False, "unreachable", f"Nothing answered at {url}. Check the address and that the "
                           "server is running.", detail=type(exc).__name__)
    except httpx.HTTPError as exc:
        return CheckResult(False, "unreachable", f"Could not reach {url}. Check the address.",
                           detail=type(exc).__name__)
    if refused is not None:
        return refused
    return _judge_models(url, listed, model)


def _refused_key(response: httpx.Response) -> CheckResult | None:
    if response.status_code in (401, 403):
        return CheckResult(False, "wrong_key", "The server refused the key. Check the key, or leave it empty "
                           "for a local server that needs none.", detail=f"HTTP {response.status_code}")
    return None


async def _probe_key(client: httpx.AsyncClient, base: str, key: str, model: str) -> CheckResult | None:
    """A chat request with no messages: refused for the key (401/403) or for the body (anything else)."""
    try:
        response = await client.post(base + "/chat/completions", headers=_headers(key),
                                     json={"model": model or "test", "messages": [], "max_tokens": 1})
    except httpx.HTTPError:  # the listing answered: a server that drops this request said nothing about the key
        return None
    return _refused_key(response)


def _judge_models(url: str, listed: httpx.Response, model: str) -> CheckResult:
    if listed.status_code == 404:
        return CheckResult(False, "not_openai", f"{url} answered, but has no model list there. The address "
                           "usually ends with /v1.", detail="HTTP 404 on GET /models")
    if listed.status_code >= 400:
        return CheckResult(False, "error", f"{url} answered with an error. Check the address and try again.",
                           detail=f"HTTP {listed.status_code} on GET /models")
    models = _model_ids(listed)
    if models is None:
        return CheckResult(False, "not_openai", f"{url} answered, but not like an OpenAI-compatible server. "
                           "The address usually ends with /v1.", detail="GET /models is not a model list")
    if model and model not in models:
        offered = f" It offers: {_listing(models)}." if models else " It lists no models."
        return CheckResult(False, "unknown_model", f"The server does not offer the model {model}.{offered}",
                           models=models)
    if not models:
        return CheckResult(True, "ok", "Connected. The server lists no models; name one to use.")
    return CheckResult(True, "ok", f"Connected. Models: {_listing(models)}.", models=models)


async def find_local_servers(ports: dict[str, int], timeout_s: float = LOCAL_TIMEOUT_S) -> list[dict[str, Any]]:
    """`[{name, url, models}]` of the servers answering `GET /v1/models` on 127.0.0.1 (all asked at once)."""
    async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
        found = await asyncio.gather(*(_local(client, name, port) for name, port in ports.items()))
    return [entry for entry in found if entry is not None]


async def _local(client: httpx.AsyncClient, name: str, port: int) -> dict[str, Any] | None:
    url = f"http://127.0.0.1:{int(port)}/v1"
    try:
        response = await client.get(url + "/models")
    except httpx.HTTPError:
        return None
    models = _model_ids(response) if response.status_code == 200 else None
    return None if models is None else {"name": name, "url": url, "models": models}
