"""What the notebook tools reach inside the server: its contents manager and its kernels.

- Notebooks are read through `serverapp.contents_manager` (so custom contents managers,
  hidden-file rules and the server's view of the file apply), by a path confined to
  root_dir first (`agents/sandbox.confine`).
- Kernels are reached with a jupyter_client kernel client of our own on the kernel's
  ports. Introspection is a small program (kernel_summary.py then kernel_probe_program.py,
  package files read as text) evaluated as a silent `user_expressions` entry (store_history
  off, only busy/idle on iopub, no names left behind). The agent's
  code runs as a normal execution (outputs on iopub, no history entry), in a subshell of
  its own when the kernel has them (kernel_run.py), and only when the tools say the user
  approved it.

`make_tools_factory(serverapp, broker)` builds the `ToolsFactory` the `openai` backend takes.
"""

from __future__ import annotations

import ast
import asyncio
import json
import queue
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import KernelManager
from jupyter_client.session import Session
from jupyter_core.utils import ensure_async
from tornado import web

from ..agents.approvals import ApprovalBroker
from ..agents.cell_tools import CellEditor
from ..agents.sandbox import NotNotebookPath, notebook_api_path
from ..agents.tools import CodeRun, NotebookTools, ToolError
from ..redact import Redactor
from .kernel_run import run_in_kernel
from .rooms import RoomUnavailable, SharedNotebooks
from .kernel_subshell import close_subshell, has_subshells, open_subshell, send_execute

#: Seconds an introspection request may take (it queues behind a running cell).
INTROSPECTION_TIMEOUT_S = 10.0

# The probe that runs inside the kernel: kernel_summary.py (bounded reprs, a variable as data: shape,
# dtypes, head, nulls) then kernel_probe_program.py, both read as text, never imported by the server.
_PROBE = "\n".join(
    resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    for name in ("kernel_summary.py", "kernel_probe_program.py")
)


def _probe_expression(args: dict[str, Any]) -> str:
    """One expression that runs `_PROBE` in a fresh namespace and evaluates to its `result`."""
    return (
        f"(lambda g: (exec({_PROBE!r}, g), g['result'])[1])"
        f"({{'__name__': '__hermes_probe__', 'ip': get_ipython(), "
        f"'args': __import__('json').loads({json.dumps(args)!r})}})"
    )


class ContentsNotebooks:
    """Read notebooks by paths confined to `root_dir`: the live document of a collaboration room holding one
    (what people see now, the agent's own changes included: the room saves the file later), else the file
    through the contents manager."""

    def __init__(self, contents_manager: Any, root_dir: str, rooms: SharedNotebooks | None = None) -> None:
        self.contents_manager = contents_manager
        self.root_dir = root_dir
        self.rooms = rooms

    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]:
        try:
            target = notebook_api_path(self.root_dir, path)
        except NotNotebookPath as exc:
            raise ToolError(str(exc)) from exc
        live = await self._room_copy(target)
        if live is not None:
            return target, live
        try:
            model = await ensure_async(self.contents_manager.get(target, content=True, type="notebook"))
        except web.HTTPError as exc:
            raise ToolError(f"Cannot read {target}: {exc.log_message or exc.reason or exc.status_code}.") from exc
        return target, dict(model["content"])


    async def _room_copy(self, target: str) -> dict[str, Any] | None:
        """The notebook as its room holds it now, or None (no room, or unreachable: then the file is read)."""
        if self.rooms is None:
            return None
        try:
            doc = await self.rooms.document(target)
        except RoomUnavailable:
            return None
        return dict(doc.get()) if doc is not None else None


