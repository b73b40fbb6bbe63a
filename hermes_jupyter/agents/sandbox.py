"""The sealed environment: what an agent may see of the server's environment and of its disk.

- `scrubbed_env`: the environment handed to an agent process, without the server's
  secrets (JupyterHub and Jupyter tokens, the runtime dir and `JPY_COOKIE` always; any
  `*_TOKEN`, `*_SECRET`, `*_KEY`, `*_PASSWORD`, `*_COOKIE`, … and any value that carries a
  secret by its shape, such as `scheme://user:password@host`, unless allow-listed).
- `confine`: a path an agent names, resolved inside the server's root_dir or refused
  (`..`, absolute paths elsewhere, symlinks that lead out).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from ..redact import looks_secret

#: Never passed on, whatever the allow-list says: they open the user's Jupyter server or hub
#: (the runtime dir holds the server token and every kernel's connection key).
ALWAYS_DROPPED = frozenset({
    "JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "JUPYTER_TOKEN", "JPY_COOKIE", "JUPYTER_RUNTIME_DIR",
    "HERMES_JUPYTER_TOKEN", "HERMES_JUPYTER_SERVER_TOKEN",
})
#: Names treated as secrets (fnmatch, compared upper-case); they pass only when allow-listed.
SECRET_PATTERNS = (
    "*_TOKEN", "*_SECRET", "*_KEY", "*_PASSWORD", "*_PASSWD", "*_CREDENTIALS", "*_COOKIE",
    "TOKEN", "SECRET", "PASSWORD", "COOKIE",
)


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in ALWAYS_DROPPED or any(fnmatch.fnmatchcase(upper, p) for p in SECRET_PATTERNS)


def scrubbed_env(
    environ: Mapping[str, str], allow: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`environ` without secrets, then `extra` on top.

    A variable is a secret by its name or by its value (a provider key, a URL with a password).
    `allow` holds fnmatch patterns of secret names that may pass (for instance a model
    provider's API key); `ALWAYS_DROPPED` names are dropped even when allowed or in `extra`.
    """
    allowed = [p.upper() for p in allow]

    def passes(name: str, value: str) -> bool:
        upper = name.upper()
        if upper in ALWAYS_DROPPED:
            return False
        if any(fnmatch.fnmatchcase(upper, p) for p in allowed):
            return True
        return not is_secret_name(name) and not looks_secret(value)

    env = {name: value for name, value in environ.items() if passes(name, value)}
    for name, value in (extra or {}).items():
        if name.upper() not in ALWAYS_DROPPED:
            env[name] = value
    return env


class PathEscape(PermissionError):
    """A path that leads outside the root directory (or cannot be checked): refused."""


def confine(root_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """The real path of `path` (relative to `root_dir`, or absolute) if it stays inside `root_dir`.

    Refuses any `..` component, NUL bytes, absolute paths outside the root and paths
    whose real location (symlinks followed) is outside the real root; raises `PathEscape`.
    The path need not exist: the longest existing prefix is resolved.
    """
    text = os.fspath(path)
    if "\0" in text:
        raise PathEscape("the path contains a NUL byte")
    parts = text.replace("\\", "/").split("/")
    if ".." in parts:
        raise PathEscape(f"{text!r}: '..' is not allowed in a path")
    root = os.path.realpath(os.fspath(root_dir))
    candidate = text if os.path.isabs(text) else os.path.join(root, text)
    real = os.path.realpath(candidate)
    try:
        inside = os.path.commonpath([root, real]) == root
    except ValueError:  # different drives (Windows)
        inside = False
    if not inside:
        raise PathEscape(f"{text!r} is outside the server's root directory")
    return Path(real)


def api_path(root_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """The contents-manager path (relative, `/`-separated, "" for the root) of a confined `path`.

    An absolute path is a filesystem path: accepted only inside the root directory.
    """
    root = os.path.realpath(os.fspath(root_dir))
    relative = os.path.relpath(confine(root, path), root)
    return "" if relative == "." else PurePosixPath(*Path(relative).parts).as_posix()


class NotNotebookPath(ValueError):
    """A notebook path that leaves the root directory or names no .ipynb; the message is a sentence."""


def notebook_api_path(root_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """`api_path` of a notebook, for the tools that read one and the editor that changes one: both refuse the
    same paths with the same words (`NotNotebookPath`, which each turns into its own error)."""
    try:
        target = api_path(root_dir, path)
    except PathEscape as exc:
        raise NotNotebookPath(f"Refused: {exc}.") from exc
    if not target.endswith(".ipynb"):
        raise NotNotebookPath(f"{target or '/'} is not a notebook (.ipynb).")
    return target
