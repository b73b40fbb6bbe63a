"""Runs inside the kernel: a variable as data a model can use (docs/attachments.md, "Variables").

This file's source is the first part of the introspection probe (notebook_access.py): it is
executed in the probe's private namespace, never imported in the kernel, so it uses only the
standard library (pandas and numpy are only touched through the values themselves). Everything is bounded: a few rows, a few items,
reprs cut at `limit` characters, no docstrings beyond their first line, nothing computed over a
frame larger than `_FULL_SCAN` cells except its shape and dtypes.
"""

import inspect as _inspect
import reprlib
from typing import Any

_ROWS = 5  # head of a frame or series
_ITEMS = 10  # items of a dict, list, set or array
_COLUMNS = 40  # dtypes and null counts shown per frame
_FULL_SCAN = 5_000_000  # cells: above this, no null counts, deep memory or min/max


def _reprer(limit: int) -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel, r.maxstring, r.maxother, r.maxlong = 3, limit, limit, limit
    r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = r.maxdeque = r.maxarray = 20
    r.maxdict = 12
    return r


def _preview(value: Any, limit: int) -> str:
    """A repr bounded in depth, items and characters (a huge or broken object cannot flood it)."""
    try:
        text = _reprer(limit).repr(value)
    except Exception as exc:
        text = "<repr failed: %s>" % type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _summary_line(text: Any, limit: int = 200) -> str:
    """The first non-empty line of a docstring, cut: a description, never the whole docstring."""
    for line in (text or "").strip().splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[:limit] + "..."
    return ""


def _summary_table(frame: Any, limit: int) -> str:
    try:
        text = str(frame.to_string(max_cols=20, max_colwidth=40, line_width=160))
    except Exception as exc:
        text = "<table failed: %s>" % type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _summary_frame(value: Any, limit: int) -> dict[str, Any]:
    rows, cols = value.shape
    out: dict[str, Any] = {"kind": "dataframe", "shape": [rows, cols]}
    out["dtypes"] = {str(k): str(v) for k, v in list(value.dtypes.items())[:_COLUMNS]}
    if cols > _COLUMNS:
        out["columns_not_shown"] = cols - _COLUMNS
    small = rows * max(cols, 1) <= _FULL_SCAN
    if small:
        nulls = value.isna().sum()
        out["nulls"] = {str(k): int(v) for k, v in list(nulls.items())[:_COLUMNS]}
    out["memory_bytes"] = int(value.memory_usage(deep=small).sum())
    out["head"] = _summary_table(value.head(_ROWS), limit)
    return out


def _summary_series(value: Any, limit: int) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "series", "shape": [len(value)], "dtype": str(value.dtype)}
    if value.name is not None:
        out["series_name"] = _preview(value.name, 80)
    small = len(value) <= _FULL_SCAN
    if small:
        out["nulls"] = int(value.isna().sum())
    out["memory_bytes"] = int(value.memory_usage(deep=small))
    out["head"] = _summary_table(value.head(_ROWS).to_frame(), limit)
    return out


def _summary_array(value: Any, limit: int) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "ndarray", "shape": [int(n) for n in value.shape], "dtype": str(value.dtype),
           "memory_bytes": int(value.nbytes)}
    flat = value.reshape(-1)
    out["items"] = [_preview(x, 80) for x in flat[:_ITEMS].tolist()]
    if 0 < value.size <= _FULL_SCAN and value.dtype.kind in "iufb":
        try:
            out["min"], out["max"] = _preview(value.min().item(), 40), _preview(value.max().item(), 40)
        except Exception:
            pass
    return out


def _summary_mapping(value: Any) -> dict[str, Any]:
    items = list(value.items())[:_ITEMS]
    return {"kind": "mapping", "length": len(value),
            "items": [[_preview(k, 80), _preview(v, 120)] for k, v in items]}


def _summary_sequence(value: Any) -> dict[str, Any]:
    items = list(value)[:_ITEMS] if not isinstance(value, (set, frozenset)) else sorted(
        (_preview(x, 120) for x in value), key=str)[:_ITEMS]
    kinds = sorted({type(x).__name__ for x in list(value)[:100]})
    return {"kind": "sequence", "length": len(value), "item_types": kinds[:10],
            "items": [x if isinstance(value, (set, frozenset)) else _preview(x, 120) for x in items]}


def _summary_described(value: Any) -> dict[str, Any]:
    """Functions, classes and modules in one line: what they are, never their docstring."""
    if isinstance(value, type):
        where = value.__module__ + "." + value.__qualname__
        return {"kind": "class", "description": ("class %s %s" % (where, _summary_line(value.__doc__))).strip()}
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
    try:
        signature = str(_inspect.signature(value))
    except (TypeError, ValueError):
        signature = "(...)"
    line = _summary_line(getattr(value, "__doc__", None) if not isinstance(value, type(_inspect)) else None)
    return {"kind": "callable", "description": ("%s%s  %s" % (name, signature, line)).strip()}


def _summarize(value: Any, limit: int) -> dict[str, Any]:
    """A bounded description of `value` (a dict); the kind says which fields it has."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    try:
        if module.startswith("pandas") and kind.__name__ == "DataFrame":
            return _summary_frame(value, limit)
        if module.startswith("pandas") and kind.__name__ == "Series":
            return _summary_series(value, limit)
        if module.startswith("numpy") and kind.__name__ == "ndarray":
            return _summary_array(value, limit)
        if isinstance(value, dict):
            return _summary_mapping(value)
        if isinstance(value, (list, tuple, set, frozenset)):
            return _summary_sequence(value)
        if isinstance(value, type) or callable(value):
            return _summary_described(value)
    except Exception as exc:  # a broken __len__ or a frame that cannot count its nulls: say so, show the rest
        return {"kind": "object", "value": _preview(value, limit), "summary_failed": type(exc).__name__}
    if isinstance(value, (str, bytes)):
        return {"kind": "text", "length": len(value), "value": _preview(value, limit)}
    if value is None or isinstance(value, (bool, int, float, complex)):
        return {"kind": "scalar", "value": _preview(value, limit)}
    return {"kind": "object", "value": _preview(value, limit)}
