"""A randomised crash loop through real jupyter servers: SIGKILL during start-up, mid-run and while settling.

Each server life checks what the previous ones left (first read of every killed
session shows it repaired, journals gapless, every row a client saw still there,
one honest marker or a finished answer, every session still listed), then runs
several turns at once and is killed at a random moment. Lives are forked from a
pre-imported parent (zygote_server.py), so dozens fit in the test budget.

`HERMES_CRASH_KILLS` (default 50) scales the loop; `HERMES_CRASH_SEED` replays one.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .zygote_server import ForkedServer, Zygote

KILLS = int(os.environ.get("HERMES_CRASH_KILLS", "50"))
SEED = int(os.environ.get("HERMES_CRASH_SEED", str(int(time.time()))))


@dataclass
class Turn:
    session_id: str
    run_id: str
    count: int
    seen: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq → row a client received
    checked: bool = False


def _expected(count: int) -> str:
    return " ".join(str(i) for i in range(1, count + 1))


def _journal(server: ForkedServer, run_id: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while True:
        page = server.get(f"runs/{run_id}/events", after_seq=str(len(rows)), limit="10000").json()
        rows.extend(page["events"])
        if not page["events"]:
            return rows


def _violations_of(server: ForkedServer, turn: Turn) -> list[str]:
    """Everything wrong with one killed turn as the restarted server shows it."""
    where = f"run {turn.run_id} (count to {turn.count})"
    response = server.get(f"sessions/{turn.session_id}")
    if response.status_code != 200:
        return [f"{where}: GET session answered {response.status_code}"]
    session = response.json()
    problems = []
    if session["pending_user_message"] is not None or session["active_stream_id"] is not None:
        problems.append(f"{where}: first read after restart still pending")
    rows = _journal(server, turn.run_id)
    if [r["seq"] for r in rows] != list(range(1, len(rows) + 1)):
        problems.append(f"{where}: journal seqs have a gap or duplicate")
    by_seq = {r["seq"]: r for r in rows}
    lost = [seq for seq, row in turn.seen.items() if by_seq.get(seq) != row]
    if lost:
        problems.append(f"{where}: rows a client saw are gone or changed: {lost[:5]}")
    text = "".join(r["payload"].get("text", "") for r in rows if r["event"] == "token").strip()
    done = any(r["event"] == "done" for r in rows)
    messages = session["messages"]
    users = [m for m in messages if m["role"] == "user"]
    markers = [m for m in messages if m.get("type") == "interrupted"]
    answers = [m["content"] for m in messages if m["role"] == "assistant" and not m.get("_error")]
    if [u["content"] for u in users] != [f"count to {turn.count}"]:
        problems.append(f"{where}: user rows {[u['content'] for u in users]}")
    if not _expected(turn.count).startswith(text):
        problems.append(f"{where}: journal text is not a prefix of the count")
    if " ".join(answers).strip() != text and not (not markers and " ".join(answers) == _expected(turn.count)):
        problems.append(f"{where}: transcript {' '.join(answers)[:60]!r} differs from journal {text[:60]!r}")
    if len(markers) > 1:
        problems.append(f"{where}: {len(markers)} interrupted markers")
    if markers and (done or markers[0].get("interruption_cause") != "server_restart"):
        problems.append(f"{where}: wrong marker (done={done}, cause={markers[0].get('interruption_cause')})")
    if not markers and " ".join(answers) != _expected(turn.count):
        problems.append(f"{where}: no marker but the answer is incomplete")
    return problems


def _listed(server: ForkedServer) -> set[str]:
    """Every session id, walked page by page (the paged listing is what clients use at scale)."""
    sids: list[str] = []
    cursor = None
    while True:
        params = {"limit": "40", **({"before": cursor} if cursor else {})}
        page = server.get("sessions", **params).json()
        sids.extend(r["session_id"] for r in page["sessions"])
        cursor = page["next"]
        if cursor is None:
            return set(sids)


async def _watch(server: ForkedServer, turn: Turn, rows: int) -> None:
    ws = await server.open_stream(turn.run_id)
    try:
        for row in await server.read_rows(ws, limit=rows, timeout_s=10):
            turn.seen[row["seq"]] = row
    finally:
        ws.close()
        await asyncio.sleep(0)  # let the close go out before the server is killed


async def _life(server: ForkedServer, rng: random.Random) -> list[Turn]:
    """Start a few turns (long ones watched over WebSocket, short ones settling), then return them."""
    new: list[Turn] = []
    for _ in range(rng.randint(1, 2)):
        sid = server.new_session(title="long")
        new.append(Turn(sid, server.start_run(sid, "count to 100000"), 100000))
    for _ in range(rng.randint(1, 2)):
        sid = server.new_session(title="short")
        count = rng.randint(2, 12)
        new.append(Turn(sid, server.start_run(sid, f"count to {count}"), count))

    if rng.random() < 0.7:
        await asyncio.gather(*(_watch(server, t, rng.randint(3, 40)) for t in new if t.count == 100000))
    else:
        await asyncio.sleep(rng.uniform(0.0, 0.12))  # kill while the short turns settle
    return new


@pytest.mark.crash
@pytest.mark.timeout(600)
async def test_random_sigkills_never_lose_rows_sessions_or_markers(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    zygote = Zygote(tmp_path, dict(os.environ))
    server = ForkedServer(tmp_path, zygote, token_delay=0.01)
    turns: list[Turn] = []
    violations: list[str] = []
    kills = startup_kills = 0
    try:
        while kills < KILLS:
            if rng.random() < 0.3:
                server.spawn()
                time.sleep(rng.uniform(0.0, 0.5))  # while importing, linking, or running the start-up scan
                server.kill()
                kills += 1
                startup_kills += 1
                continue
            server.start()
            violations += _check(server, turns)
            turns += await _life(server, rng)
            server.kill()
            kills += 1
        server.start()
        violations += _check(server, turns)
    finally:
        server.stop()
        zygote.close()
    print(json.dumps({"crash_loop": {"seed": SEED, "kills": kills, "startup_kills": startup_kills,
                                     "turns": len(turns), "violations": len(violations)}}))
    assert kills >= KILLS
    assert not violations, f"seed {SEED}: {violations[:10]}"


def _check(server: ForkedServer, turns: list[Turn]) -> list[str]:
    """First reads of the turns not yet checked, then that no session ever left the listing."""
    problems: list[str] = []
    for turn in turns:
        if not turn.checked:
            problems += _violations_of(server, turn)
            turn.checked = True
    missing = {t.session_id for t in turns} - _listed(server)
    if missing:
        problems.append(f"sessions missing from the listing: {sorted(missing)[:5]}")
    return problems
