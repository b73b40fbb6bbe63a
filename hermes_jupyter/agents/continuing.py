"""How a backend hands a model its own unfinished answer (docs/transcript.md, "Continue"), in one place for every backend.

The model-facing history of a continued turn ends with the user's prompt and the
answer so far. Chat APIs have no portable "go on from here" call, so the answer is
sent as the model's own last message (the prefix) followed by one short instruction;
the instruction is never stored: the session keeps only the user's own messages.
"""

from __future__ import annotations

import re
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


#: Fewest words a re-sent overlap must have before it is trimmed (shorter ones may be a real repeat).
MIN_OVERLAP_WORDS: Final = 3
_WORD = re.compile(r"\w+")


def overlap(kept: str, text: str) -> int:
    """How many leading characters of `text` only repeat the end of `kept`: the longest suffix of
    `kept` that `text` begins with, when it has at least MIN_OVERLAP_WORDS words (or is all of `kept`)."""
    for start in range(len(kept)):
        suffix = kept[start:]
        if text.startswith(suffix):
            if start == 0 or len(_WORD.findall(suffix)) >= MIN_OVERLAP_WORDS:
                return len(suffix)
            return 0  # later suffixes are shorter still
    return 0


class OverlapTrim:
    """Drops the opening of a continuation that re-sends what the user already sees.

    Models told to continue often restart the cut sentence (or the whole answer). The
    continuation's first text is held while it is still a piece of `kept` (it may be such a
    repeat), then released without the overlap. Text that cannot be a repeat passes at once.
    """

    def __init__(self, kept: str) -> None:
        self._kept = kept
        self._held = ""
        self._open = bool(kept.strip())

    def feed(self, text: str) -> str:
        """The part of `text` to show now ("" while it is held)."""
        if not self._open:
            return text
        self._held += text
        if self._held in self._kept and len(self._held) < len(self._kept):
            return ""
        return self.flush()

    def flush(self) -> str:
        """Release what is held, minus the overlap; later text passes unchanged."""
        if not self._open:
            return ""
        held, self._held, self._open = self._held, "", False
        return held[overlap(self._kept, held):]
