"""The model settings of this server, live: what `GET/PUT settings` read and change (docs/models.md).

A save is written to the state dir, then applied at once: the openai backend takes the new URL,
model and key for its next request, the default backend is what new sessions get, and the key
becomes a known secret of the redactor before anything could echo it. The key never leaves here
except in the `Authorization` header of requests to the URL it belongs to.
"""

from __future__ import annotations

import threading
from typing import Any, Callable
from urllib.parse import urlsplit

import msgspec

from ..agents.endpoint_check import CheckResult, check_endpoint, find_local_servers
from ..agents.endpoint_settings import (
    SETTING_NAMES,
    Endpoint,
    SettingsStore,
    StoredSettings,
    effective,
    key_hint,
)
from .errors import user_error

_LIMITS = {"backend": 40, "url": 2048, "model": 200, "key": 4096}
_WORDS = {"backend": "kind of agent", "url": "address", "model": "model", "key": "key"}


class ModelSettings:
    """Stored settings + the administrator's preset and locks → the endpoint new runs use."""

    def __init__(
        self, store: SettingsStore, preset: Endpoint, *, locked: frozenset[str], allowed_backends: list[str],
        apply: Callable[[Endpoint], None], learn_key: Callable[[str], None], local_ports: dict[str, int],
    ) -> None:
        self.store = store
        self.preset = preset
        self.locked = locked
        self.allowed_backends = allowed_backends
        self.local_ports = local_ports
        self._apply = apply
        self._learn_key = learn_key
        self._lock = threading.Lock()
        self.stored = store.load()
        if self.stored.key:
            learn_key(self.stored.key)
        self.endpoint = self._effective()
        apply(self.endpoint)

    def _effective(self) -> Endpoint:
        return effective(self.stored, self.preset, self.locked, self.allowed_backends)

    def view(self) -> dict[str, Any]:
        """Everything but the key: whether one is set, and its last 4 characters if it is long."""
        ep = self.endpoint
        return {
            "backend": ep.backend, "url": ep.url, "model": ep.model, "key_set": bool(ep.key),
            "key_hint": key_hint(ep.key) if ep.key else None, "key_saved": bool(self.stored.key),
            "locked": sorted(self.locked), "backends": list(self.allowed_backends),
        }

    def update(self, body: dict[str, Any]) -> dict[str, Any]:
        """Change the fields `body` names (null or "" clears one back to the preset); save; apply."""
        changes = self._changes(body)
        with self._lock:
            stored = msgspec_replace(self.stored, changes)
            self.store.save(stored)
            self.stored = stored
            if stored.key:
                self._learn_key(stored.key)
            self.endpoint = self._effective()
            self._apply(self.endpoint)
        return self.view()

    def _changes(self, body: dict[str, Any]) -> dict[str, str | None]:
        unknown = set(body) - set(SETTING_NAMES)
        if unknown or not body:
            raise user_error(400, "Nothing to change: give a kind of agent, an address, a model or a key.",
                             f"PUT settings takes any of {list(SETTING_NAMES)}; got {sorted(unknown) or 'nothing'}")
        changes: dict[str, str | None] = {}
        for name, value in body.items():
            if name in self.locked:
                raise user_error(403, f"The {_WORDS[name]} is set by your administrator and cannot be changed here.",
                                 f"{name} is in HermesJupyter.locked_settings")
            changes[name] = _checked(name, value, self.allowed_backends)
        return changes

    async def test(self, body: dict[str, Any]) -> CheckResult:
        """Test the URL, key and model given (each else the current one); the saved key only goes where it may."""
        url = _checked("url", body.get("url"), []) or self.endpoint.url
        model = _checked("model", body.get("model"), []) or ""
        key = _checked("key", body.get("key"), [])
        if key is None:
            key = self._saved_key_for(url)
        return await check_endpoint(url, key, model)

    def _saved_key_for(self, url: str) -> str:
        """The key a test of `url` may send: the person's own, else the preset one only to the preset URL."""
        if self.stored.key and "key" not in self.locked:
            return self.stored.key
        return self.preset.key if url.rstrip("/") == self.preset.url.rstrip("/") else ""

    async def local(self) -> list[dict[str, Any]]:
        return await find_local_servers(self.local_ports)


def msgspec_replace(stored: StoredSettings, changes: dict[str, str | None]) -> StoredSettings:
    return msgspec.structs.replace(stored, **changes)


def _checked(name: str, value: Any, allowed_backends: list[str]) -> str | None:
    """The value as stored: None clears; text within its limit; a URL http(s); a backend one allowed."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _LIMITS[name] or any(c in value for c in "\r\n\0"):
        raise user_error(400, f"The {_WORDS[name]} must be one line of text, and not too long.",
                         f"{name}: a string of at most {_LIMITS[name]} characters, no line breaks")
    value = value.strip()
    if name == "url":
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise user_error(400, "The address must start with http:// or https://, e.g. http://127.0.0.1:8080/v1.",
                             f"url {value!r} is not an http(s) URL")
    if name == "backend" and value not in allowed_backends:
        raise user_error(400, "That kind of agent is not available on this server. Choose another one.",
                         f"backend {value!r}; allowed: {', '.join(allowed_backends)}")
    return value or None
