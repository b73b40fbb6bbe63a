"""The model settings a person chose in JupyterLab: backend, endpoint URL, model and key (docs/models.md).

Why a file of our own: the key must live on the server, never in JupyterLab's settings (those go back
to the browser). It is one small JSON file in the state dir, replaced atomically, mode 0600, read
with the same capped, link-refusing open as the session files. What an administrator preset through
traitlets is the fallback; what they locked (`HermesJupyter.locked_settings`) is never taken from here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

import msgspec

from ..fsio import atomic_write, read_capped

log = logging.getLogger(__name__)

SettingName = Literal["backend", "url", "model", "key"]
SETTING_NAMES: Final[tuple[SettingName, ...]] = get_args(SettingName)
FILE_NAME: Final = "model-settings.json"
#: Far above any real file; a larger one is not read (it is not ours).
MAX_FILE_BYTES: Final = 64 * 1024
#: A key shorter than this shows no hint at all: its last 4 characters would be too much of it.
HINT_MIN_KEY_CHARS: Final = 16


class StoredSettings(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
    """What the person saved; None: not chosen (the preset applies)."""

    backend: str | None = None
    url: str | None = None
    model: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class Endpoint:
    """The settings a new run uses: the stored ones where allowed, else the administrator's preset."""

    backend: str
    url: str
    model: str
    key: str


def key_hint(key: str) -> str | None:
    """`…abcd` for a long key, nothing for a short one."""
    return "…" + key[-4:] if len(key) >= HINT_MIN_KEY_CHARS else None


def effective(stored: StoredSettings, preset: Endpoint, locked: frozenset[str], allowed: list[str]) -> Endpoint:
    """Stored values win unless locked; a preset key only ever goes to the preset URL (docs/models.md)."""
    def pick(name: SettingName, preset_value: str) -> str:
        value = getattr(stored, name)
        return value if value and name not in locked else preset_value

    url = pick("url", preset.url)
    key = pick("key", "")
    if not key:
        key = preset.key if url.rstrip("/") == preset.url.rstrip("/") else ""
    backend = pick("backend", preset.backend)
    if backend not in allowed:
        backend = preset.backend
    return Endpoint(backend=backend, url=url, model=pick("model", preset.model), key=key)


class SettingsStore:
    """The settings file; an unreadable one is logged and read as empty, never overwritten until a save."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME

    def load(self) -> StoredSettings:
        try:
            raw = read_capped(self.path, MAX_FILE_BYTES)
        except FileNotFoundError:
            return StoredSettings()
        except OSError as exc:  # a link, a FIFO, a huge file: not ours to read
            log.warning("hermes_jupyter: model settings %s not read: %s", self.path, exc)
            return StoredSettings()
        try:
            return msgspec.json.decode(raw, type=StoredSettings)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            log.warning("hermes_jupyter: model settings %s cannot be read: %s", self.path, exc)
            return StoredSettings()

    def save(self, settings: StoredSettings) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, msgspec.json.encode(settings))
