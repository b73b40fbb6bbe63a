"""The words on a run's buttons and queued note, spelled once for every client.

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
