"""Notebook-tool benchmarks, printed as JSON: what `inspect_variable` on a DataFrame costs.

- through the main shell (a kernel without subshells, idle), and
- through a kernel subshell (what the tools use on ipykernel 7: it also answers while a
  `%%hermes` cell keeps the kernel busy), one subshell created and deleted per call;

both on the same real kernel in the same run, so the ratio is the subshell's overhead.

Usage: python benchmarks/bench_notebook_tools.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from hermes_jupyter.server.notebook_access import KernelAccess

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.notebook.kernels import run_setup  # noqa: E402

SETUP = "import pandas as pd\nsales = pd.DataFrame({'region': ['north', 'south', 'east'] * 100, 'units': range(300)})"


async def _timed(access: KernelAccess, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        info = await access.inspect_variable("k", "sales")
        times.append(time.perf_counter() - start)
        assert info["shape"] == [300, 2], info
    return times


async def bench(calls: int) -> dict[str, Any]:
    km = AsyncKernelManager(kernel_name="python3")
    await km.start_kernel()
    try:
        await run_setup(km.client(), SETUP)
        access = KernelAccess(lambda _: km)
        subshell = await _timed(access, calls)
        km._hermes_no_subshells = True  # type: ignore[attr-defined]  # as a kernel without subshells
        main = await _timed(access, calls)
    finally:
        await km.shutdown_kernel(now=True)
    subshell_ms, main_ms = statistics.median(subshell) * 1000, statistics.median(main) * 1000
    return {
        "calls": calls,
        "inspect_variable_main_shell_median_ms": round(main_ms, 2),
        "inspect_variable_subshell_median_ms": round(subshell_ms, 2),
        "subshell_over_main_ratio": round(subshell_ms / main_ms, 2),
    }


def main() -> None:
    calls = 5 if "--quick" in sys.argv else 30
    print(json.dumps(asyncio.run(bench(calls)), indent=2))


if __name__ == "__main__":
    main()
