"""The state dir's own folders must be real folders; checked once, at start (docs/journal.md, "Hostile files").

A linked `sessions/` or `runs/` would send every read, write and delete (and the
start-up purge of deleted sessions) to wherever the link points. Hermes refuses to
use such a state dir: the problem goes to the log as an ERROR, the extension still
loads, and every hermes route answers 503 with the same plain sentence, so the
sidebar can say what is wrong instead of showing nothing. The state dir itself may
be a link (an administrator's choice, like a linked home folder); its folders may not.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .errors import UserError

#: The folders of the state dir that must be real folders when they exist.
OWN_FOLDERS = ("sessions", "runs")


class StateDirRefused(UserError):
    """The state dir cannot be used as it is: a plain 503 on every route until it is fixed and the server restarts."""

    def __init__(self, message: str) -> None:
        super().__init__(503, message, "the hermes state folder was refused at start; see the server log")


def state_dir_problem(state: Path) -> tuple[str, str] | None:
    """`(plain sentence, log line)` when one of the state dir's own folders is a link or not a folder, else None."""
    for name in OWN_FOLDERS:
        path = state / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue  # created at start
        except OSError as exc:
            return (f"The hermes state folder '{name}' cannot be read. Check its permissions and restart the server.",
                    f"hermes state folder {path} cannot be read: {exc}")
        if stat.S_ISLNK(info.st_mode):
            return (f"The hermes state folder '{name}' is a link; Hermes does not follow links there. "
                    "Replace it with a real folder and restart the server.",
                    f"hermes state folder {path} is a symbolic link to {os.readlink(path)!r}; refusing the state dir")
        if not stat.S_ISDIR(info.st_mode):
            return (f"The hermes state folder '{name}' is not a folder. Move it away (Hermes creates the folder) "
                    "and restart the server.",
                    f"hermes state folder {path} is not a folder; refusing the state dir")
    return None


class RefusedServices:
    """Stands in for `HermesServices` when the state dir is refused: every use answers the plain 503.

    Handlers reach the services only through `self.hermes`, after authentication, so
    every route (REST and the WebSocket) answers the sentence and nothing else runs.
    """

    def __init__(self, message: str) -> None:
        self.message = message

    def __getattr__(self, name: str) -> Any:
        raise StateDirRefused(self.message)


def refuse_if_linked(state: Path, log: Any) -> RefusedServices | None:
    """At start: the stand-in services (and an ERROR in the log) if the state dir must be refused, else None."""
    problem = state_dir_problem(state)
    if problem is None:
        return None
    message, log_line = problem
    log.error("hermes_jupyter: %s. Every hermes route answers 503 until it is fixed and the server restarts.", log_line)
    return RefusedServices(message)
