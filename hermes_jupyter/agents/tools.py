"""Notebook tools for a model-driven backend: read the notebook, look at the kernel, run code after a click.

`NotebookTools` (a Configurable, built once by the server) is the `ToolsFactory`; each
turn gets a `NotebookToolRegistry` bound to that turn's sink and notebook binding.
Reading (cells, outputs, variables) is free; `run_code` asks the `ApprovalBroker`
first, and only an `allow_once` answer runs anything. What the tools reach is
behind `NotebookAccess` (the server implements it over its contents and kernel
managers), so this module never imports the server. Every result, error included, passes
the server's `Redactor` before the model (or the journal) sees it.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from traitlets import Float, Int
from traitlets.config import Configurable

from ..autonomy import capped, is_autonomy, within
from ..redact import Redactor
from ..redact_run import RunRedactor
from .approvals import ApprovalBroker
from .base import EventSink, TurnRequest
from .cell_tools import CELL_TOOLS, CellEditor, CellLimits, CellTools, RunGate, asks_hermes, cell_schemas, offered
from .propose import PROPOSE_CELL, propose_cell, propose_schema
from .output_text import format_notebook, format_output, truncate
from .tool_images import ImageParts

READ_NOTEBOOK = "read_notebook"
LIST_VARIABLES = "list_variables"
INSPECT_VARIABLE = "inspect_variable"
RUN_CODE = "run_code"
DENIED = "Denied by the user: the code was not run."


class ToolError(Exception):
    """An expected failure the model should read (no such notebook, kernel gone or busy, bad name)."""


@dataclass(slots=True)
class CodeRun:
    """What running code in a kernel produced; `outputs` are nbformat-shaped output dicts.

    `status`: `ok`, `error` (the code raised), `interrupted` (stopped after the time limit),
    `not_stopped` (still running after the time limit and the interrupt) or `not_started` (the
    kernel did not begin it in time; it was withdrawn and never runs later).
    """

    status: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    #: The kernel's execution count of the run (`In[n]`), when it started one.
    execution_count: int | None = None


class NotebookAccess(Protocol):
    """What the tools may reach; every method raises `ToolError` (or `PermissionError`) for expected failures."""

    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]:
        """`(contents path, notebook as nbformat v4 JSON)`; `path` is relative to the server's root_dir."""
        ...

    async def list_variables(self, kernel_id: str) -> dict[str, Any]:
        """`{variables: [{name, type, preview, len?, shape?, dtype?}] sorted by name, more: <count not listed>}`."""
        ...

    async def inspect_variable(self, kernel_id: str, name: str) -> dict[str, Any]:
        """One variable in more detail (type, preview, size, columns, signature, doc …)."""
        ...

    async def ready_to_run(self, kernel_id: str) -> None:
        """Raise `ToolError` when the kernel could not start code now (asked before the approval)."""
        ...

    async def run_code(self, kernel_id: str, code: str, timeout_s: float, *, store_history: bool = False) -> CodeRun:
        """Execute `code` in the kernel now or never (nothing is left queued). Callers must have the approval.
        `store_history`: as a person's run of a cell (run_cell), counted in the kernel's history."""
        ...


