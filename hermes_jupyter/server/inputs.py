"""Checks on what a client sends: text that can be stored, and counts in range.

JSON lets a client send strings Python holds but cannot write as UTF-8 (lone
surrogates such as "\\ud800") and NUL characters, which break files and tools
downstream; both are refused with 400 before anything is saved. Counts in query
strings must be plain ASCII digits (`str.isdigit` also accepts "²"). A body nested
deeper than `MAX_DEPTH` is refused with 400 too: Python's parser gives up on deep
nesting with a RecursionError, and every walk of a parsed body recurses.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import PlainValueError, user_error

#: Deepest nesting of lists and objects a request body may have (ours need 4 or 5).
MAX_DEPTH = 64

_ASCII_COUNT = re.compile(r"[0-9]{1,18}")
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


def bad_text_at(value: Any, where: str = "body") -> str | None:
    """Where in `value` (a parsed JSON body) a string holds a NUL or a lone surrogate, or None."""
    if isinstance(value, str):
        return where if _BAD_TEXT.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = bad_text_at(key, f"{where} key") or bad_text_at(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for idx, item in enumerate(value):
            found = bad_text_at(item, f"{where}[{idx}]")
            if found:
                return found
    return None


def check_text(body: Any) -> None:
    where = bad_text_at(body)
    if where is not None:
        raise PlainValueError(
            "The text sent contains characters that cannot be stored (a NUL or a broken Unicode character). "
            "Remove them and try again.", f"at {where[:200]}",
        )


def parse_count(raw: str | None, name: str, default: int, *, minimum: int = 0, maximum: int = 10**15) -> int:
    """A query-string count: ASCII digits only, within [minimum, maximum]; else a plain 400."""
    if raw is None:
        return default
    if _ASCII_COUNT.fullmatch(raw) is None or not minimum <= int(raw) <= maximum:
        raise PlainValueError(
            f"The {name} parameter must be a whole number from {minimum} to {maximum}. Fix the address and try again.",
            f"{name}={raw[:40]!r}",
        )
    return int(raw)


def parse_json(raw: bytes) -> Any:
    """A request body's JSON; `ValueError` if it is not JSON, a plain 400 if it nests deeper than `MAX_DEPTH`."""
    try:
        body = json.loads(raw)
    except RecursionError:
        raise _too_deep(f"nested deeper than the parser's recursion limit; at most {MAX_DEPTH} levels") from None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _deeper_than(body, MAX_DEPTH):
        raise _too_deep(f"nested deeper than {MAX_DEPTH} levels")
    return body


def _too_deep(detail: str) -> Exception:
    return user_error(400, "The request is nested too deeply to be read. Send a simpler request.", detail)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` levels in `value` (a walk without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
