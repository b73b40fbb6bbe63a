"""`jupyter hermes recover` defers to a running Jupyter server that serves the notebook.

Such a server may hold the notebook in a collaboration room, which takes a rewritten file
back and throws away what collaborators typed meanwhile; or a browser may have it open with
unsaved edits. Only the server knows, so the shell asks it (`POST notebooks/recover`): it
recovers through the room, or refuses in plain words. With no server running, no room or open
notebook can exist and the file is rewritten here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ..api_client import HermesApiError, HermesClient, ServerInfo

RunningServers = Callable[[], Iterable[Mapping[str, Any]]]


@dataclass(frozen=True)
class Deferred:
    """What the running server did: cells recovered (and whether through a room), or why it refused."""

    url: str
    cells: int = 0
    shared: bool = False
    refused: str | None = None


def serving(notebook: Path, running_servers: RunningServers | None = None) -> tuple[ServerInfo, str] | None:
    """The running server whose root holds `notebook`, with the notebook's path under that root."""
    if running_servers is None:
        from jupyter_server.serverapp import list_running_servers

        running_servers = list_running_servers
    target = notebook.resolve()
    for info in running_servers():
        root = info.get("root_dir")
        if not root:
            continue
        try:
            relative = target.relative_to(Path(os.path.expanduser(str(root))).resolve())
        except ValueError:
            continue
        server = ServerInfo(str(info["url"]).rstrip("/") + "/", str(info.get("token") or ""), "runtime-file", str(root))
        return server, relative.as_posix()
    return None


def recover_through_server(
    server: ServerInfo, api_path: str, client: HermesClient | None = None, *, force: bool = False
) -> Deferred:
    """Ask `server` to recover the notebook; its refusal (a room it cannot reach, an open kernel) is kept.

    `force` rewrites the file even where a kernel has the notebook open (`jupyter hermes recover --force`)."""
    http = client or HermesClient(server)
    body: dict[str, Any] = {"path": api_path, **({"force": True} if force else {})}
    try:
        answer = http.request("POST", "notebooks/recover", body=body)
    except HermesApiError as exc:
        if exc.status == 404 and "notebook" not in exc.message.lower():
            return Deferred(server.url, refused="That Jupyter server serves this notebook but does not run "
                            "hermes-jupyter, so the file was left untouched: it could be open there. Stop that "
                            "server, or recover from a server with hermes-jupyter.")
        return Deferred(server.url, refused=exc.message)
    except (OSError, httpx.HTTPError) as exc:
        return Deferred(server.url, refused=f"The Jupyter server that serves this notebook did not answer ({exc}); "
                        "the file was left untouched. Try again, or stop that server first.")
    finally:
        if client is None:
            http.close()
    return Deferred(server.url, cells=int(answer.get("cells_recovered") or 0), shared=answer.get("shared") is True)
