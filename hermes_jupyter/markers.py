"""The words a user reads about how a run ended: markers and notes. Pure functions, no I/O.

Every view shows these sentences and no other copy of them exists: the transcript
fold puts them into marker and note rows, the server writes them into terminal
journal rows (`payload.marker`), and a session's marker row (an assistant row with
`_error: true`) carries the same text. The wording never claims more than we
know, and the cause sentence survives when a pending-retry marker is promoted or
demoted (docs/transcript.md).
"""

from __future__ import annotations

import time
from typing import Any, Final, Literal

Cause = Literal["server_restart", "kernel_restart", "server_shutdown", "lost_worker", "unknown"]
Outcome = Literal["recovered", "pending_retry", "none", "lost"]

CAUSES: Final[tuple[Cause, ...]] = ("server_restart", "kernel_restart", "server_shutdown", "lost_worker", "unknown")

HEAD: Final = "**Response interrupted.**\n\nThe live response stream stopped before this turn finished."

CAUSE_SENTENCES: Final[dict[str, str]] = {
    "server_restart": "The Jupyter server restarted (or crashed) after this turn began.",
    "kernel_restart": "The notebook kernel this turn was started from restarted or shut down, so the run was stopped.",
    "server_shutdown": "The Jupyter server was shut down while this turn was running, and the turn did not finish in time.",
    "lost_worker": "The agent process running this turn stopped without saying why.",
    "unknown": "The run stopped for a reason hermes-jupyter could not tell.",
}

OUTCOME_SENTENCES: Final[dict[str, str]] = {
    "recovered": "The partial output above was recovered from the run journal; Continue lets the agent go on from where it stopped.",
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

CANCEL_CONTENT: Final = "**Task cancelled.**\n\n*You stopped this run before it finished; what it wrote so far is kept above.*"
TOOL_LIMIT_NOTE: Final = "The agent stopped because it reached its limit of tool calls for one turn; ask it to go on if you need more."
_ERROR_FALLBACK: Final = "the run failed."

#: A run cut off by a full disk: the terminal row's message, and the note its settled turn ends with.
DISK_FULL_MESSAGE: Final = (
    "The server's disk was full, so this turn could not be finished or saved. Free some space on the server; "
    "the partial output is then recovered into the session."
)
DISK_FULL_NOTE: Final = (
    "**The server's disk was full.** This turn stopped because nothing more could be saved. What was written "
    "before that is kept above; there is space again, so you can continue or send the message again."
)


def disk_full_note(run_id: str | None) -> dict[str, Any]:
    """The note row a turn cut off by a full disk ends with, once space returned and it was settled."""
    return {"role": "assistant", "content": DISK_FULL_NOTE, "timestamp": int(time.time()), "_error": True,
            "_disk_full": True, "_recovered_stream_id": run_id}


def known_cause(cause: str | None) -> Cause:
    """`cause` if it is one of CAUSES, else `unknown`."""
    for known in CAUSES:
        if cause == known:
            return known
    return "unknown"


def interrupted_content(cause: str, outcome: Outcome) -> str:
    sentence = CAUSE_SENTENCES.get(cause, CAUSE_SENTENCES["unknown"])
    return f"{HEAD} {sentence} {OUTCOME_SENTENCES[outcome]}"


def interrupted_marker(
    cause: str = "unknown",
    *,
    recovered_output: bool = False,
    pending_retry: bool = False,
    timestamp: float | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """A new marker (tagged `_run_id` with the run it ends, when known). Recovered output wins over a pending retry."""
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
    if run_id:
        marker["_run_id"] = run_id
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


def cancel_marker(timestamp: float | None = None, *, run_id: str | None = None) -> dict[str, Any]:
    marker: dict[str, Any] = {
        "role": "assistant",
        "content": CANCEL_CONTENT,
        "timestamp": int(timestamp if timestamp is not None else time.time()),
        "_error": True,
        "type": "cancelled",
    }
    if run_id:
        marker["_run_id"] = run_id
    return marker


def error_content(message: str | None) -> str:
    """The closing line of a failed run: what went wrong, in the backend's plain words."""
    return f"**Error:** {message or _ERROR_FALLBACK}"


def ending_marker(status: str, payload: dict[str, Any], *, has_output: bool) -> dict[str, Any]:
    """`{variant, text, cause}` of a run that did not complete, from its terminal payload.

    The server writes this into its `cancel`/`apperror` rows (`payload.marker`); a
    foreign terminal row without one is worded here the same way.
    """
    if status == "cancelled":
        return {"variant": "cancelled", "text": CANCEL_CONTENT, "cause": None}
    if status == "interrupted":
        cause = known_cause(payload.get("cause") if isinstance(payload.get("cause"), str) else None)
        return {
            "variant": "interrupted", "cause": cause,
            "text": interrupted_content(cause, "recovered" if has_output else "none"),
        }
    kind = payload.get("type")
    message = payload.get("message")
    return {
        "variant": "error", "text": error_content(message if isinstance(message, str) else None),
        "cause": kind if isinstance(kind, str) and kind else None,
    }


def compaction_text(before: int | None, after: int | None) -> str:
    """The note shown when a backend compacted the conversation to fit the model's context."""
    if before is not None and after is not None:
        return f"The conversation was shortened to fit the model's context ({before} messages became {after})."
    return "The conversation was shortened to fit the model's context."
