"""Write demo-shaped run journals through the real `Journals`, for the notebook tests.

The notebook side only ever reads journals the server wrote; these helpers
write the same rows the demo agent and the run manager would, without a server.
"""

from __future__ import annotations

from typing import Any

from hermes_jupyter.journal import Journals

Event = tuple[str, dict[str, Any]]


def count_events(n: int) -> list[Event]:
    return [("token", {"text": str(i) if i == 1 else f" {i}"}) for i in range(1, n + 1)]


def tool_events() -> list[Event]:
    """What the demo agent emits for `use a tool` (docs/demo-agent.md)."""
    return [
        ("reasoning", {"text": "The user wants to see a tool call."}),
        ("token", {"text": "Let me look."}),
        ("tool", {"tid": "t1", "name": "terminal", "args": {"command": "ls demo/"}, "preview": "ls demo/"}),
        ("tool_complete", {"tid": "t1", "name": "terminal", "preview": "data.csv\nnotes.md", "duration": 0.01, "is_error": False}),
        ("token", {"text": "There are two files."}),
    ]


def huge_answer_events(total_bytes: int = 2_500_000) -> list[Event]:
    """An answer of about `total_bytes` in 50 kB tokens, each of many lines: more than a cell may hold."""
    line = "lorem ipsum " * 8
    token = "".join(f"line {i} {line}\n" for i in range(500))
    return [("token", {"text": token}) for _ in range(max(1, total_bytes // len(token)))]


DONE: Event = ("done", {})
CANCEL: Event = ("cancel", {"message": "Cancelled by user"})
KERNEL_RESTART: Event = ("apperror", {"type": "interrupted", "cause": "kernel_restart", "message": "The run was interrupted (kernel_restart)."})
ERROR: Event = ("apperror", {"type": "provider_error", "message": "the model is unreachable"})


def write_run(journals: Journals, session_id: str, run_id: str, events: list[Event], *, keep_open: bool = False) -> int:
    """Append `events`; returns the last seq. `keep_open` leaves the writer (and its lock) held, like a live run."""
    last = 0
    for event, payload in events:
        last = journals.append(session_id, run_id, event, payload).row.seq
    if not keep_open:
        journals.close_writer(session_id, run_id)
    return last
