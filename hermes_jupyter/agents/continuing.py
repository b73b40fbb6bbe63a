"""How a backend hands a model its own unfinished answer (CONTRACT §10), in one place for every backend.

The model-facing history of a continued turn ends with the user's prompt and the
answer so far. Chat APIs have no portable "go on from here" call, so the answer is
sent as the model's own last message (the prefix) followed by one short instruction;
the instruction is never stored: the session keeps only the user's own messages.
"""

from __future__ import annotations

from typing import Any, Final

from .base import Continuation

CONTINUE_INSTRUCTION: Final = (
    "Your previous answer above was cut off before it was finished. Continue it exactly where it stopped: "
    "do not repeat anything you already wrote, do not start over, and do not mention the interruption."
)


def continuation_history(history: list[dict[str, Any]], continues: Continuation) -> list[dict[str, Any]]:
    """`history` ending with the whole answer so far as one assistant message (the prefix).

    The context mirrors the partial answer as trailing assistant rows (one per segment
    or part); they are replaced by the one prefix, so no text is sent twice.
    """
    rows = list(history)
    while rows and rows[-1].get("role") == "assistant" and not rows[-1].get("tool_calls"):
        rows.pop()
    if continues.partial:
        rows.append({"role": "assistant", "content": continues.partial})
    return rows


def continuation_messages(history: list[dict[str, Any]], continues: Continuation) -> list[dict[str, Any]]:
    """The messages of a continued turn for a chat API: the history, the prefix, then the instruction."""
    return [*continuation_history(history, continues), {"role": "user", "content": CONTINUE_INSTRUCTION}]
