"""Drive real IPython kernels with nbclient: kernels of our own, or kernels the test server started.

A kernel the server started is the real thing (it inherits the server's URL,
has the session's JPY_SESSION_NAME and a `kernel-<id>.json` connection file), and
only such a kernel's restart is seen by the server, so the restart test uses it.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from hermes_jupyter.notebook.outputs import RUN_MIME

from .server_process import ServerProcess


class CountingClient(NotebookClient):  # type: ignore[misc]
    """An nbclient that also records when each widget comm message arrived."""

    def __init__(self, nb: Any, **kwargs: Any) -> None:
        super().__init__(nb, **kwargs)
        self.comm_times: list[float] = []

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        if msg["msg_type"] == "comm_msg":
            self.comm_times.append(time.monotonic())
        return super().process_message(msg, cell, cell_index)


def hermes_notebook(*prompts: str) -> nbformat.NotebookNode:
    cells = [new_code_cell("%load_ext hermes_jupyter")]
    cells += [new_code_cell(f"%%hermes\n{p}") for p in prompts]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


async def run_setup(kc: Any, code: str) -> None:
    """Run `code` in a kernel through its (started) async client `kc`, which is stopped afterwards."""
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        reply = await kc.execute(code, reply=True, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()


def hermes_outputs(cell: Any) -> list[dict[str, Any]]:
    return [o for o in cell.get("outputs", []) if RUN_MIME in o.get("data", {})]


async def wait_for_seq(client: NotebookClient, cell_index: int, min_seq: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Wait until the cell's hermes output (refreshed by the display throttle) reaches `min_seq`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        outs = hermes_outputs(client.nb.cells[cell_index])
        if outs and outs[-1]["data"][RUN_MIME]["seq"] >= min_seq:
            return dict(outs[-1]["data"][RUN_MIME])
        await asyncio.sleep(0.05)
    raise TimeoutError(f"cell {cell_index} never reached seq {min_seq}")


@asynccontextmanager
async def started_kernel(km: AsyncKernelManager) -> AsyncIterator[AsyncKernelManager]:
    """`km`'s kernel, started and answering (the tools open their own clients), shut down afterwards."""
    await km.start_kernel()
    try:
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        kc.stop_channels()
        yield km
    finally:
        await km.shutdown_kernel(now=True)


@asynccontextmanager
async def own_kernel(nb: Any, server: ServerProcess, **kwargs: Any) -> AsyncIterator[CountingClient]:
    """A kernel started by the test (not by the server): it finds the server through HERMES_JUPYTER_URL."""
    client = CountingClient(nb, timeout=120, kernel_name="python3", allow_errors=True, store_widget_state=True, **kwargs)
    async with client.async_setup_kernel(env=server.kernel_env()):
        yield client


@asynccontextmanager
async def server_kernel(nb: Any, server: ServerProcess, path: str) -> AsyncIterator[tuple[CountingClient, str]]:
    """A kernel started by the server for notebook `path` (a Jupyter session), driven over its connection file."""
    with server.http() as http:
        response = http.post("api/sessions", json={"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}})
        response.raise_for_status()
        kernel_id = response.json()["kernel"]["id"]
    km = AsyncKernelManager(connection_file=str(server.runtime_dir / f"kernel-{kernel_id}.json"), owns_kernel=False)
    km.load_connection_file()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    client = CountingClient(nb, km=km, timeout=120, allow_errors=True, store_widget_state=True)
    client.kc = kc
    try:
        yield client, kernel_id
    finally:
        kc.stop_channels()
        with server.http() as http:
            http.delete(f"api/kernels/{kernel_id}")


async def execute_all(client: NotebookClient, start: int = 0) -> None:
    for index in range(start, len(client.nb.cells)):
        await client.async_execute_cell(client.nb.cells[index], index)
