"""The words on a run's buttons, its queued note and its answered cards, spelled once for every client.

The kernel widget (`kernel/static/view.js`, through a synced trait) and the labextension
(`labextension/src/api/generated.ts`, written by `scripts/generate_ts_types.py`) both read this
table, so a run's Stop, "Remove from queue" and Continue read the same in a cell, in the Lab
renderer and in the sidebar.
"""

from __future__ import annotations

from typing import Final

RUN_CONTROLS: Final[dict[str, str]] = {
    "stop": "Stop",
    "stop_title": "Stop this run and keep what it wrote so far",
    "stopping": "Stopping…",
    "stop_again": "Stop (try again)",
    "unqueue": "Remove from queue",
    "unqueue_title": "Take this message off the queue: it is not sent",
    "queued": "queued: starts when the answer before it ends",
    "continue": "Continue",
    "continue_title": "Let the agent carry on from where this answer stopped",
    "continuing": "Continuing…",
    "continue_again": "Continue (try again)",
}

#: How an answered question reads on its card: the answer (an approval's choice, `answered` for a
#: clarifying question, a proposal's decision), then who gave it (`answer_words`). Keys are the answers'
#: own values, so the TypeScript copy (`ANSWER_WORDS` in generated.ts) is indexed the same way.
ANSWER_WORDS: Final[dict[str, str]] = {
    "allow_once": "Allowed once",
    "allow_turn": "Allowed for this turn",
    "allow_session": "Allowed for this session",
    "allow_always": "Allowed always",
    "deny": "Denied",
    "answered": "Answered",
    "accepted": "Accepted",
    "rejected": "Rejected",
    "by_person": "{answer} by {user}",
    "policy_allow": "Allowed by a standing rule",
    "policy_deny": "Denied by a standing rule",
    "policy_answered": "Answered by a standing rule",
    "timeout": "Not answered in time",
    "not_answered": "Not answered",
}
#: A turn's usage footer, every part in this order, joined by `USAGE_JOIN` (notebook/outputs.py `usage_words`,
#: the labextension's `usageWords`: one wording in the cell, the bundle and the sidebar, live and settled).
#: `{n}` is a count with thousands separators (1,234), `{s}` seconds to one decimal, `{usd}` dollars to four.
#: A count nobody reported reads "not reported", never 0; counts the backend made up itself (the demo
#: agent counts words) carry `our_count` (docs/transcript.md).
USAGE_WORDS: Final[dict[str, str]] = {
    "not_reported": "tokens not reported",
    "tokens_in": "{n} tokens in",
    "in_not_reported": "tokens in not reported",
    "tokens_out": "{n} out",
    "out_not_reported": "out not reported",
    "our_count": "(our count)",
    "cached": "{n} cached",
    "duration": "{s} s",
    "cost": "${usd}",
}
USAGE_JOIN: Final = " · "
#: The reason a question journals when its wait expired (agents/asks.py); other unanswered ends read "Not answered".
EXPIRED_REASON: Final = "expired"


def answer_words(answer: str, by_kind: str | None, user: str | None = None, reason: str | None = None) -> str:
    """"Allowed once by alice", "Denied by a standing rule", "Not answered in time", "Accepted by bob".

    `by_kind` None is an old row that did not say who answered: the answer alone, with its reason
    when it says more than "answered". The labextension's `answerWords` is the same function.
    """
    words = ANSWER_WORDS.get(answer, answer)
    if by_kind == "timeout":
        return ANSWER_WORDS["timeout" if reason == EXPIRED_REASON else "not_answered"]
    if by_kind == "policy":
        group = answer if answer in ("deny", "answered") else "allow" if answer.startswith("allow") else ""
        return ANSWER_WORDS.get(f"policy_{group}", words)
    if by_kind == "person":
        return ANSWER_WORDS["by_person"].format(answer=words, user=user) if user else words
    return f"{words} ({reason})" if reason and reason != "answered" else words
#: The one note shown while a model has not started answering (docs/transcript.md "Waiting notes"): it reads
#: `waiting` and updates while the wait lasts, then, if the model answers, `waited`. `{s}` is whole seconds.
WAITING_WORDS: Final[dict[str, str]] = {
    "waiting": "Waiting for the model ({s} s)…",
    "waited": "The model took {s} s to start answering.",
}
