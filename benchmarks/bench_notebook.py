"""Notebook-side benchmarks, printed as JSON.

- widget comm messages per second while a real kernel streams `count to N` from a real
  jupyter server at DemoAgent.token_delay=0 (the rate the throttle must bound), with the
  token rate and the busiest one-second window next to it;
- time to recover a notebook with 100 hermes cells (each cut off mid-run, 200 tokens
  journaled) with `recover_notebook_file`, the code `jupyter hermes recover` runs.

Usage: python benchmarks/bench_notebook.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from hermes_jupyter.journal import Journals
from hermes_jupyter.notebook.outputs import RUN_MIME, fold_rows, live_bundle
from hermes_jupyter.notebook.recover import recover_notebook_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.notebook.kernels import hermes_notebook, hermes_outputs, own_kernel  # noqa: E402
from tests.notebook.server_process import start_server  # noqa: E402


def bench_comm_rate(tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp), token_delay=0.0)
        try:
            nb = hermes_notebook(f"count to {tokens}")

            async def run() -> tuple[list[float], float]:
                async with own_kernel(nb, server) as client:
                    await client.async_execute_cell(nb.cells[0], 0)
                    start = time.monotonic()
                    await client.async_execute_cell(nb.cells[1], 1)
                    return client.comm_times, time.monotonic() - start

            comm_times, elapsed = asyncio.run(run())
        finally:
            server.stop()
    busiest = max((sum(1 for u in comm_times[i:] if u - t < 1.0) for i, t in enumerate(comm_times)), default=0)
    final = hermes_outputs(nb.cells[1])[-1]["data"]
    return {
        "tokens": tokens,
        "cell_seconds": round(elapsed, 3),
        "tokens_per_s": round(tokens / elapsed, 1),
        "comm_messages": len(comm_times),
        "comm_messages_per_s": round(len(comm_times) / elapsed, 2),
        "busiest_1s_window": busiest,
        "final_status": final[RUN_MIME]["status"],
        "no_token_lost": final["text/markdown"].startswith(" ".join(map(str, range(1, tokens + 1))) + "\n"),
    }


def bench_recover(cells: int, tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        journals = Journals(state / "runs")
        nb_cells = []
        for i in range(cells):
            run_id = f"run{i}"
            for n in range(1, tokens + 1):
                journals.append("s1", run_id, "token", {"text": f" {n}"})
            journals.append("s1", run_id, "apperror", {"type": "interrupted", "cause": "kernel_restart", "message": "x"})
            journals.close_writer("s1", run_id)
            seen = journals.read("s1", run_id, limit=10).rows
            data = live_bundle(fold_rows(seen, "s1", run_id), f"model{i}")
            nb_cells.append(new_code_cell("%%hermes\ncount", outputs=[new_output("display_data", data=data)]))
        journals.close()
        path = Path(tmp) / "big.ipynb"
        nbformat.write(new_notebook(cells=nb_cells), path)
        start = time.perf_counter()
        recovered = recover_notebook_file(path, state)
        elapsed = time.perf_counter() - start
        again = time.perf_counter()
        recover_notebook_file(path, state)
        noop = time.perf_counter() - again
        size = path.stat().st_size
    return {
        "cells": cells, "tokens_per_cell": tokens, "cells_recovered": recovered,
        "recover_seconds": round(elapsed, 4), "second_pass_seconds": round(noop, 4),
        "notebook_bytes": size,
    }


def main() -> None:
    quick = "--quick" in sys.argv
    result = {
        "comm_rate_token_delay_0": bench_comm_rate(5_000 if quick else 50_000),
        "recover_100_cells": bench_recover(100, 50 if quick else 200),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
