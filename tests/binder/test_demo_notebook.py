"""binder/demo.ipynb, run top to bottom as written, on a server started the way scripts/run.sh starts one.

The light twin of test_binder (no fresh build): the current install, the demo
agent, a kernel the server started for the notebook, and the venv first on PATH
as run.sh puts it, so the shell cell's `jupyter` is this install's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import nbformat
import pytest

from hermes_jupyter.notebook.outputs import RUN_MIME, WIDGET_MIME

from ..notebook.kernels import execute_all, hermes_outputs, server_kernel
from ..server_process import JupyterServerProcess

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "binder" / "demo.ipynb"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join([venv_bin, os.environ.get("PATH", "")])
    process = JupyterServerProcess(tmp_path_factory.mktemp("demo"), token_delay=0.0, env={"PATH": path}).start()
    try:
        yield process
    finally:
        process.stop()


def _source(cell: Any) -> str:
    return "".join(cell.source) if isinstance(cell.source, list) else str(cell.source)


def _text(cell: Any) -> str:
    return "".join(str(o.get("text", "")) for o in cell.outputs if o.get("output_type") == "stream")


def test_the_demo_notebook_is_shipped_without_outputs() -> None:
    nb = nbformat.read(DEMO, as_version=4)
    nbformat.validate(nb)
    assert all(not c.outputs and c.execution_count is None for c in nb.cells if c.cell_type == "code")


def test_every_cell_of_the_demo_runs_top_to_bottom(server: JupyterServerProcess) -> None:
    shutil.copy(DEMO, server.root_dir / "demo.ipynb")
    nb = nbformat.read(server.root_dir / "demo.ipynb", as_version=4)

    async def run() -> None:
        async with server_kernel(nb, server, "demo.ipynb") as (client, _):
            await execute_all(client)

    asyncio.run(run())
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        assert not [o for o in cell.outputs if o["output_type"] == "error"], _source(cell)
        assert cell.outputs or _source(cell).startswith("%load_ext"), f"no output from {_source(cell)!r}"
    runs = [hermes_outputs(c)[-1]["data"] for c in code if _source(c).startswith("%%hermes")]
    assert runs and all(r[RUN_MIME]["status"] == "completed" and WIDGET_MIME not in r for r in runs)
    sessions = {r[RUN_MIME]["session_id"] for r in runs}
    assert len(sessions) == 1  # one notebook, one session
    # The shell command reaches this install's `jupyter hermes` and lists the session the cells used.
    shell = next(c for c in code if _source(c).startswith("!jupyter"))
    assert "not found" not in _text(shell) and sessions.pop() in _text(shell)


def test_use_the_notebook_describes_the_demo_dataframe_in_a_real_kernel(server: JupyterServerProcess) -> None:
    """The magic binds its session to the notebook and the kernel; the demo agent's notebook tools
    then read the `sales` DataFrame the cell above defined, in the kernel itself."""
    pytest.importorskip("pandas")
    nb = nbformat.read(DEMO, as_version=4)
    keep = [c for c in nb.cells if c.cell_type == "code" and (_source(c).startswith("%load_ext") or "sales" in _source(c)
                                                              or _source(c) == "%%hermes\nuse the notebook")]
    nb.cells = keep
    nbformat.write(nb, server.root_dir / "use_the_notebook.ipynb")

    async def run() -> None:
        async with server_kernel(nb, server, "use_the_notebook.ipynb") as (client, _):
            await execute_all(client)

    asyncio.run(run())
    bundle = hermes_outputs(nb.cells[-1])[-1]["data"]
    assert bundle[RUN_MIME]["status"] == "completed"
    markdown = bundle["text/markdown"]
    assert "`sales` is a DataFrame of 4 rows × 3 columns: `region`, `units`, `price`." in markdown, markdown
    run_id = bundle[RUN_MIME]["run_id"]
    rows = server.api("GET", f"runs/{run_id}/events", params={"after_seq": 0})["events"]
    assert [r["payload"]["name"] for r in rows if r["event"] == "tool_complete" and not r["payload"]["is_error"]] == [
        "list_variables", "inspect_variable"]
