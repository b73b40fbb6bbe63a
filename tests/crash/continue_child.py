"""A server stand-in killed while it continues a turn: continues SID's last turn and prints each journaled seq.

Run as `python continue_child.py STATE_DIR SID`. Prints the new run's id first, then
seqs as it streams; the parent SIGKILLs it mid-run.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from hermes_jupyter.agents.demo import DemoAgent
from hermes_jupyter.journal import Journals
from hermes_jupyter.recovery.liveness import LiveRuns
from hermes_jupyter.recovery.repair import Recovery
from hermes_jupyter.runs import settle
from hermes_jupyter.runs.fanout import Heartbeat
from hermes_jupyter.runs.manager import RunManager
from hermes_jupyter.sessions.store import SessionStore


async def main(state: Path, session_id: str) -> None:
    store, journals, live = SessionStore(state / "sessions"), Journals(state / "runs"), LiveRuns()
    manager = RunManager(store, journals, Recovery(store, journals, live, settler=settle), live, {"demo": DemoAgent(token_delay=0.01)})
    run, _ = await manager.continue_turn(session_id)
    print(run.run_id, flush=True)
    async for batch in manager.attach(run.run_id).batches():
        if not isinstance(batch, Heartbeat):
            print(" ".join(str(a.row.seq) for a in batch), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
