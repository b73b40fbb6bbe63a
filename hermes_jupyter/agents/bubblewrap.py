"""Run an agent process in a bubblewrap (`bwrap`) sandbox, out of sight of the server.

Why: an agent with shell or file tools runs as the same user as the Jupyter server. Without a
sandbox it can read the server's secrets from `/proc/<server pid>/environ` and `cmdline`, the
server token and every kernel's connection key from the Jupyter runtime dir (`jpserver-*.json`,
`kernel-*.json`), and other sessions' journals from the hermes state dir. Scrubbing the
environment alone cannot stop that. In the sandbox (docs/agent-reach.md):

- a new PID namespace with its own `/proc`: the server's process does not exist there;
- the filesystem read-only, except the writable paths (the working directory, HERMES_HOME) and
  a private `/tmp`;
- empty read-only directories over the hidden paths (runtime dir, state dir, Jupyter config);
- no capabilities, even when the server runs as root. The network is shared: the model
  provider is reached over it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How to wrap a command: `bwrap`'s path and what the sandboxed process may write and may not see."""

    bwrap: str
    writable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    cwd: str | None = None

    def argv(self, command: list[str]) -> list[str]:
        """`command` wrapped in bwrap. Paths that do not exist are left out (bwrap could not mount them)."""
        args = [
            self.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        ]
        for path in _under_tmp(command):  # the private /tmp must not hide the command's own files
            args += ["--ro-bind", path, path]
        for path in _existing(self.writable):
            args += ["--bind", path, path]
        for path in _existing(self.hidden):
            args += ["--tmpfs", path, "--remount-ro", path]
        if self.cwd:
            args += ["--chdir", self.cwd]
        return [*args, "--", *command]


def _under_tmp(command: list[str]) -> list[str]:
    """Folders the command needs that live under /tmp: an interpreter's install (the folder above its
    `bin/`) and the folder of each script or file it is given. Nothing else of /tmp is shown."""
    folders: list[str] = []
    for arg in command:
        if not arg.startswith("/tmp/") or not os.path.exists(arg):
            continue
        parent = os.path.dirname(os.path.abspath(arg))
        folders.append(os.path.dirname(parent) if os.path.basename(parent) == "bin" else parent)
    return _existing(folders)


def _existing(paths: Iterable[str]) -> list[str]:
    """Real paths of the existing directories among `paths`, without duplicates, never `/`."""
    seen: dict[str, None] = {}
    for path in paths:
        real = os.path.realpath(os.path.expanduser(path))
        if real != "/" and os.path.isdir(real):
            seen.setdefault(real, None)
    return list(seen)


def find_bwrap(name: str) -> str | None:
    """The bwrap executable: `name` as a path, or looked up on PATH."""
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name)


@functools.lru_cache(maxsize=8)
def unusable_reason(bwrap: str) -> str | None:
    """None when `bwrap` can create the sandbox here, else a sentence saying why not (cached per path).

    A container without user namespaces (or without CAP_SYS_ADMIN) has bwrap installed but
    cannot use it: only running it tells.
    """
    path = find_bwrap(bwrap)
    if path is None:
        return f"bubblewrap ({bwrap}) is not installed; on Debian or Ubuntu: apt-get install bubblewrap"
    probe = Sandbox(path).argv([sys.executable, "-c", "pass"])
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({path}) could not be run: {exc}"
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        return f"bubblewrap ({path}) cannot create a sandbox here: {detail[-1] if detail else done.returncode}"
    return None


def server_private_paths() -> list[str]:
    """What an agent must not see of the server on disk: Jupyter's runtime and config dirs, hermes' state dir."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_runtime_dir

    from ..paths import default_state_dir

    return [jupyter_runtime_dir(), jupyter_config_dir(), str(default_state_dir())]


class SandboxUnavailable(RuntimeError):
    """The sandbox is required and cannot be created here."""


SandboxMode = Literal["auto", "require", "off"]


async def wrap(
    command: list[str], *, mode: SandboxMode, bwrap: str, env: Mapping[str, str], cwd: str | None,
    writable: Iterable[str] = (), hidden: Iterable[str] = (),
) -> list[str]:
    """`command` as it should be spawned: inside the sandbox unless `mode` is off or bwrap cannot work here.

    `auto` falls back to the bare command with a logged warning; `require` raises
    `SandboxUnavailable` instead. The working directory and the agent's HERMES_HOME are writable.
    """
    if mode == "off":
        return list(command)
    reason = await asyncio.to_thread(unusable_reason, bwrap)
    if reason is not None:
        if mode == "require":
            raise SandboxUnavailable(f"the agent must run in a sandbox and cannot: {reason}")
        log.warning(
            "hermes: the agent runs WITHOUT a sandbox: its shell and file tools can read the server's "
            "environment, its token and the Jupyter runtime dir (docs/agent-reach.md). %s", reason,
        )
        return list(command)
    workdir = os.path.realpath(cwd or os.getcwd())
    home = Path(env.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
    home.mkdir(parents=True, exist_ok=True)  # hermes-agent creates it anyway; a bind needs it first
    sandbox = Sandbox(
        bwrap=str(find_bwrap(bwrap)), writable=(workdir, str(home), *writable),
        hidden=(*server_private_paths(), *hidden), cwd=workdir,
    )
    return sandbox.argv(command)