class NotebookTools(Configurable):
    """The tools factory: `NotebookTools(access=…, broker=…)(request, sink)` → this turn's registry."""

    approval_timeout = Float(
        300.0, config=True, help="Seconds a run_code approval waits for an answer before it counts as a deny (default 300).",
    )
    run_timeout = Float(
        120.0, config=True,
        help="Seconds approved code may run in the kernel before it is interrupted (default 120).",
    )
    max_code_chars = Int(20_000, config=True, help="Longest code run_code accepts, in characters (default 20000).")
    max_result_chars = Int(
        12_000, config=True, help="Characters of a tool result sent to the model; the rest is cut (default 12000).",
    )
    max_output_chars = Int(
        2_000, config=True, help="Characters of one cell output or source kept in a result (default 2000).",
    )

    def __init__(
        self, *, access: NotebookAccess, broker: ApprovalBroker, redactor: Redactor | None = None,
        editor: CellEditor | None = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.access = access
        self.broker = broker
        self.redactor = redactor if redactor is not None else Redactor.from_environ()
        #: The one writer of notebook cells (server/notebook_editor.py); None: the cell tools refuse.
        self.editor = editor

    #: The server's cap (`c.HermesJupyter.max_autonomy`, set by the server): a session above it gets the cap.
    max_autonomy: str = "agent_auto"

    def __call__(self, request: TurnRequest, sink: EventSink) -> NotebookToolRegistry:
        return NotebookToolRegistry(self, request, sink)


class NotebookToolRegistry:
    """The tools of one turn (a `ToolRegistry`): kernel tools only when a kernel is bound, cell tools by autonomy."""

    takes_call_ids = True

    def __init__(self, tools: NotebookTools, request: TurnRequest, sink: EventSink) -> None:
        self._tools = tools
        if is_autonomy(tools.max_autonomy) and not within(request.autonomy, tools.max_autonomy):
            request = replace(request, autonomy=capped(request.autonomy, tools.max_autonomy))
        self._request = request
        self._sink = sink
        #: The run's redactor when the sink has one (what a result teaches it masks the model's echo too).
        run_redactor = getattr(sink, "redactor", None)
        self._redactor = run_redactor if isinstance(run_redactor, RunRedactor) else RunRedactor(tools.redactor)
        binding = request.notebook
        self.notebook_path = binding.notebook_path if binding else None
        self.cell_id = binding.cell_id if binding else None
        self.kernel_id = binding.kernel_id if binding else None
        self.autonomy = request.autonomy
        self._gate = RunGate(tools.broker, request, sink, tools.approval_timeout)
        self._cell_names = offered(self.autonomy, bool(self.notebook_path), bool(self.kernel_id))
        self._cells = CellTools(
            editor=tools.editor, runner=tools.access, gate=self._gate, request=request, sink=sink,
            redactor=self._redactor, offered=self._cell_names,
            limits=CellLimits(run_timeout_s=tools.run_timeout, max_output_chars=tools.max_output_chars),
        )
        #: Images the last results showed (plots), for a backend whose model reads images (tool_images.py).
        self.images = ImageParts()

    def schemas(self) -> list[dict[str, Any]]:
        bound = (f" Only the notebook this conversation belongs to ({self.notebook_path}) can be read."
                 if self.notebook_path else "")
        schemas = [_schema(
            READ_NOTEBOOK,
            "Read a notebook's cells (source) and their outputs. Paths are relative to the "
            "Jupyter server's root directory." + bound,
            {"path": {"type": "string", "description": "Notebook path, e.g. analysis/report.ipynb."},
             "start": {"type": "integer", "description": "Index of the first cell to show (default 0)."}},
            [] if self.notebook_path else ["path"],
        )]
        if self.kernel_id:
            schemas += [
                _schema(LIST_VARIABLES, "List the variables defined in the notebook's running kernel, "
                        "with their types and short previews.", {}, []),
                _schema(INSPECT_VARIABLE, "Show one variable of the notebook's kernel in more detail "
                        "(type, size, shape, columns, a longer preview).",
                        {"name": {"type": "string", "description": "Variable name, optionally dotted (df.columns)."}},
                        ["name"]),
            ]
        if self.kernel_id and self.autonomy != "ask":
            asks = ("It runs without asking" if self.autonomy == "agent_auto" else
                    "The user sees the code and must approve it first; if they deny it, nothing runs")
            schemas.append(_schema(
                RUN_CODE, f"Run Python code in the notebook's kernel, for scratch work: it leaves nothing in the "
                f"notebook. {asks}. Variables it defines stay in the kernel.",
                {"code": {"type": "string", "description": "The Python code to run."}}, ["code"]))
        if self.notebook_path and self.autonomy != "ask":
            schemas.append(propose_schema(self.notebook_path))
            schemas += cell_schemas(self._cell_names, self.notebook_path, self.autonomy)
        return schemas

    async def call(self, name: str, args: dict[str, Any], tool_call_id: str | None = None) -> tuple[str, bool]:
        """The tool's result as the model sees it, secrets redacted: `(text, is_error)`.

        A value the result assigns to a secret name (`aws_secret_access_key = …`) is learned first,
        so it is masked wherever it appears: later in this result, and for the rest of the run.
        `tool_call_id` (the backend's id of the call) goes into the provenance of a changed cell."""
        self.images.clear()
        text, is_error = await self._call(name, args, tool_call_id)
        self._redactor.learn_from(text)
        return self._redactor.text(text), is_error

    async def _call(self, name: str, args: dict[str, Any], tool_call_id: str | None) -> tuple[str, bool]:
        redactor = self._redactor
        try:
            if name == READ_NOTEBOOK:
                return await self._read_notebook(args), False
            if name in CELL_TOOLS:
                return await self._cell_call(name, args, tool_call_id)
            if name in (RUN_CODE, PROPOSE_CELL) and self.autonomy == "ask":
                raise ToolError(f"In Ask mode the agent only reads; {name} is not offered and nothing was run "
                                "or proposed. The user can switch this conversation to Propose or Agent.")
            if name == PROPOSE_CELL:
                return await propose_cell(self._sink, args, notebook_path=self.notebook_path, reader=self._tools.access)
            if name in (LIST_VARIABLES, INSPECT_VARIABLE, RUN_CODE) and not self.kernel_id:
                raise ToolError(f"{name} needs a notebook kernel, and this conversation is not bound to one.")
            if name == LIST_VARIABLES:
                listing = await self._tools.access.list_variables(self._kernel())
                return self._cut(_format_variables(listing, redactor)), False
            if name == INSPECT_VARIABLE:
                target = _string_arg(args, "name")
                info = await self._tools.access.inspect_variable(self._kernel(), target)
                return self._cut(_format_json(_redact_variable(info, redactor))), False
            if name == RUN_CODE:
                return await self._run_code(args)
        except (ToolError, PermissionError) as exc:
            return str(exc), True
        return f"Unknown tool {name!r}.", True

    async def _cell_call(self, name: str, args: dict[str, Any], tool_call_id: str | None) -> tuple[str, bool]:
        """A cell tool; the kernel's refusals (busy, gone) say `applied: false` like the tool's own."""
        try:
            result = await self._cells.call(name, args, tool_call_id)
        except (ToolError, PermissionError) as exc:
            return f"applied: false\n{exc}", True
        self.images.take(self._cells.last_outputs)
        return result

    def _kernel(self) -> str:
        assert self.kernel_id is not None
        return self.kernel_id

    async def _read_notebook(self, args: dict[str, Any]) -> str:
        path = args.get("path") or self.notebook_path
        if not isinstance(path, str) or not path:
            raise ToolError("read_notebook needs a notebook path.")
        path = self._readable(path)
        start = args.get("start", 0)
        if not isinstance(start, int) or start < 0:
            raise ToolError("start must be a cell index (an integer ≥ 0).")
        api_path, notebook = await self._tools.access.read_notebook(path)
        cells = (notebook.get("cells") or [])[start:]
        self.images.take(output for cell in cells for output in cell.get("outputs") or [])
        return format_notebook(
            api_path, notebook, start=start, bound_cell=self.cell_id if path == self.notebook_path else None,
            max_chars=self._tools.max_result_chars, max_piece_chars=self._tools.max_output_chars,
        )

    def _readable(self, path: str) -> str:
        """A conversation bound to a notebook or kernel reads only its own notebook (docs/agent-reach.md);
        an unbound one (started from the sidebar, by a person) may read any notebook under root_dir."""
        if self.notebook_path is None and self.kernel_id is None:
            return path
        if self.notebook_path is not None and _same_path(path, self.notebook_path):
            return self.notebook_path
        mine = f"only this conversation's notebook ({self.notebook_path})" if self.notebook_path else "no notebook"
        raise ToolError(f"Refused: this conversation may read {mine}, not {path}.")

    async def _run_code(self, args: dict[str, Any]) -> tuple[str, bool]:
        code = _string_arg(args, "code")
        if not code.strip():
            raise ToolError("run_code needs some code.")
        if len(code) > self._tools.max_code_chars:
            raise ToolError(f"The code is {len(code)} characters long; run_code accepts at most {self._tools.max_code_chars}.")
        if asks_hermes(code):
            raise ToolError("That code runs the %hermes magic, which would ask the agent again; run_code does not "
                            "run it. Nothing was run.")
        await self._tools.access.ready_to_run(self._kernel())  # refuse before asking, not after
        where = f" of {self.notebook_path}" if self.notebook_path else ""
        if await self._gate.allow(code, f"Run this code in the kernel{where}") is None:
            return DENIED, True
        run = await self._tools.access.run_code(self._kernel(), code, self._tools.run_timeout)
        text = format_code_run(run, self._tools.run_timeout, self._tools.max_output_chars)
        return self._cut(text), run.status != "ok"

    def _cut(self, text: str) -> str:
        return truncate(text, self._tools.max_result_chars)


# ---- formatting (pure) ---------------------------------------------------------------------


def format_code_run(run: CodeRun, timeout_s: float, limit: int = 2_000) -> str:
    heads = {
        "ok": "The code ran.",
        "error": "The code raised an error.",
        "interrupted": f"The code was still running after {timeout_s:g} s and was interrupted.",
        "not_started": "The code was not run: the kernel did not start it in time (busy with other work), "
                       "and it was withdrawn, so it will not run later.",
        "not_stopped": f"The code was still running after {timeout_s:g} s and did not stop when interrupted; "
                       "it may still be running in the kernel.",
    }
    lines = [heads.get(run.status, f"The run ended with status {run.status}.")]
    lines += [format_output(o, limit) for o in run.outputs]
    if run.status == "ok" and not run.outputs:
        lines.append("(no output)")
    return "\n".join(lines)


def _redact_variable(info: dict[str, Any], redactor: Redactor | RunRedactor) -> dict[str, Any]:
    """A variable's description with its preview masked when its name says it is a secret (`api_token`)."""
    name = str(info.get("name", "")).rsplit(".", 1)[-1]
    shown: dict[str, Any] = redactor.value(info)
    if "preview" in shown:
        shown["preview"] = redactor.named(name, info["preview"])
    return shown


def _format_variables(listing: dict[str, Any], redactor: Redactor | RunRedactor) -> str:
    variables = listing.get("variables") or []
    if not variables:
        return "No user variables are defined in the kernel."
    rows = []
    for var in (_redact_variable(v, redactor) for v in variables):
        size = " shape=" + "x".join(map(str, var["shape"])) if var.get("shape") is not None else (
            f" len={var['len']}" if var.get("len") is not None else "")
        rows.append(f"{var['name']}: {var.get('type', '?')}{size} = {var.get('preview', '')}")
    if listing.get("more"):
        rows.append(f"… {listing['more']} more variables not listed.")
    return "\n".join(rows)


def _format_json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


def _same_path(a: str, b: str) -> bool:
    return posixpath.normpath(a.strip("/") or ".") == posixpath.normpath(b.strip("/") or ".")


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _string_arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolError(f"The argument {key!r} must be a string.")
    return value
