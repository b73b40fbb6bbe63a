"""A run's transcript: typed rows (`rows`), the one streaming fold (`fold`), the settled turns a
session stores (`turns`; `old_turns` reads sidecars written before them), and the merge into a
session's messages (`merge`); `context` keeps the model-facing history in step. See docs/transcript.md."""

from __future__ import annotations

from .context import (
    api_messages,
    append_to_context,
    context_projection,
    cut_args,
    existing_tool_card,
    normalize_text,
    tool_already_present,
)
from .chain import part_reader, whole_answer
from .fold import TranscriptFold, fold, terminal_marker
from .merge import continued_answer, continued_turn_start, merge, session_card
from .rows import FINAL_STATUSES, MarkerRow, Row, Transcript, Verdict

__all__ = [
    "FINAL_STATUSES", "MarkerRow", "Row", "Transcript", "TranscriptFold", "Verdict", "api_messages",
    "append_to_context", "continued_answer", "continued_turn_start", "context_projection", "cut_args", "existing_tool_card", "fold", "merge",
    "normalize_text", "part_reader", "session_card", "terminal_marker", "tool_already_present", "whole_answer",
]
