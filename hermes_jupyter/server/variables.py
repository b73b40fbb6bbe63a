"""The sidebar's variable picker: a notebook kernel's variables, and one of them as data (docs/attachments.md).

`GET notebooks/variables?path=NB` lists name, type and size; `GET notebooks/variables/{name}?path=NB`
answers one variable's summary (kernel_summary.py, through the notebook tools' own probe) and the text
an attachment carries. Only a person, or the notebook's own kernel, may ask; the kernel is the one the
notebook's Jupyter session runs, never one the request names. Secrets are masked before anything is
answered, a variable whose name says it is a secret is described without its contents, and the text is
cut at the attachment cap.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..agents.tools import ToolError
from ..attachments import MAX_TEXT_CHARS
from ..redact import MASK, Redactor, is_secret_name
from .errors import user_error
from .handlers import HermesHandler, api_errors
from .notebook_access import KernelAccess
from .principals import principal_of
from .scope import check_notebook, notebook_kernel

NO_KERNEL = "This notebook has no running kernel. Start its kernel, run a cell, and open the list again."
SECRET = "not shown: its name says it holds a secret"


class VariablesHandler(HermesHandler):
    """`GET notebooks/variables?path=NB` and `GET notebooks/variables/{name}?path=NB`."""

    auth_resource = "hermes:notebooks"

    @web.authenticated
    @authorized
    @api_errors
    async def get(self, name: str | None = None) -> None:
        path = self.get_query_argument("path", "")
        if not path or len(path) > 4096:
            raise user_error(400, "Name the notebook whose variables to list.", "path is required")
        await self._may_read(path)
        kernel_id = await self._kernel_of(path)
        access = KernelAccess(self.kernel_manager.get_kernel)
        redactor: Redactor = self.hermes.manager.redactor
        try:
            if name is None:
                self.answer(listing(await access.list_variables(kernel_id)))
            else:
                self.answer(described(await access.inspect_variable(kernel_id, name), redactor))
        except ToolError as exc:
            status = 404 if "no variable named" in str(exc) else 409
            raise user_error(status, redactor.text(str(exc)), f"kernel {kernel_id}") from None

    async def _may_read(self, path: str) -> None:
        """A person, or the kernel of this very notebook (404 for another kernel); not a bare token."""
        principal = await principal_of(self)
        if principal.kind == "token":
            raise user_error(403, "Only a person can read a notebook's variables here: do it in JupyterLab.",
                             f"this request came with {principal.how}")
        await check_notebook(self, path)

    async def _kernel_of(self, path: str) -> str:
        kernel_id = await notebook_kernel(self, path)
        if kernel_id is not None:
            return kernel_id
        raise user_error(404, NO_KERNEL, f"no Jupyter session for {path}")


def listing(raw: dict[str, Any]) -> dict[str, Any]:
    """Name, type and size of each variable: no values (the picker shows what there is to attach)."""
    rows = []
    for var in raw.get("variables") or []:
        row = {"name": str(var.get("name", "")), "type": str(var.get("type", "?"))}
        size = _size(var)
        if size:
            row["size"] = size
        rows.append(row)
    return {"variables": rows, "more": int(raw.get("more") or 0)}


def described(info: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """`{name, type, size, summary, text}` with secrets masked; `text` is what the attachment carries."""
    name = str(info.get("name", ""))
    summary = dict(info.get("summary") or {})
    if is_secret_name(name.rsplit(".", 1)[-1]):
        summary = {k: v for k, v in summary.items() if k in ("kind", "shape", "length", "dtype")}
        summary["value"] = SECRET
    else:
        summary = _masked(summary, redactor)
    shown = {"name": name, "type": str(info.get("type", "?")), "size": _size(info), "summary": summary}
    text = redactor.text(summary_text(shown))
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + f"\n… [{len(text) - MAX_TEXT_CHARS} more characters not sent]"
    return {**shown, "text": text}


def _masked(summary: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """Redacted, and a mapping's items masked by their keys' names (`{'api_key': …}`)."""
    shown: dict[str, Any] = redactor.value(summary)
    if summary.get("kind") == "mapping":
        shown["items"] = [[k, MASK if is_secret_name(k.strip("'\"")) else v] for k, v in shown.get("items", [])]
    return shown


def _size(var: dict[str, Any]) -> str:
    shape = var.get("shape")
    if isinstance(shape, list) and shape:
        return " × ".join(str(n) for n in shape)
    length = var.get("len")
    unit = "characters" if var.get("type") == "str" else "bytes" if var.get("type") == "bytes" else "items"
    return f"{length} {unit}" if isinstance(length, int) and not isinstance(length, bool) else ""


def summary_text(shown: dict[str, Any]) -> str:
    """The summary as a model reads it: plain lines, the table as the kernel printed it."""
    summary = shown["summary"]
    kind = summary.get("kind")
    head = f"{shown['name']}: {shown['type']}"
    size = shown.get("size") or ""
    lines = [head + (f", shape {size}" if "×" in size or kind in ("ndarray", "series") else f", {size}" if size else "")]
    if "dtypes" in summary:
        lines.append("dtypes: " + ", ".join(f"{k} {v}" for k, v in summary["dtypes"].items()))
        if summary.get("columns_not_shown"):
            lines.append(f"({summary['columns_not_shown']} more columns not listed)")
    if "dtype" in summary:
        lines.append(f"dtype: {summary['dtype']}")
    if "nulls" in summary:
        nulls = summary["nulls"]
        lines.append("null counts: " + (", ".join(f"{k} {v}" for k, v in nulls.items())
                                        if isinstance(nulls, dict) else str(nulls)))
    if "memory_bytes" in summary:
        lines.append(f"memory: {summary['memory_bytes']:,} bytes")
    if "min" in summary:
        lines.append(f"min {summary['min']}, max {summary['max']}")
    if "length" in summary and not size:
        lines.append(f"length: {summary['length']}")
    if summary.get("item_types"):
        lines.append("item types: " + ", ".join(summary["item_types"]))
    if "head" in summary:
        lines += ["head:", summary["head"]]
    if "items" in summary:
        items = summary["items"]
        shown_items = [f"{k}: {v}" for k, v in items] if kind == "mapping" else [str(i) for i in items]
        lines.append(f"first {len(items)} items:" if items else "no items")
        lines += ["  " + i for i in shown_items]
    if "description" in summary:
        lines.append(summary["description"])
    if "value" in summary:
        lines.append(f"value: {summary['value']}")
    return "\n".join(lines)


handlers = [
    (r"notebooks/variables", VariablesHandler),
    (r"notebooks/variables/(?P<name>[^/]+)", VariablesHandler),
]
