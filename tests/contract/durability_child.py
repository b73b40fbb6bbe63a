"""A server stand-in under one journal durability policy, to be SIGKILLed by test_durability_contract.py.

Run as `python durability_child.py STATE_DIR POLICY PROMPT`. Prints `SID RUN`, then each journaled
seq as the demo run streams it, then `settled` once the run has settled; then it waits to be killed.
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


async def main(state: Path, policy: str, prompt: str) -> None:
    store, live = SessionStore(state / "sessions"), LiveRuns()
    journals = Journals(state / "runs", durability=policy)  # type: ignore[arg-type]
    recovery = Recovery(store, journals, live, settler=settle)
    manager = RunManager(store, journals, recovery, live, {"demo": DemoAgent(token_delay=0.001)})
    session = store.create(title="durability")
    run = await manager.start_run(session.session_id, prompt)
    print(session.session_id, run.run_id, flush=True)
    async for batch in manager.attach(run.run_id).batches():
        if not isinstance(batch, Heartbeat):
            print(" ".join(str(a.seq) for a in batch), flush=True)
    await run.done.wait()
    print("settled", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
