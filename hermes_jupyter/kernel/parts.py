"""The parts of an answer a continuation goes on from, read once from the server.

A `%hermes continue` cell ends with the whole answer, every part with its marker
(transcript/chain.py); with these parts it shows the same while it streams, so the
cell reads as one answer, live and final alike (docs/transcript.md, "Continue").
"""

from __future__ import annotations

import logging

import httpx

from ..notebook.outputs import RunOutput
from ..transcript.chain import MAX_PARTS
from ..transcript.rows import Transcript
from ..api_client import HermesApiError, HermesClient

log = logging.getLogger(__name__)


def earlier_parts(client: HermesClient, session_id: str, continues: str | None) -> list[Transcript]:
    """The parts before a continuation, oldest first; a part the server cannot give ends the list there."""
    parts: list[Transcript] = []
    seen: set[str] = set()
    run_id = continues
    while run_id and run_id not in seen and len(parts) < MAX_PARTS - 1:
        seen.add(run_id)
        part = read_part(client, session_id, run_id)
        if part is None:
            break
        parts.insert(0, part)
        run_id = part.continues
    return parts


def read_part(client: HermesClient, session_id: str, run_id: str) -> Transcript | None:
    """One settled part as the server's bundle shows it: its rows, closed by its terminal row or, without
    one (a server restart), by the marker the server's verdict names."""
    output = RunOutput(session_id, run_id)
    try:
        while True:
            page = client.events(run_id, output.seq)
            output.feed(page["events"])
            if page.get("terminal") or not page["events"]:
                break
        if output.terminal is not None:
            return output.snapshot()
        marker = client.run_status(run_id).get("marker") or {}
        return output.snapshot("interrupted", cause=str(marker.get("cause") or "unknown"))
    except (HermesApiError, httpx.HTTPError, KeyError, ValueError) as exc:
        log.info("hermes: part %s of a continued answer could not be read (%s)", run_id, exc)
        return None
