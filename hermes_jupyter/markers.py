"""Interrupted and cancelled markers (CONTRACT §5). Pure functions, no I/O.

A marker is an assistant row with `_error: true` that tells the reader the turn
above it did not finish. Its wording never claims more than we know, and the
cause sentence survives when a pending-retry marker is promoted or demoted.
"""

from __future__ import annotations

import time
from typing import Any, Final, Literal

Cause = Literal["server_restart", "kernel_restart", "server_shutdown", "lost_worker", "unknown"]
Outcome = Literal["recovered", "pending_retry", "none", "lost"]

CAUSES: Final[tuple[Cause, ...]] = ("server_restart", "kernel_restart", "server_shutdown", "lost_worker", "unknown")

HEAD: Final = "**Response interrupted.**\n\nThe live response stream stopped before this turn finished."

CAUSE_SENTENCES: Final[dict[str, str]] = {
    "server_restart": "Evidence: the Jupyter server started after this turn began, so this looks like a server crash or restart.",
    "kernel_restart": "Evidence: the notebook kernel this turn was bound to restarted or shut down, so the run was stopped.",
    "server_shutdown": "Evidence: the Jupyter server was shut down while this turn was running and the turn did not finish within the drain timeout.",
    "lost_worker": "Evidence: the stream was gone and no worker was running it any more, so the worker was lost without a terminal event.",
    "unknown": "Evidence: the stream stopped, but hermes-jupyter could not classify the interruption more precisely.",
}

OUTCOME_SENTENCES: Final[dict[str, str]] = {
    "recovered": "The partial output above was recovered from the run journal, but the interrupted agent process could not continue.",
    "pending_retry": "Recovering the partial output from the run journal — reload this session to retry.",
    "none": "The user message above was preserved, but no agent output was recovered.",
    "lost": "Partial output may have been lost.",
}

RETRY_KEYS: Final = (
    "_pending_journal_recovery",
    "_journal_retry_stream_id",
    "_journal_retry_attempts",
    "_journal_retry_first_seen_ts",
)

CANCEL_CONTENT: Final = (
    "**Task cancelled.**\n\n*The run was cancelled by the user before Hermes finished. "
    "No provider failure occurred.*"
)


def interrupted_content(cause: str, outcome: Outcome) -> str:
    sentence = CAUSE_SENTENCES.get(cause, CAUSE_SENTENCES["unknown"])
    return f"{HEAD} {sentence} {OUTCOME_SENTENCES[outcome]}"


def interrupted_marker(
    cause: str = "unknown",
    *,
    recovered_output: bool = False,
    pending_retry: bool = False,
    timestamp: float | None = None,
) -> dict[str, Any]:
    """A new marker. Recovered output wins over a pending retry."""
    outcome: Outcome = "recovered" if recovered_output else "pending_retry" if pending_retry else "none"
    marker: dict[str, Any] = {
        "role": "assistant",
        "content": interrupted_content(cause, outcome),
        "timestamp": int(timestamp if timestamp is not None else time.time()),
        "_error": True,
        "type": "interrupted",
        "interruption_cause": cause if cause in CAUSE_SENTENCES else "unknown",
    }
    if outcome == "pending_retry":
        marker["_pending_journal_recovery"] = True
    return marker


def arm_retry(marker: dict[str, Any], stream_id: str, *, now: float | None = None) -> dict[str, Any]:
    """Attach the lazy-retry bookkeeping to a pending-retry marker."""
    marker["_pending_journal_recovery"] = True
    marker["_journal_retry_stream_id"] = stream_id
    marker["_journal_retry_attempts"] = 0
    marker["_journal_retry_first_seen_ts"] = int(now if now is not None else time.time())
    return marker


def settle_marker(marker: dict[str, Any], outcome: Outcome) -> None:
    """Promote (`recovered`) or demote (`lost`) a pending marker in place, keeping its cause sentence."""
    marker["content"] = interrupted_content(str(marker.get("interruption_cause") or "unknown"), outcome)
    for key in RETRY_KEYS:
        marker.pop(key, None)


def is_interrupted_marker(row: dict[str, Any]) -> bool:
    return row.get("_error") is True and row.get("type") == "interrupted"


def cancel_marker(timestamp: float | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": CANCEL_CONTENT,
        "timestamp": int(timestamp if timestamp is not None else time.time()),
        "_error": True,
        "type": "cancelled",
    }