class KernelAccess:
    """Introspect and run code in kernels found by id through `lookup` (a jupyter_client KernelManager)."""

    def __init__(
        self, lookup: Callable[[str], KernelManager], *, introspection_timeout_s: float = INTROSPECTION_TIMEOUT_S,
        list_limit: int = 200, preview_chars: int = 120, inspect_preview_chars: int = 2000,
    ) -> None:
        self._lookup = lookup
        self.introspection_timeout_s = introspection_timeout_s
        self.list_limit = list_limit
        self.preview_chars = preview_chars
        self.inspect_preview_chars = inspect_preview_chars

    async def list_variables(self, kernel_id: str) -> dict[str, Any]:
        return await self._probe(kernel_id, {"op": "list", "limit": self.list_limit, "preview": self.preview_chars})

    async def inspect_variable(self, kernel_id: str, name: str) -> dict[str, Any]:
        if not name or len(name) > 200 or not all(p.isidentifier() and not p.startswith("_") for p in name.split(".")):
            raise ToolError(f"{name!r} is not a variable name (private and dunder attributes are not shown).")
        info = await self._probe(kernel_id, {"op": "inspect", "name": name, "preview": self.inspect_preview_chars})
        if "error" in info:
            raise ToolError(str(info["error"]))
        return info

    async def ready_to_run(self, kernel_id: str) -> None:
        """Refuse now, before anyone is asked to approve, code the kernel could not start now:
        one without subshells that is busy (docs/agent-reach.md, "A busy kernel")."""
        km = self._kernel(kernel_id)
        if getattr(km, "execution_state", None) != "busy":
            return
        kc = await _connect(km, iopub=False, control=True)
        try:
            if not await has_subshells(kc, km):
                self._refuse_busy(km)
        finally:
            kc.stop_channels()

    async def run_code(self, kernel_id: str, code: str, timeout_s: float, *, store_history: bool = False) -> CodeRun:
        """Execute visibly (a history entry only for a cell's run) in a subshell of its own when the kernel has
        them, else on the idle main shell; collect the outputs; stop it past `timeout_s` (kernel_run.py)."""
        km = self._kernel(kernel_id)
        kc = await _connect(km, iopub=True)
        try:
            return await run_in_kernel(km, kc, code, timeout_s, lambda: self._refuse_busy(km),
                                       store_history=store_history)
        finally:
            kc.stop_channels()

    async def _probe(self, kernel_id: str, args: dict[str, Any]) -> dict[str, Any]:
        """Evaluate the probe in a subshell when the kernel has them (a busy kernel, e.g. the
        `%%hermes` cell of this very run, still answers: kernel_subshell.py), else on the main shell."""
        km = self._kernel(kernel_id)
        kc = await _connect(km, iopub=False, control=True)
        subshell = None
        try:
            subshell = await open_subshell(kc, km)
            if subshell is None:
                self._refuse_busy(km, "answer questions about its variables meanwhile")
            msg_id = send_execute(kc, {"code": "", "silent": True, "store_history": False, "allow_stdin": False,
                                       "user_expressions": {"hermes": _probe_expression(args)}}, subshell)
            reply = await _reply(kc, msg_id, self.introspection_timeout_s)
        finally:
            if subshell is not None:
                await close_subshell(kc, subshell)
            kc.stop_channels()
        value = (reply["content"].get("user_expressions") or {}).get("hermes") or {}
        if value.get("status") != "ok":
            raise ToolError(f"Inspecting the kernel failed: {value.get('ename', 'error')}: {value.get('evalue', '')}")
        try:
            result = json.loads(ast.literal_eval(value["data"]["text/plain"]))
        except (KeyError, ValueError, SyntaxError, TypeError) as exc:
            raise ToolError("The kernel's answer could not be read.") from exc
        if not isinstance(result, dict):
            raise ToolError("The kernel's answer could not be read.")
        return result

    def _kernel(self, kernel_id: str) -> KernelManager:
        try:
            km = self._lookup(kernel_id)
        except (KeyError, web.HTTPError) as exc:
            raise ToolError(f"The notebook's kernel ({kernel_id}) is not running.") from exc
        spec_language = _language(km)
        if spec_language not in (None, "python"):
            raise ToolError(f"The notebook's kernel runs {spec_language}; these tools only know Python kernels.")
        return km

    @staticmethod
    def _refuse_busy(km: KernelManager, doing: str = "run code beside it") -> None:
        """The server tracks each kernel's state; a busy kernel would queue us behind the user's cell."""
        if getattr(km, "execution_state", None) == "busy":
            raise ToolError("The kernel is busy running a cell (a %%hermes cell keeps it busy for its whole "
                            f"answer), and this kernel cannot {doing} (it has no subshells: "
                            "ipykernel 7 has them). Nothing was run; try again when the kernel is idle.")


