"""The demo agent's `use the notebook` (docs/demo-agent.md): the notebook tools, called as a model calls them.

The demo reads exactly what a model reads: it calls `list_variables`, then `inspect_variable`,
through the turn's `ToolRegistry` (the one implementation the `openai` and `hermes` backends
use too: journaled as tool cards, redacted), and describes the first DataFrame it finds, else
the first variable, in one sentence. So the offline Binder demo shows an agent that sees the
user's data, with no model behind it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from ..events import TOOL, TOOL_COMPLETE
from .base import TurnRequest
from .tools import INSPECT_VARIABLE, LIST_VARIABLES
from .tools_registry import ToolRegistry

Step = tuple[str, dict[str, Any]]
Say = Callable[[str], Iterator[Step]]

PROMPT = "use the notebook"
UNBOUND_REPLY = (
    "This conversation is not bound to a notebook, so I cannot see any variables. Ask from a notebook "
    "cell with `%%hermes use the notebook`, or select this conversation in the Hermes sidebar and choose "
    "**Bind to** the open notebook, then ask again."
)
EMPTY_REPLY = "The notebook's kernel has no variables yet. Define one (a DataFrame, say) and ask again."
#: One row of `list_variables`' text: `name: type[ shape=AxB| len=N] = preview`.
_ROW = re.compile(r"^([A-Za-z_]\w*): ([A-Za-z_][\w.]*)(?: shape=\S+| len=\d+)? = ", re.MULTILINE)


def asks_for_the_notebook(message: str) -> bool:
    return PROMPT in message.lower()


async def notebook_steps(request: TurnRequest, registry: ToolRegistry | None, say: Say) -> AsyncIterator[Step]:
    """The turn's events: two tool calls and a sentence, or one sentence saying how to bind."""
    if registry is None or request.notebook is None or not request.notebook.kernel_id:
        for step in say(UNBOUND_REPLY):
            yield step
        return
    for step in say("Let me look at the notebook's variables."):
        yield step
    listing: list[str] = []
    async for step in tool_steps(registry, "demo-notebook-1", LIST_VARIABLES, {}, listing):
        yield step
    rows = _ROW.findall(listing[0]) if not listing[1:] else []
    if not rows:
        for step in say(f" {EMPTY_REPLY}" if not listing[1:] else f" I could not read them: {listing[0]}"):
            yield step
        return
    name = next((n for n, kind in rows if _is_dataframe(kind)), rows[0][0])
    details: list[str] = []
    async for step in tool_steps(registry, "demo-notebook-2", INSPECT_VARIABLE, {"name": name}, details):
        yield step
    sentence = describe(name, details[0]) if not details[1:] else f"I could not inspect `{name}`: {details[0]}"
    for step in say(" " + sentence):
        yield step


async def tool_steps(
    registry: ToolRegistry, tid: str, name: str, args: dict[str, Any], out: list[str]
) -> AsyncIterator[Step]:
    """One tool card: announce, call, complete. `out` gets the result, then "error" if it failed."""
    yield TOOL, {"tid": tid, "name": name, "args": args, "preview": f"{name} {json.dumps(args)}" if args else name}
    started = time.monotonic()
    text, is_error = await registry.call(name, args)
    out[:] = [text, "error"] if is_error else [text]
    yield TOOL_COMPLETE, {"tid": tid, "name": name, "preview": text, "duration": round(time.monotonic() - started, 6),
                          "is_error": is_error}


def describe(name: str, inspected: str) -> str:
    """One sentence about a variable from `inspect_variable`'s JSON: a DataFrame's shape and columns."""
    try:
        info = json.loads(inspected)
    except ValueError:
        info = {}
    kind = str(info.get("type") or "value")
    shape = info.get("shape")
    if _is_dataframe(kind) and isinstance(shape, list) and len(shape) == 2:
        columns = [str(c) for c in info.get("columns") or []]
        shown = ", ".join(f"`{c}`" for c in columns[:6]) + (", …" if len(columns) > 6 else "")
        return f"`{name}` is a DataFrame of {shape[0]} rows × {shape[1]} columns" + (f": {shown}." if shown else ".")
    if isinstance(shape, list):
        size = f" of shape {tuple(shape)}"
    else:
        size = f" of length {info['len']}" if "len" in info else ""
    short = kind.rsplit(".", 1)[-1]
    return f"`{name}` is {'an' if short[:1].lower() in 'aeiou' else 'a'} {short}{size}."


def _is_dataframe(kind: str) -> bool:
    return kind == "DataFrame" or kind.endswith(".DataFrame")
