"""Session and run id rules. The only place that decides whether an id is safe.

Ids end up in file names (`sessions/<sid>.json`, `runs/<sid>/<run_id>.jsonl`), so
anything outside `[A-Za-z0-9_-]{1,64}` is refused before it reaches the disk.
"""

from __future__ import annotations

import re
import uuid

_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class InvalidId(ValueError):
    """A client gave an id that is not `[A-Za-z0-9_-]{1,64}` (HTTP 400)."""


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def validate_id(value: object, kind: str = "id") -> str:
    """Return `value` if it is a safe id, else raise `InvalidId`."""
    if not is_valid_id(value):
        raise InvalidId(f"invalid {kind}: {value!r}")
    return value  # type: ignore[return-value]


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def new_run_id() -> str:
    return uuid.uuid4().hex
