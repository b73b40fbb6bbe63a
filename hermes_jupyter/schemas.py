"""Typed shapes of what we read back from disk: a session sidecar and a listing index row.

Anything under state_dir may have been edited, truncated or planted by hand, so
a file is checked against its schema before any code relies on a field's type.
A sidecar that fails is `corrupt` (listed as such, left in place); an index that
fails is thrown away and rebuilt from the sidecars. The checks run in C
(`msgspec.convert`), so they cost little next to the JSON parse itself.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .ids import is_valid_id

Rows = list[dict[str, Any]]


class SidecarShape(msgspec.Struct, kw_only=True):
    """The typed fields of `sessions/<sid>.json` (CONTRACT §3). Unknown keys are allowed and kept."""

    session_id: str
    title: str = "New session"
    created_at: float = 0.0
    updated_at: float = 0.0
    backend: str = "demo"
    model: str | None = None
    messages: Rows = msgspec.field(default_factory=list)
    context_messages: Rows = msgspec.field(default_factory=list)
    tool_calls: Rows = msgspec.field(default_factory=list)
    active_stream_id: str | None = None
    pending_user_message: str | None = None
    pending_attachments: Rows = msgspec.field(default_factory=list)
    pending_started_at: float | None = None
    notebook_path: str | None = None
    cell_id: str | None = None
    kernel_id: str | None = None
    last_run_id: str | None = None
    backend_session_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated_cost: float | None = None
    message_count: int | None = None


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


def check_sidecar(data: Any, session_id: str) -> dict[str, Any]:
    """`data` if it is a sidecar of `session_id` with well-typed fields; else ValueError saying why."""
    if not isinstance(data, dict):
        raise ValueError(f"the file holds {type(data).__name__}, not a session object")
    try:
        shape = msgspec.convert(data, SidecarShape)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None
    if shape.session_id != session_id:
        raise ValueError(f"session_id {shape.session_id!r} does not match the file name")
    return data


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
