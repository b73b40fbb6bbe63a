"""Markdown code fences that enclose any text: one rule for cell outputs and attachments."""

from __future__ import annotations

import re


def longest_run(text: str, char: str) -> int:
    """The longest run of `char` in `text` (a fence must be longer to enclose it)."""
    return max((len(m) for m in re.findall(f"{re.escape(char)}+", text)), default=0)


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text` (at least three)."""
    return "`" * max(3, longest_run(text, "`") + 1)
