"""The tools that change a notebook's cells: insert_cell, edit_cell, delete_cell, run_cell (docs/autonomy.md).

They are part of the one registry (`NotebookToolRegistry` in tools.py delegates here), so the
`openai`, `hermes` and demo backends get the same tools, gating, approvals and journal. What a
call may do follows the turn's autonomy: `ask` offers none of them; `propose` journals a
`proposal` for each change and runs nothing; `agent` applies changes and asks before each run
(`allow_turn` answers for the rest of the turn); `agent_auto` applies and runs without asking.

Every change goes through the server's `CellEditor` (server/notebook_editor.py), which reads the
cell back and answers a `CellChange`; that is journaled as one `cell_change` event before the
model reads a result saying `applied: true` or exactly why not (docs/notebook-edits.md).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Final, Protocol

import msgspec

from ..events import CELL_CHANGE, PROPOSAL
from ..notebook.cell_edits import CellChange, Provenance, source_text
from ..redact_run import RunRedactor
from .approvals import ALLOWING, APPROVAL_OPTIONS, TURN_OPTIONS, ApprovalBroker, ApprovalRequest
from .base import EventSink, TurnRequest
from .output_text import format_output
from .propose import ProposalError, proposal_payload

INSERT_CELL: Final = "insert_cell"
EDIT_CELL: Final = "edit_cell"
DELETE_CELL: Final = "delete_cell"
RUN_CELL: Final = "run_cell"
CELL_TOOLS: Final = frozenset({INSERT_CELL, EDIT_CELL, DELETE_CELL, RUN_CELL})
#: Most characters of one cell source the tools accept.
MAX_SOURCE_CHARS: Final = 20_000


class CellEditor(Protocol):
    """The one place that changes a notebook (server/notebook_editor.NotebookEditor); each answers the read-back."""

    async def insert(self, path: str, source: str, cell_type: str, after_cell_id: str | None,
                     prov: Provenance) -> CellChange: ...

    async def edit(self, path: str, cell_id: str, source: str, prov: Provenance) -> CellChange: ...

    async def delete(self, path: str, cell_id: str, prov: Provenance) -> CellChange: ...

    async def set_outputs(self, path: str, cell_id: str, outputs: list[dict[str, Any]], execution_count: int | None,
                          prov: Provenance) -> CellChange: ...

    async def read_cell(self, path: str, cell_id: str) -> dict[str, Any] | None: ...


class CellRunner(Protocol):
    """What run_cell needs of the kernel side (`NotebookAccess` in tools.py)."""

    async def ready_to_run(self, kernel_id: str) -> None: ...

    async def run_code(self, kernel_id: str, code: str, timeout_s: float, *, store_history: bool = False) -> Any: ...


class Refused(Exception):
    """A call the turn's autonomy or binding does not allow; its text is the model's result."""


def offered(autonomy: str, has_notebook: bool, has_kernel: bool) -> frozenset[str]:
    """The cell tools offered to a turn: none in `ask` or unbound; run_cell only with a kernel."""
    if autonomy == "ask" or not has_notebook:
        return frozenset()
    tools = {INSERT_CELL, EDIT_CELL, DELETE_CELL}
    if has_kernel and autonomy != "propose":
        tools.add(RUN_CELL)
    return frozenset(tools)


def cell_schemas(names: frozenset[str], notebook_path: str, autonomy: str) -> list[dict[str, Any]]:
    """The OpenAI `tools` entries of the offered cell tools."""
    proposes = autonomy == "propose"
    effect = ("Each change is shown to the user as a proposal to accept or reject; nothing changes until they do."
              if proposes else "The change is applied to the notebook at once; the user can undo it.")
    cell_id = {"type": "string", "description": "The cell's id (read_notebook shows each cell's id)."}
    source = {"type": "string", "description": "The cell's full source."}
    specs = {
        INSERT_CELL: (f"Insert a new cell into {notebook_path}. {effect} The result names the new cell's id.",
                      {"source": source,
                       "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "Default code."},
                       "after_cell_id": {"type": "string", "description": "Insert below this cell; omit for the end."}},
                      ["source"]),
        EDIT_CELL: (f"Replace the source of one cell of {notebook_path}. {effect}",
                    {"cell_id": cell_id, "source": source}, ["cell_id", "source"]),
        DELETE_CELL: (f"Delete one cell of {notebook_path}. {effect}", {"cell_id": cell_id}, ["cell_id"]),
        RUN_CELL: (f"Run one code cell of {notebook_path} in the notebook's kernel, as if the user ran it: its "
                   "outputs land in that cell and the result shows them (text, errors, images).",
                   {"cell_id": cell_id}, ["cell_id"]),
    }
    schemas = []
    for name in (INSERT_CELL, EDIT_CELL, DELETE_CELL, RUN_CELL):
        if name in names:
            description, properties, required = specs[name]
            parameters = {"type": "object", "properties": properties, "required": required}
            schemas.append({"type": "function",
                            "function": {"name": name, "description": description, "parameters": parameters}})
    return schemas


class RunGate:
    """Who lets code run in this turn: the autonomy (`agent_auto`), the person's `allow_turn`, or the person now.

    Shared by run_cell and run_code, so one `allow_turn` covers both for the rest of the turn.
    """

    def __init__(self, broker: ApprovalBroker, request: TurnRequest, sink: EventSink, timeout_s: float) -> None:
        self._broker, self._request, self._sink, self._timeout_s = broker, request, sink, timeout_s
        self._turn: dict[str, Any] | None = None
        self._asked = 0

    async def allow(self, code: str, description: str) -> dict[str, Any] | None:
        """Who approved (`approved_by`), or None when the answer was no (or no answer came in time)."""
        autonomy = self._request.autonomy
        if autonomy == "agent_auto":
            return {"kind": "policy", "autonomy": "agent_auto"}
        if autonomy == "agent" and self._turn is not None:
            return self._turn
        self._asked += 1
        approval = ApprovalRequest(
            run_id=self._request.run_id, session_id=self._request.session_id,
            approval_id=f"code-{self._asked}-{secrets.token_hex(4)}", command=code, description=description,
            options=TURN_OPTIONS if autonomy == "agent" else APPROVAL_OPTIONS, timeout_s=self._timeout_s, kind="code",
        )
        resolved = await self._broker.resolve(self._sink, approval)
        choice = str(resolved.get("choice"))
        if choice not in ALLOWING:
            return None
        by = {**(resolved.get("answered_by") or {}), "choice": choice}
        if choice == "allow_turn":
            self._turn = by
        return by


@dataclass(frozen=True, slots=True)
class CellLimits:
    run_timeout_s: float = 120.0
    max_output_chars: int = 2_000


class CellTools:
    """The cell tools of one turn (built by `NotebookToolRegistry`)."""

    def __init__(
        self, *, editor: CellEditor | None, runner: CellRunner, gate: RunGate, request: TurnRequest,
        sink: EventSink, redactor: RunRedactor, limits: CellLimits, offered: frozenset[str],
    ) -> None:
        self._editor, self._runner, self._gate = editor, runner, gate
        self._request, self._sink, self._redactor, self._limits = request, sink, redactor, limits
        self._offered = offered
        binding = request.notebook
        self.path = binding.notebook_path if binding else None
        self.kernel_id = binding.kernel_id if binding else None
        self._calls = 0
        #: The outputs of the last run_cell, for the images a backend may show the model (tool_images.py).
        self.last_outputs: list[dict[str, Any]] = []

    async def call(self, name: str, args: dict[str, Any], tool_call_id: str | None = None) -> tuple[str, bool]:
        self._calls += 1
        tool_call_id = tool_call_id or f"{self._request.run_id}-cell-{self._calls}"
        try:
            self._check(name)
            if self._request.autonomy == "propose":
                return await self._propose(name, args)
            if name == RUN_CELL:
                return await self._run_cell(args, tool_call_id)
            return await self._change(name, args, tool_call_id)
        except (Refused, ProposalError) as exc:
            return f"applied: false\n{exc}", True

    def _check(self, name: str) -> None:
        if not self.path:
            raise Refused(f"{name} needs a notebook: this conversation is not bound to one.")
        autonomy = self._request.autonomy
        if autonomy == "ask":
            raise Refused("In Ask mode the agent only reads the notebook; nothing was changed. The user can "
                          "switch this conversation to Propose or Agent to let you change cells.")
        if name == RUN_CELL and autonomy == "propose":
            raise Refused("In Propose mode nothing runs; the cell was not run. Propose the change with "
                          "insert_cell or edit_cell; the user can switch to Agent to let you run cells.")
        if name == RUN_CELL and not self.kernel_id:
            raise Refused("run_cell needs the notebook's kernel, and this conversation is not bound to one.")
        if name not in self._offered:
            raise Refused(f"{name} is not offered in this conversation.")
        if self._editor is None:
            raise Refused("This server cannot change notebooks (no notebook editor is set up); nothing was changed.")

    # ---- propose -------------------------------------------------------------------------

    async def _propose(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """In Propose mode a change is a `proposal` (docs/proposals.md); nothing in the notebook changes."""
        assert self._editor is not None and self.path is not None
        after = args.get("after_cell_id") or None
        target_id = after if name == INSERT_CELL else _cell_id(args)
        target = None
        if isinstance(target_id, str):
            target = await self._editor.read_cell(self.path, target_id)
            if target is None:
                raise Refused(f"The notebook has no cell with cell_id={target_id}; call read_notebook to see the ids.")
        if name == DELETE_CELL:
            assert target is not None
            payload = {"proposal_id": f"p-{secrets.token_hex(6)}", "action": "delete", "cell_id": target_id,
                       "cell_type": target.get("cell_type", "code"), "source": "",
                       "old_source": source_text(target.get("source"))}
        else:
            action = "replace" if name == EDIT_CELL else "insert_below" if target_id else "insert_end"
            payload = proposal_payload({"action": action, "cell_id": target_id, "source": args.get("source"),
                                        "cell_type": args.get("cell_type")}, [target] if target else None)
        self._sink.emit(PROPOSAL, payload)
        return ("applied: false\nProposed, not applied (Propose mode): the user sees the proposal "
                f"{payload['proposal_id']} beside the notebook and accepts or rejects it. Do not assume it was "
                "applied, and nothing was run."), False

    # ---- apply ---------------------------------------------------------------------------

    async def _change(self, name: str, args: dict[str, Any], tool_call_id: str) -> tuple[str, bool]:
        assert self._editor is not None and self.path is not None
        prov = self._provenance(tool_call_id, None)
        if name == INSERT_CELL:
            cell_type = args.get("cell_type") or "code"
            if cell_type not in ("code", "markdown"):
                raise Refused("cell_type must be code or markdown.")
            after = args.get("after_cell_id") or None
            if after is not None and not isinstance(after, str):
                raise Refused("after_cell_id must be a cell id (a string).")
            change = await self._editor.insert(self.path, _source(args), cell_type, after, prov)
        elif name == EDIT_CELL:
            change = await self._editor.edit(self.path, _cell_id(args), _source(args), prov)
        else:
            change = await self._editor.delete(self.path, _cell_id(args), prov)
        self._journal(change)
        return describe_change(change), not change.applied

    async def _run_cell(self, args: dict[str, Any], tool_call_id: str) -> tuple[str, bool]:
        """Run the cell's current source in the kernel (a subshell beside a busy %%hermes cell), then its outputs
        land in the cell. Refused before anyone is asked where it cannot run now; never queued to run later."""
        assert self._editor is not None and self.path is not None and self.kernel_id is not None
        cell_id = _cell_id(args)
        cell = await self._editor.read_cell(self.path, cell_id)
        if cell is None:
            raise Refused(f"The notebook has no cell with cell_id={cell_id}; call read_notebook to see the ids.")
        if cell.get("cell_type", "code") != "code":
            raise Refused(f"Cell {cell_id} is a {cell.get('cell_type')} cell; only code cells run.")
        source = source_text(cell.get("source"))
        if asks_hermes(source):
            raise Refused(f"Cell {cell_id} is a %hermes cell: running it would ask the agent again, so run_cell "
                          "does not run it. Nothing was run.")
        await self._runner.ready_to_run(self.kernel_id)
        approved_by = await self._gate.allow(source, f"Run cell {cell_id} of {self.path} in its kernel")
        if approved_by is None:
            return f"applied: false\nDenied by the user: cell_id={cell_id} was not run.", True
        run = await self._runner.run_code(self.kernel_id, source, self._limits.run_timeout_s, store_history=True)
        if run.status == "not_started":
            return (f"applied: false\nNot run: the kernel did not start cell_id={cell_id} in time (busy with other "
                    "work); it was withdrawn and will not run later. Its outputs are unchanged."), True
        outputs = [_redact_output(o, self._redactor) for o in notebook_outputs(run.outputs, run.execution_count)]
        change = await self._editor.set_outputs(self.path, cell_id, outputs, run.execution_count,
                                                self._provenance(tool_call_id, approved_by))
        self._journal(change)
        self.last_outputs = outputs if change.applied else []
        return describe_run(change, run.status, outputs, self._limits), not change.applied or run.status not in (
            "ok", "error")

    def _provenance(self, tool_call_id: str, approved_by: dict[str, Any] | None) -> Provenance:
        return Provenance(session_id=self._request.session_id, run_id=self._request.run_id,
                          tool_call_id=tool_call_id, model=self._request.model, approved_by=approved_by)

    def _journal(self, change: CellChange) -> None:
        """One `cell_change` row per change, before the model reads the result."""
        self._sink.emit(CELL_CHANGE, msgspec.to_builtins(change))


# ---- results (pure) ------------------------------------------------------------------------

_DONE: Final = {"insert": "Inserted", "edit": "Replaced the source of", "delete": "Deleted", "run": "Ran"}


def describe_change(change: CellChange) -> str:
    """What the notebook holds after an insert/edit/delete, as read back: `applied: true|false` first."""
    where = f" at index {change.index}" if change.index is not None else ""
    if not change.applied:
        return f"applied: false\nNot changed (cell_id={change.cell_id}): {change.why or 'the change did not land.'}"
    kind = f"{change.cell_type} " if change.cell_type and change.action == "insert" else ""
    what = f"{_DONE[change.action]} {kind}cell cell_id={change.cell_id}{where}"
    tail = " It has not run." if change.action in ("insert", "edit") and change.cell_type == "code" else ""
    return f"applied: true\n{what}.{tail}"


def describe_run(change: CellChange, status: str, outputs: list[dict[str, Any]], limits: CellLimits) -> str:
    """A run_cell result: whether its outputs are in the cell, the execution count, then the outputs as text."""
    if not change.applied:
        return (f"applied: false\nThe cell ran, but its outputs could not be written to cell_id={change.cell_id}: "
                f"{change.why or 'unknown reason'}")
    heads = {"ok": "It ran.", "error": "It raised an error.",
             "interrupted": f"It was still running after {limits.run_timeout_s:g} s and was interrupted.",
             "not_stopped": f"It was still running after {limits.run_timeout_s:g} s and did not stop when "
                            "interrupted; it may still be running in the kernel."}
    count = f" In[{change.execution_count}]" if change.execution_count is not None else ""
    lines = [f"applied: true\nRan cell cell_id={change.cell_id}{count}. {heads.get(status, status)} "
             "Its outputs are in the cell:"]
    lines += [format_output(o, limits.max_output_chars) for o in outputs] or ["(no output)"]
    return "\n".join(lines)


def notebook_outputs(outputs: list[dict[str, Any]], execution_count: int | None) -> list[dict[str, Any]]:
    """A run's collected outputs as valid nbformat outputs (metadata, execution_count, stream names)."""
    shaped = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stderr"
            shaped.append({"output_type": "stream", "name": name, "text": source_text(output.get("text"))})
        elif kind == "execute_result":
            shaped.append({"output_type": kind, "data": output.get("data") or {},
                           "metadata": output.get("metadata") or {}, "execution_count": execution_count})
        elif kind == "display_data":
            shaped.append({"output_type": kind, "data": output.get("data") or {},
                           "metadata": output.get("metadata") or {}})
        elif kind == "error":
            shaped.append({"output_type": "error", "ename": str(output.get("ename") or "Error"),
                           "evalue": str(output.get("evalue") or ""),
                           "traceback": [str(t) for t in output.get("traceback") or []]})
    return shaped


def _redact_output(output: dict[str, Any], redactor: RunRedactor) -> dict[str, Any]:
    """An output with its text masked; images (base64) are left whole, a mask would break them."""
    if "data" not in output:
        return redactor.value(output)  # type: ignore[no-any-return]
    data = {k: (v if k.startswith("image/") else redactor.value(v)) for k, v in output["data"].items()}
    return {**output, "data": data}


def asks_hermes(source: str) -> bool:
    """Whether the cell runs the %hermes / %%hermes magic (a turn of the agent), on any line."""
    return any(line.lstrip().startswith(("%%hermes", "%hermes")) for line in source.splitlines())


def _cell_id(args: dict[str, Any]) -> str:
    value = args.get("cell_id")
    if not isinstance(value, str) or not value:
        raise Refused("Give the cell's id as cell_id (read_notebook shows each cell's id).")
    return value


def _source(args: dict[str, Any]) -> str:
    value = args.get("source")
    if not isinstance(value, str):
        raise Refused("Give the cell's full source as source (a string).")
    if len(value) > MAX_SOURCE_CHARS:
        raise Refused(f"The source is {len(value)} characters long; at most {MAX_SOURCE_CHARS} are accepted.")
    return value
