"""Notebook cells and their outputs as the text a model reads (read_notebook, run_cell, run_code results).

Pure and bounded: every piece is cut at a limit and says how much was left out; error tracebacks lose
their colour codes; an image is described in one line (tool_images.py sends it to models that read them).
"""

from __future__ import annotations

import re
from typing import Any

from .tool_images import describe_image


def format_notebook(
    path: str, notebook: dict[str, Any], *, start: int = 0, bound_cell: str | None = None,
    max_chars: int = 12_000, max_piece_chars: int = 2_000,
) -> str:
    """A notebook as text for the model: one block per cell (source, then outputs), bounded."""
    cells = notebook.get("cells") or []
    kernel = ((notebook.get("metadata") or {}).get("kernelspec") or {}).get("name", "unknown")
    head = f"Notebook {path}: {len(cells)} cells, kernel {kernel}."
    blocks = [head if start == 0 else f"{head} Showing from cell {start}."]
    used = len(blocks[0])
    for index in range(start, len(cells)):
        block = _format_cell(index, cells[index], bound_cell, max_piece_chars)
        if used + len(block) > max_chars and index > start:
            blocks.append(f"… {len(cells) - index} more cells not shown; call read_notebook with start={index}.")
            break
        blocks.append(truncate(block, max_chars))
        used += len(block)
    return "\n\n".join(blocks)


def _format_cell(index: int, cell: dict[str, Any], bound_cell: str | None, limit: int) -> str:
    kind = cell.get("cell_type", "code")
    label = f"--- cell {index} [{kind}]"
    if cell.get("id"):
        label += f" id={cell['id']}"
    if kind == "code" and cell.get("execution_count") is not None:
        label += f" In[{cell['execution_count']}]"
    if bound_cell and cell.get("id") == bound_cell:
        label += " (the cell this conversation was started from)"
    lines = [label, truncate(as_text(cell.get("source")), limit)]
    for output in cell.get("outputs") or []:
        lines.append(format_output(output, limit))
    return "\n".join(lines)


def format_output(output: dict[str, Any], limit: int = 2_000) -> str:
    """One nbformat output as `[kind] text`; rich data other than text is named, not included."""
    kind = output.get("output_type")
    if kind == "stream":
        text = as_text(output.get("text"))
        return f"[{output.get('name', 'stdout')}] " + truncate(text.removesuffix("\n"), limit)
    if kind == "error":
        trace = strip_ansi("\n".join(output.get("traceback") or []))
        summary = f"[error] {output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return summary + ("\n" + truncate(trace, limit) if trace else "")
    data = output.get("data") or {}
    text = as_text(data.get("text/plain") or data.get("text/markdown") or "")
    images = [describe_image(k, data[k]) for k in sorted(data) if k.startswith("image/")]
    others = sorted(k for k in data if k not in ("text/plain", "text/markdown") and not k.startswith("image/"))
    shown = truncate(text, limit)
    if images:
        shown += (" " if shown else "") + f"(an image: {', '.join(images)})"
    if others:
        shown += (" " if shown else "") + f"({', '.join(others)} not shown)"
    return f"[{kind}] {shown}"


def as_text(value: Any) -> str:
    """nbformat multiline strings may be lists of lines."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ("" if value is None else str(value))


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text)
