"""Real kernels, a real `jupyter server` with the demo agent, nbclient as the frontend.

These are the notebook-side promises end to end: a finished cell keeps a static
bundle, a kernel restart mid-run ends the cell with the partial and the marker, a kernel
interrupt cancels the run on the server, and the widget's message rate stays
bounded whatever the token rate.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from hermes_jupyter import markers
from hermes_jupyter.notebook.outputs import RUN_MIME, WIDGET_MIME

from .kernels import execute_all, hermes_notebook, hermes_outputs, own_kernel, server_kernel, wait_for_seq
from .server_process import ServerProcess, server_fixture

slow_server = server_fixture(token_delay=0.005)
fast_server = server_fixture(token_delay=0.0)

JUPYTER = str(Path(sys.executable).parent / "jupyter")


def count_text(n: int) -> str:
    return " ".join(str(i) for i in range(1, n + 1))


def test_count_to_50_completes_with_static_bundle(slow_server: ServerProcess, tmp_path: Path) -> None:
    nb = hermes_notebook("count to 50")

    async def run() -> None:
        async with own_kernel(nb, slow_server) as client:
            await execute_all(client)

    asyncio.run(run())
    path = tmp_path / "count.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    outputs = saved.cells[1].outputs
    assert [o["output_type"] for o in outputs] == ["display_data"]
    data = outputs[0]["data"]
    assert WIDGET_MIME not in data
    assert data["text/markdown"].startswith(count_text(50) + "\n")
    assert data["text/plain"].startswith(count_text(50))
    ref = data[RUN_MIME]
    assert ref["status"] == "completed" and ref["seq"] == 52  # 50 tokens, usage, done
    assert slow_server.api("GET", f"runs/{ref['run_id']}")["status"] == "completed"


async def wait_for_status(client: Any, cell_index: int, timeout_s: float = 30.0) -> dict[str, Any]:
    """The cell's hermes output once it is no longer the live one (the run ended in the cell)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        outs = hermes_outputs(client.nb.cells[cell_index])
        if outs and outs[-1]["data"][RUN_MIME]["status"] != "running":
            return dict(outs[-1]["data"])
        await asyncio.sleep(0.05)
    raise TimeoutError(f"cell {cell_index} still shows a running run")


def assert_interrupted_by_restart(saved: Any, run_id: str, server: ServerProcess) -> None:
    """The saved cell holds the partial and the kernel-restart marker, as the server settled the run."""
    status = server.api("GET", f"runs/{run_id}")
    assert status["status"] == "interrupted"
    data = hermes_outputs(saved.cells[1])[-1]["data"]
    assert data["text/markdown"].startswith("1 2 3")
    assert "**Response interrupted.**" in data["text/markdown"]
    assert markers.CAUSE_SENTENCES["kernel_restart"] in data["text/markdown"]
    assert "Continue lets the agent go on" in data["text/markdown"]
    assert data[RUN_MIME]["status"] == "interrupted" and data[RUN_MIME]["seq"] == status["last_seq"]
    assert WIDGET_MIME not in data


