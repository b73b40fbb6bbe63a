"""Hermes' own configured keys: known secrets of every run of the `hermes` backend.

Hermes reads its provider keys from its home (`HERMES_HOME`, default `~/.hermes`): `config.yaml`,
`.env`, `auth.json`, and the same files of each profile under `profiles/<name>/`. The server
never sees these keys in its own environment, yet a provider error or the model may echo one;
knowing the values lets the run's redactor mask them exactly (docs/agent-reach.md, Redaction).

Read defensively: no link below the home is followed, anything but a regular file is skipped
(a FIFO never blocks us), each file is read up to `MAX_FILE_BYTES`, at most `MAX_PROFILES`
profiles and `MAX_VALUES` values are taken, and a YAML document with aliases is walked with a
node budget. The result is cached until one of the files changes (size or mtime).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any, Final, Iterator, Mapping

from ...redact import MIN_KNOWN_SECRET_CHARS, is_secret_name

log = logging.getLogger(__name__)

FILES: Final = ("config.yaml", ".env", "auth.json")
MAX_FILE_BYTES: Final = 256 * 1024
MAX_PROFILES: Final = 32
MAX_VALUES: Final = 256
#: YAML/JSON nodes walked per file at most (aliases can make a small file a huge tree).
MAX_NODES: Final = 20_000

#: A config key whose values are secrets: says key, token, secret or password.
_SECRET_KEY: Final = re.compile(r"(?i)key|token|secret|passw(?:or)?d|passwd|credential")
#: Keys that only name something (`key_env: OPENAI_API_KEY`, `max_tokens`, `tokenizer`).
_NOT_SECRET_KEY: Final = re.compile(r"(?i)(?:_env|env|tokens|tokenizer|_name|_file|_path|_url)$")
#: A value that is the name of a variable, or a placeholder, not a key.
_PLACEHOLDER: Final = re.compile(r"^(?:[A-Z_][A-Z0-9_]*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)$")
_DOTENV_LINE: Final = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")

_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple[Any, ...], list[str]]] = {}


def hermes_home(env: Mapping[str, str]) -> Path:
    """The home the agent process gets: its own `env` setting, else the server's, else `~/.hermes`."""
    return Path(env.get("HERMES_HOME") or os.environ.get("HERMES_HOME") or os.path.expanduser("~/.hermes"))


def known_secrets(home: Path) -> list[str]:
    """The secret values configured in `home` and its profiles (cached until a file changes)."""
    folders = _folders(home)
    signature = tuple(_signature(folder) for folder in folders)
    key = str(home)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
    values: list[str] = []
    for folder in folders:
        for name in FILES:
            text = _read(folder, name, home)
            if text is not None:
                values.extend(_values_of(name, text))
    unique = list(dict.fromkeys(v.strip() for v in values if _worth_knowing(v)))[:MAX_VALUES]
    with _cache_lock:
        _cache[key] = (signature, unique)
    return unique


def _folders(home: Path) -> list[Path]:
    """The home and its profile folders (real folders only: a linked profile is not followed)."""
    profiles = home / "profiles"
    try:
        if not stat.S_ISDIR(os.lstat(profiles).st_mode):
            return [home]
        with os.scandir(profiles) as entries:
            found = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    except OSError:
        return [home]
    return [home, *(profiles / name for name in found[:MAX_PROFILES])]


def _signature(folder: Path) -> tuple[Any, ...]:
    marks: list[Any] = []
    for name in FILES:
        try:
            st = os.lstat(folder / name)
            marks.append((name, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            marks.append((name, None))
    return tuple(marks)


def _read(folder: Path, name: str, home: Path) -> str | None:
    """The text of `folder/name` if it is a regular file (no link below `home` followed, never
    blocking), or None; at most `MAX_FILE_BYTES`."""
    try:
        dir_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the home itself may be a link
    except OSError:
        return None
    try:
        for part in folder.relative_to(home).parts:
            sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = sub
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            log.info("hermes home: could not open %s/%s: %s", folder, name, exc.strerror)
        return None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        data = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if len(data) > MAX_FILE_BYTES else data.decode("utf-8", "replace")


def _values_of(name: str, text: str) -> Iterator[str]:
    if name == ".env":
        yield from _dotenv_values(text)
        return
    try:
        if name == "auth.json":
            document = json.loads(text)
        else:
            import yaml  # type: ignore[import-untyped]  # a jupyter_server dependency (via jupyter_events)

            document = yaml.safe_load(text)
    except Exception:  # a broken file is Hermes' problem; it has no keys for us
        return
    yield from _walk(document, secret=False, budget=[MAX_NODES], seen=set())


def _walk(node: Any, *, secret: bool, budget: list[int], seen: set[int]) -> Iterator[str]:
    """String values under secret-named keys (at any depth below such a key)."""
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(node, str):
        if secret:
            yield node
        return
    if isinstance(node, (dict, list)):
        if id(node) in seen:  # a YAML alias: walked once
            return
        seen.add(id(node))
    if isinstance(node, dict):
        for key, value in node.items():
            named = isinstance(key, str) and bool(_SECRET_KEY.search(key)) and not _NOT_SECRET_KEY.search(key)
            yield from _walk(value, secret=secret or named, budget=budget, seen=seen)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value, secret=secret, budget=budget, seen=seen)


def _dotenv_values(text: str) -> Iterator[str]:
    for line in text.splitlines():
        match = _DOTENV_LINE.match(line)
        if match is None or not is_secret_name(match.group(1)):
            continue
        value = match.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        yield value


def _worth_knowing(value: str) -> bool:
    value = value.strip()
    return len(value) >= MIN_KNOWN_SECRET_CHARS and not _PLACEHOLDER.match(value)
