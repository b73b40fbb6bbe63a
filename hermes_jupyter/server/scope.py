"""What a kernel's token reaches: the sessions of its kernel and of its notebook, and their runs.

Why: a kernel runs user code and approved agent code; its token must not read another
notebook's conversation, start a turn whose tools reach another kernel's variables, or bind a
session elsewhere. The server decides from what it knows (the token's kernel id, the session's
stored binding, the Jupyter sessions of that kernel), never from what the request claims.
Whatever is out of scope answers exactly as if it did not exist (404), so a kernel learns
nothing about other kernels' sessions. Persons and other tokens are not limited here.

A session bound to the notebook a kernel serves is that kernel's too, whichever kernel it was
bound to before: the binding follows the notebook, so after Shut Down Kernel and a new kernel the
notebook's conversation goes on (its next run binds it to the new kernel).
"""

from __future__ import annotations

import posixpath
from typing import Any

from ..agents.base import NotebookBinding
from ..runs.status import UnknownRun
from ..sessions.store import UnknownSession
from .errors import user_error
from .principals import Principal, principal_of
from .services import HermesServices

ELSEWHERE = "That notebook or kernel was not found here. A notebook's kernel works only with its own notebook."


def _norm(path: str | None) -> str | None:
    return posixpath.normpath(path.strip("/")) if path and path.strip("/") else None


def _reaches(principal: Principal, kernel_id: str | None, notebook_path: str | None, paths: set[str]) -> bool:
    """Whether a kernel reaches a session bound to `kernel_id` / `notebook_path` (`paths`: the kernel's notebooks)."""
    return kernel_id == principal.kernel_id or (_norm(notebook_path) or "") in paths


def visible_rows(principal: Principal, rows: list[dict[str, Any]], paths: set[str]) -> list[dict[str, Any]]:
    """A listing as this principal may see it: a kernel sees its own and its notebook's sessions, nobody else's."""
    if principal.kind != "kernel":
        return rows
    return [r for r in rows if _reaches(principal, r.get("kernel_id"), r.get("notebook_path"), paths)]


async def check_session(handler: Any, hermes: HermesServices, session_id: str) -> None:
    """A kernel may touch only its own and its notebook's sessions; others do not exist for it (404)."""
    principal = await principal_of(handler)
    if principal.kind != "kernel":
        return
    session = await hermes.manager.offload(hermes.store.load, session_id)  # UnknownSession for a missing one
    if session.kernel_id == principal.kernel_id:
        return
    if not _reaches(principal, session.kernel_id, session.notebook_path,
                    await kernel_paths(handler, principal.kernel_id or "")):
        raise UnknownSession(session_id)


async def check_run(handler: Any, hermes: HermesServices, run_id: str) -> None:
    """A kernel may touch only runs (live, queued or journaled) of sessions bound to its kernel (else 404)."""
    principal = await principal_of(handler)
    if principal.kind != "kernel":
        return
    session_id = await hermes.manager.session_of_run(run_id)  # UnknownRun for a run nobody knows
    try:
        await check_session(handler, hermes, session_id)
    except UnknownSession:
        raise UnknownRun(run_id) from None


async def kernel_paths(handler: Any, kernel_id: str) -> set[str]:
    """The notebook paths of the Jupyter sessions whose kernel this is (usually one; none for a bare kernel)."""
    sessions = await handler.session_manager.list_sessions()
    return {p for s in sessions if (s.get("kernel") or {}).get("id") == kernel_id
            and (p := _norm(str(s.get("path") or ""))) is not None}


async def own_binding(handler: Any, notebook: NotebookBinding | None) -> NotebookBinding | None:
    """The notebook binding a request may use: a kernel's is always its own kernel and one of its notebooks.

    A kernel naming another kernel or another notebook gets a 404; naming none, it gets its own
    (a run of its notebook's session left bound to a replaced kernel moves to this one).
    """
    principal = await principal_of(handler)
    if principal.kind != "kernel":
        return notebook
    assert principal.kernel_id is not None
    wanted_kernel = notebook.kernel_id if notebook else None
    wanted_path = _norm(notebook.notebook_path) if notebook else None
    paths = await kernel_paths(handler, principal.kernel_id)
    if (wanted_kernel and wanted_kernel != principal.kernel_id) or (wanted_path and wanted_path not in paths):
        raise user_error(404, ELSEWHERE, f"the token of kernel {principal.kernel_id} asked for kernel "
                         f"{wanted_kernel or '(its own)'}, notebook {wanted_path or '(its own)'}")
    path = wanted_path or (next(iter(paths)) if len(paths) == 1 else None)
    return NotebookBinding(notebook_path=path, cell_id=notebook.cell_id if notebook else None,
                           kernel_id=principal.kernel_id)


async def check_notebook(handler: Any, path: str) -> None:
    """A kernel may recover only its own notebook (else 404)."""
    principal = await principal_of(handler)
    if principal.kind == "kernel" and _norm(path) not in await kernel_paths(handler, principal.kernel_id or ""):
        raise user_error(404, ELSEWHERE, f"the token of kernel {principal.kernel_id} asked for notebook {path}")


async def notebook_kernel(handler: Any, path: str) -> str | None:
    """The kernel of the notebook's Jupyter session now (None when the notebook has no running kernel)."""
    wanted = _norm(path)
    sessions = await handler.session_manager.list_sessions()
    return next((str(s["kernel"]["id"]) for s in sessions
                 if _norm(str(s.get("path") or "")) == wanted and (s.get("kernel") or {}).get("id")), None)


async def binding_now(handler: Any, hermes: HermesServices, session_id: str) -> NotebookBinding | None:
    """For a run whose request names no notebook: the session's notebook with the kernel it has *now*.

    The binding follows the notebook, not a kernel id: after a restart with a new kernel, Shut Down
    Kernel and a new one, or a server restart, the run reaches the notebook's current kernel. None
    keeps the session's binding as it is (not bound, the same kernel, or no kernel running).
    """
    session = await hermes.manager.offload(hermes.store.load, session_id)
    if not session.notebook_path:
        return None
    kernel_id = await notebook_kernel(handler, session.notebook_path)
    if kernel_id is None or kernel_id == session.kernel_id:
        return None
    return NotebookBinding(notebook_path=session.notebook_path, cell_id=session.cell_id, kernel_id=kernel_id)

