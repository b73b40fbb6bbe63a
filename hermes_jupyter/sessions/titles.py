"""Session titles a person can tell apart: made locally from the first prompt, no model call.

A session starts as `UNTITLED` unless someone named it (`%%hermes --session NAME`, the
sidebar's rename). Its first turn then names it after the prompt, so three sessions of
one notebook read "Plot the residuals", "Why is the fit biased?", … instead of three
copies of the file name; the notebook is the row's `subtitle`.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..redact import Redactor

UNTITLED: Final = "New session"
#: Characters of a made title, ellipsis included: what a sidebar row shows on one line.
MAX_TITLE_CHARS: Final = 48
#: A made title never ends on a shorter word fragment than this many characters before the cut.
_MIN_WORD_CUT: Final = 24
_LEADING_MARKUP: Final = re.compile(r"^(?:[#>*\-+]+|\d+[.)])\s*")
_SPACE: Final = re.compile(r"\s+")
_REDACTOR: Final = Redactor()


def title_from_prompt(prompt: str) -> str:
    """The first line that says something, without markdown prefixes or secrets, cut at a word."""
    for line in prompt.splitlines():
        text = _SPACE.sub(" ", _LEADING_MARKUP.sub("", line.strip())).strip().strip("`").strip()
        if text:
            return _shorten(_REDACTOR.text(text))
    return UNTITLED


def _shorten(text: str) -> str:
    if len(text) <= MAX_TITLE_CHARS:
        return text
    cut = text[: MAX_TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= _MIN_WORD_CUT:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def title_for_turn(title: str | None, messages: list[dict[str, Any]], prompt: str) -> str | None:
    """The title to give a session as a turn starts, or None to keep its own.

    Only an untitled session is named, after its first user message (sessions
    from before titles were made keep their first prompt, not their latest).
    """
    if title and title != UNTITLED:
        return None
    first = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    return title_from_prompt(first if isinstance(first, str) and first.strip() else prompt)


def subtitle(notebook_path: str | None) -> str | None:
    """What a listing row says under the title: the notebook the session belongs to (root-relative)."""
    return notebook_path or None