def _language(km: KernelManager) -> str | None:
    try:
        spec = km.kernel_spec
    except (KeyError, OSError, ValueError):  # NoSuchKernel is a KeyError
        return None
    return str(spec.language).lower() if spec is not None and spec.language else None


async def _connect(km: KernelManager, *, iopub: bool, control: bool = False) -> AsyncKernelClient:
    """A client of our own on the kernel's ports (shell, plus iopub and control when outputs are wanted).

    It gets its own `Session`: the session id is also the zmq identity of the shell socket,
    so a client sharing the manager's Session would take the kernel's replies meant for
    another client with that Session (seen with ipykernel 7: the first one stops hearing).
    """
    info = dict(km.get_connection_info(session=False))
    session = Session(key=info.pop("key"), signature_scheme=info.pop("signature_scheme"), username="hermes")
    kc = AsyncKernelClient(session=session, **info)
    kc.start_channels(shell=True, iopub=iopub, stdin=False, hb=False, control=iopub or control)
    if iopub:
        try:
            await _wait_iopub(kc)
        except BaseException:
            kc.stop_channels()
            raise
    return kc


async def _wait_iopub(kc: AsyncKernelClient, timeout_s: float = 10.0) -> None:
    """Until iopub delivers, outputs could be lost (a late SUBSCRIBE): ping over control, which a
    busy kernel still answers, until a status message arrives on iopub."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        kc.control_channel.send(kc.session.msg("kernel_info_request"))
        try:
            await kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            continue
        return
    raise ToolError("Could not connect to the kernel's output channel.")


async def _reply(kc: AsyncKernelClient, msg_id: str, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        try:
            msg: dict[str, Any] = await kc.get_shell_msg(timeout=left)
        except queue.Empty:
            break
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg
    raise ToolError(f"The kernel did not answer within {timeout_s:g} s (is it busy running a cell?).")


class ServerNotebookAccess:
    """`NotebookAccess` from its two halves."""

    def __init__(self, contents: ContentsNotebooks, kernels: KernelAccess) -> None:
        self.contents = contents
        self.kernels = kernels

    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]:
        return await self.contents.read_notebook(path)

    async def list_variables(self, kernel_id: str) -> dict[str, Any]:
        return await self.kernels.list_variables(kernel_id)

    async def inspect_variable(self, kernel_id: str, name: str) -> dict[str, Any]:
        return await self.kernels.inspect_variable(kernel_id, name)

    async def ready_to_run(self, kernel_id: str) -> None:
        await self.kernels.ready_to_run(kernel_id)

    async def run_code(self, kernel_id: str, code: str, timeout_s: float, *, store_history: bool = False) -> CodeRun:
        return await self.kernels.run_code(kernel_id, code, timeout_s, store_history=store_history)


def make_tools_factory(
    serverapp: Any, broker: ApprovalBroker, parent: Any = None, redactor: Redactor | None = None,
    editor: CellEditor | None = None,
) -> NotebookTools:
    """The notebook tools over this server's contents and kernel managers (a `ToolsFactory`); cells are
    changed only through `editor` (notebook_editor.py)."""
    contents = ContentsNotebooks(serverapp.contents_manager, getattr(serverapp.contents_manager, "root_dir", None)
                                 or serverapp.root_dir, getattr(editor, "rooms", None))
    kernels = KernelAccess(serverapp.kernel_manager.get_kernel)
    access = ServerNotebookAccess(contents, kernels)
    return NotebookTools(access=access, broker=broker, parent=parent, redactor=redactor, editor=editor)
