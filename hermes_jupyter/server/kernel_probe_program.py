"""Runs inside the kernel: the introspection probe behind list_variables and inspect_variable.

Kept as data, never imported: the server reads this file as text (importlib.resources, in
server/notebook_access.py), puts kernel_summary.py's source in front of it, and has the kernel exec
the whole in a private namespace where `ip` is get_ipython() and `args` the request (a dict). It must
not leave names in the user's namespace and must not print; it sets `result` (JSON text). It uses only
the standard library. kernel_summary.py gives `_preview`, `_summarize` and `_summary_line`.
"""
# mypy: ignore-errors
# (names given by the exec namespace -- ip, args and kernel_summary.py's helpers -- are not visible here)

import json, reprlib, inspect as _inspect

def _sizes(value, info):
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        info["shape"] = list(shape)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and not callable(dtype):
        info["dtype"] = str(dtype)
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        info["len"] = len(value)

def _type_name(value):
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else kind.__module__ + "." + kind.__qualname__

_ENVIRON = "the process environment (not shown: it holds the server's secrets)"

def _is_module(value):
    return isinstance(value, type(json))

def _is_environment(value):
    """os.environ, os.environb, or a mapping that is a copy of the environment (dict(os.environ))."""
    import collections.abc as _abc, itertools as _it, os as _os
    if value is _os.environ or isinstance(value, type(_os.environ)):
        return True
    if getattr(_os, "environb", None) is not None and value is _os.environb:
        return True
    if not isinstance(value, _abc.Mapping):  # never len() a lazy frame: it could compute a whole dataset
        return False
    try:
        if not 3 <= len(value) <= 100000:
            return False
        env = _os.environ
        same = sum(1 for k, v in _it.islice(value.items(), 2000)
                   if isinstance(k, str) and isinstance(v, str) and env.get(k) == v)
    except Exception:
        return False
    return same >= 3 and same * 2 >= min(len(value), 2000)

def _user_names():
    hidden = ip.user_ns_hidden
    for name, value in ip.user_ns.items():
        if name.startswith("_") or (name in hidden and hidden[name] is value):
            continue
        if _is_module(value):
            continue
        yield name, value

def _list(limit, preview):
    names = sorted(_user_names(), key=lambda item: item[0])
    rows = []
    for name, value in names[:limit]:
        if _is_environment(value):
            rows.append({"name": name, "type": _type_name(value), "preview": _ENVIRON})
            continue
        info = {"name": name, "type": _type_name(value), "preview": _preview(value, preview)}
        _sizes(value, info)
        rows.append(info)
    return {"variables": rows, "more": max(0, len(names) - limit)}

def _refusal(name, value):
    """Why `value` (reached as `name`) is not shown, or None: modules are never traversed or shown."""
    if _is_module(value):
        return "%s is a module; inspect_variable shows the notebook's data, not modules" % name
    if _is_environment(value):
        return "%s is %s" % (name, _ENVIRON)
    return None

def _inspect_one(name, preview):
    parts = name.split(".")
    if not all(p.isidentifier() and not p.startswith("_") for p in parts):
        return {"error": "not a variable name (private and dunder attributes are not shown): %r" % name}
    if parts[0] not in ip.user_ns:
        return {"error": "no variable named %r in the kernel" % parts[0]}
    value = ip.user_ns[parts[0]]
    for index, part in enumerate(parts[1:], 1):
        refused = _refusal(".".join(parts[:index]), value)
        if refused:
            return {"error": refused}
        try:
            value = getattr(value, part)
        except Exception as exc:
            return {"error": "%s has no attribute %r (%s)" % (name, part, type(exc).__name__)}
    refused = _refusal(name, value)
    if refused:
        return {"error": refused}
    info = {"name": name, "type": _type_name(value), "preview": _preview(value, preview)}
    _sizes(value, info)
    if isinstance(value, dict):
        info["keys"] = [_preview(k, 80) for k in list(value)[:50]]
    columns = getattr(value, "columns", None)
    if columns is not None and not callable(columns):
        try:
            info["columns"] = [str(c) for c in list(columns)[:100]]
            dtypes = getattr(value, "dtypes", None)
            if dtypes is not None and hasattr(dtypes, "items"):
                info["dtypes"] = {str(k): str(v) for k, v in list(dtypes.items())[:100]}
        except Exception:
            pass
    if callable(value):
        try:
            info["signature"] = str(_inspect.signature(value))
        except (TypeError, ValueError):
            pass
        doc = _summary_line(_inspect.getdoc(value))
        if doc:
            info["doc"] = doc
    info["summary"] = _summarize(value, preview)
    return info

if args["op"] == "list":
    result = json.dumps(_list(args["limit"], args["preview"]), default=str)
else:
    result = json.dumps(_inspect_one(args["name"], args["preview"]), default=str)