def test_kernel_restart_mid_run_saves_the_partial_and_the_marker(slow_server: ServerProcess) -> None:
    """A restart of the server-started kernel: the cell ends with the marker before the kernel goes; no recover."""
    nb = hermes_notebook("count to 2000")
    path = slow_server.root_dir / "restart.ipynb"

    async def run() -> str:
        async with server_kernel(nb, slow_server, "restart.ipynb") as (client, kernel_id):
            await client.async_execute_cell(nb.cells[0], 0)
            task = asyncio.ensure_future(client.async_execute_cell(nb.cells[1], 1))
            ref = await wait_for_seq(client, 1, 20)

            def restart() -> None:
                with slow_server.http() as http:
                    http.post(f"api/kernels/{kernel_id}/restart").raise_for_status()

            await asyncio.gather(asyncio.to_thread(restart), wait_for_status(client, 1))
            task.cancel()  # the restarted kernel never answers the old request
            await asyncio.gather(task, return_exceptions=True)
            return str(ref["run_id"])

    run_id = asyncio.run(run())
    nbformat.write(nb, path)  # what the frontend saved
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert_interrupted_by_restart(saved, run_id, slow_server)
    done = subprocess.run(
        [JUPYTER, "hermes", "recover", str(path), "--state-dir", str(slow_server.state_dir)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert nbformat.read(path, as_version=4) == saved  # nothing left to recover


def test_headless_kernel_restart_saves_the_partial_and_the_marker(slow_server: ServerProcess, tmp_path: Path) -> None:
    """nbclient's own kernel (the server never sees it restart), restarted from another task mid-run: the
    kernel reports it, and the notebook nbclient saves holds the partial and the marker."""
    nb = hermes_notebook("count to 2000")

    async def run() -> str:
        async with own_kernel(nb, slow_server) as client:
            await client.async_execute_cell(nb.cells[0], 0)
            task = asyncio.ensure_future(client.async_execute_cell(nb.cells[1], 1))
            ref = await wait_for_seq(client, 1, 20)
            await asyncio.gather(client.km.restart_kernel(), wait_for_status(client, 1))
            await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 30)
            return str(ref["run_id"])

    run_id = asyncio.run(run())
    path = tmp_path / "headless.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert_interrupted_by_restart(saved, run_id, slow_server)
    assert "Traceback" not in json.dumps(saved.cells[1].outputs)


def test_kernel_interrupt_cancels_the_run_without_a_traceback(slow_server: ServerProcess) -> None:
    """■ mid-run: the run is cancelled on the server; the cell keeps the partial text and the cancel note only."""
    nb = hermes_notebook("count to 2000")
    replies: dict[int, dict[str, Any]] = {}

    def on_cell_executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        replies[cell_index] = execute_reply["content"]

    async def run() -> str:
        async with own_kernel(nb, slow_server, on_cell_executed=on_cell_executed) as client:
            await client.async_execute_cell(nb.cells[0], 0)
            task = asyncio.ensure_future(client.async_execute_cell(nb.cells[1], 1))
            ref = await wait_for_seq(client, 1, 10)
            await client.km.interrupt_kernel()
            await task
            return str(ref["run_id"])

    run_id = asyncio.run(run())
    assert slow_server.api("GET", f"runs/{run_id}")["status"] == "cancelled"
    outputs = nb.cells[1].outputs
    assert [o["output_type"] for o in outputs] == ["display_data"]  # no error output, no stream
    saved = json.dumps(outputs)
    assert "Traceback" not in saved and "KeyboardInterrupt" not in saved
    data = hermes_outputs(nb.cells[1])[-1]["data"]
    assert data[RUN_MIME]["status"] == "cancelled"
    assert data["text/markdown"].startswith("1 2 3")
    assert "**Task cancelled.**" in data["text/markdown"]
    assert WIDGET_MIME not in data
    # The cell still counts as interrupted (ipykernel then drops the cells queued after it, as after any ■).
    assert replies[1]["status"] == "error" and replies[1]["ename"] == "RunStopped"


def test_widget_update_rate_is_bounded_and_no_token_is_lost(fast_server: ServerProcess) -> None:
    n = 20000
    nb = hermes_notebook(f"count to {n}")

    async def run() -> tuple[list[float], float]:
        async with own_kernel(nb, fast_server) as client:
            await client.async_execute_cell(nb.cells[0], 0)
            start = asyncio.get_running_loop().time()
            await client.async_execute_cell(nb.cells[1], 1)
            return client.comm_times, asyncio.get_running_loop().time() - start

    comm_times, elapsed = asyncio.run(run())
    data = hermes_outputs(nb.cells[1])[-1]["data"]
    assert data["text/markdown"].startswith(count_text(n) + "\n")
    assert data[RUN_MIME] == {**data[RUN_MIME], "status": "completed", "seq": n + 2}
    assert comm_times, "the live widget sent no update"
    # The throttle allows 10 state updates a second; in any one-second window there are at most 20 messages.
    for i, t in enumerate(comm_times):
        window = [u for u in comm_times[i:] if u - t < 1.0]
        assert len(window) <= 20, f"{len(window)} comm messages within one second"
    assert len(comm_times) <= 20 * (elapsed + 1)


@pytest.mark.parametrize("prompt", ["use a tool"])
def test_tool_card_in_saved_outputs(fast_server: ServerProcess, prompt: str) -> None:
    nb = hermes_notebook(prompt)

    async def run() -> None:
        async with own_kernel(nb, fast_server) as client:
            await execute_all(client)

    asyncio.run(run())
    data = hermes_outputs(nb.cells[1])[-1]["data"]
    md = data["text/markdown"]
    assert "**terminal**" in md and "data.csv" in md and "<summary>Reasoning</summary>" in md
    assert data[RUN_MIME]["status"] == "completed"


def test_a_server_started_kernel_holds_only_the_kernel_token(fast_server: ServerProcess) -> None:
    """The kernel's environment has no server token; its token reaches hermes routes, not the Jupyter API."""
    probe = "import json, os\nprint(json.dumps(dict(os.environ)))"
    nb = hermes_notebook("count to 2")
    nb.cells.append(nbformat.v4.new_code_cell(probe))

    async def run() -> None:
        async with server_kernel(nb, fast_server, "token.ipynb") as (client, _):
            await execute_all(client)

    asyncio.run(run())
    assert hermes_outputs(nb.cells[1])[-1]["data"][RUN_MIME]["status"] == "completed"  # %%hermes found its server
    env = json.loads(nb.cells[2]["outputs"][0]["text"])
    assert not [name for name, value in env.items() if fast_server.token in value]
    token = env["HERMES_JUPYTER_SERVER_TOKEN"]
    assert token.startswith("hjk_")
    with httpx.Client(base_url=fast_server.url, headers={"Authorization": f"token {token}"}, timeout=30) as http:
        assert http.get("hermes/api/sessions").status_code == 200
        for route in ("api/contents", "api/kernels", "api/sessions"):
            assert http.get(route).status_code in (401, 403), route
