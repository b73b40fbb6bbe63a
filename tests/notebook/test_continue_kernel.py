"""`%hermes continue` in a real kernel: after ■ stopped a count, the next cell holds the whole answer, 1 … N."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from nbformat.v4 import new_code_cell

from hermes_jupyter.notebook.outputs import RUN_MIME, WIDGET_MIME

from .kernels import hermes_notebook, hermes_outputs, own_kernel, wait_for_seq
from .server_process import ServerProcess, server_fixture

slow_server = server_fixture(token_delay=0.02)  # a count outlasts a kernel interrupt on a loaded machine
N = 300


def test_hermes_continue_after_a_kernel_interrupt_finishes_the_count_in_its_cell(slow_server: ServerProcess) -> None:
    nb = hermes_notebook(f"count to {N}")
    nb.cells.append(new_code_cell("%hermes continue"))

    live: list[dict[str, Any]] = []

    async def run() -> str:
        async with own_kernel(nb, slow_server) as client:
            await client.async_execute_cell(nb.cells[0], 0)
            task = asyncio.ensure_future(client.async_execute_cell(nb.cells[1], 1))
            ref = await wait_for_seq(client, 1, 10)
            await client.km.interrupt_kernel()
            await task
            task = asyncio.ensure_future(client.async_execute_cell(nb.cells[2], 2))
            while not task.done():  # what the cell shows while the continuation streams
                outs = hermes_outputs(nb.cells[2])
                if outs and outs[-1]["data"][RUN_MIME]["status"] == "running" and not live:
                    live.append(dict(outs[-1]["data"]))
                await asyncio.sleep(0.02)
            await task
            return str(ref["run_id"])

    first = asyncio.run(run())
    assert live, "the continuation's live output was never seen"
    streaming = live[0]["text/markdown"]  # live as it ends: the first part and its marker come first
    assert streaming.startswith("1 2 3") and "**Task cancelled.**" in streaming
    assert slow_server.api("GET", f"runs/{first}")["status"] == "cancelled"
    outputs: list[dict[str, Any]] = nb.cells[2].outputs
    assert [o["output_type"] for o in outputs] == ["display_data"], outputs  # no error, no printed refusal
    data = hermes_outputs(nb.cells[2])[-1]["data"]
    ref = data[RUN_MIME]
    assert ref["status"] == "completed" and ref["continues"] == first and WIDGET_MIME not in data
    markdown = data["text/markdown"]
    assert "**Task cancelled.**" in markdown  # the marker stays between the two parts
    body = markdown.split("<sub>")[0]
    assert [int(n) for n in re.findall(r"\b\d+\b", body)] == list(range(1, N + 1))
    assert data == slow_server.api("GET", f"runs/{ref['run_id']}/bundle")  # the server's bundle, byte for byte


def test_hermes_continue_says_so_when_the_last_answer_finished(slow_server: ServerProcess) -> None:
    nb = hermes_notebook("count to 3")
    nb.cells.append(new_code_cell("%hermes continue"))

    async def run() -> None:
        async with own_kernel(nb, slow_server) as client:
            for index, cell in enumerate(nb.cells):
                await client.async_execute_cell(cell, index)

    asyncio.run(run())
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs if o["output_type"] == "stream")
    assert "nothing to continue" in printed and "Traceback" not in printed


def test_a_continuation_stopped_by_a_kernel_interrupt_keeps_both_parts_in_its_cell(slow_server: ServerProcess) -> None:
    nb = hermes_notebook("count to 100000")
    nb.cells.append(new_code_cell("%hermes continue"))

    async def run() -> str:
        async with own_kernel(nb, slow_server) as client:
            await client.async_execute_cell(nb.cells[0], 0)
            for index in (1, 2):
                task = asyncio.ensure_future(client.async_execute_cell(nb.cells[index], index))
                ref = await wait_for_seq(client, index, 10)
                await client.km.interrupt_kernel()
                await task
                if index == 1:
                    first = str(ref["run_id"])
            return first

    first = asyncio.run(run())
    data = hermes_outputs(nb.cells[2])[-1]["data"]
    ref = data[RUN_MIME]
    assert ref["status"] == "cancelled" and ref["continues"] == first
    head, marker, tail = data["text/markdown"].partition("**Task cancelled.**")
    assert marker and "**Task cancelled.**" in tail  # both stops kept, each after its part
    numbers = [int(n) for n in re.findall(r"\b\d+\b", data["text/markdown"])]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 20
