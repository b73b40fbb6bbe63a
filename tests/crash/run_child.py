"""A server stand-in that gets killed mid-run: starts a demo run and prints each journaled seq.

Run as `python run_child.py STATE_DIR`. Prints `SID RUN` first, then seqs as the
run streams; the parent SIGKILLs it at a random moment.
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


async def main(state: Path) -> None:
    store, journals, live = SessionStore(state / "sessions"), Journals(state / "runs"), LiveRuns()
    manager = RunManager(store, journals, Recovery(store, journals, live, settler=settle), live, {"demo": DemoAgent(token_delay=0.001)})
    session = store.create(title="crash")
    run = await manager.start_run(session.session_id, "count to 100000")
    print(session.session_id, run.run_id, flush=True)
    async for batch in manager.attach(run.run_id).batches():
        if not isinstance(batch, Heartbeat):
            print(" ".join(str(a.row.seq) for a in batch), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
