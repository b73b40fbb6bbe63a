"""The typed shape of a listing index row, read back from `sessions/_index.json`.

Anything under state_dir may have been edited, truncated or planted by hand, so
the index is checked before any code relies on a field's type; one that fails
is thrown away and rebuilt from the sidecars. (Sidecars are type-checked
against the `Session` dataclass itself, in store.py.) The checks run in C
(`msgspec.convert`), so they cost little next to the JSON parse itself.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .ids import is_valid_id

class IndexRow(msgspec.Struct, kw_only=True):
    """One row of `sessions/_index.json`: a cached listing row plus the sidecar mtime it was built from."""

    session_id: str
    title: str
    updated_at: float
    mtime_ns: int
    created_at: float | None = None
    backend: str | None = None
    model: str | None = None
    message_count: int = 0
    active_stream_id: str | None = None
    last_run_id: str | None = None
    notebook_path: str | None = None
    kernel_id: str | None = None
    corrupt: bool = False
    error: str | None = None


def check_index(data: Any) -> dict[str, dict[str, Any]] | None:
    """The saved index if every row is well typed and keyed by its own valid id; None means rebuild it.

    One bad row voids the whole index: trusting the rest would hide that session
    from the listing until the background check re-read its sidecar.
    """
    if not isinstance(data, dict):
        return None
    try:
        msgspec.convert(data, dict[str, IndexRow])
    except msgspec.ValidationError:
        return None
    if not all(is_valid_id(sid) and row.get("session_id") == sid for sid, row in data.items()):
        return None
    return data
