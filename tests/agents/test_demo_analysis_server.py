"""`analyse the sales data` on a real server and a real kernel: what lands in the notebook file, per mode.

No browser holds the notebook, so every change and output goes to the file (docs/notebook-edits.md).
The server token acts as a person here (tests/server_process.py), so it sets the autonomy and answers
the approvals as the sidebar would.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_jupyter.agents.demo_analysis import FIXED, PLOT, PLOT_TITLE

from ..notebook.kernels import execute_all, hermes_outputs, server_kernel
from ..server_process import JupyterServerProcess

REPO = Path(__file__).resolve().parents[2]
PROMPT = "analyse the sales data"
FIRST = "# Sales, by region"
TOOLS = ["insert_cell", "run_cell", "edit_cell", "run_cell", "insert_cell", "run_cell"]


@contextmanager
def demo_server(folder: Path) -> Iterator[JupyterServerProcess]:
    """A real server in `folder` whose sessions may run in Agent without asking, sales.csv beside its notebooks
    (the demo's data); skips without pandas and matplotlib, which the demo's cells import."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    process = JupyterServerProcess(folder, token_delay=0.0,
                                   extra_args=["--HermesJupyter.max_autonomy=agent_auto"]).start()
    shutil.copy(REPO / "binder" / "sales.csv", process.notebooks / "sales.csv")
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    with demo_server(tmp_path_factory.mktemp("demo-analysis")) as process:
        yield process


def bound_session(server: JupyterServerProcess, name: str, autonomy: str) -> tuple[str, str]:
    """A notebook of one cell beside sales.csv, its kernel (in its folder), a session bound to both at `autonomy`."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FIRST)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, server.notebooks / name)
    jupyter = server.jupyter("POST", "api/sessions", {"path": name, "type": "notebook", "name": name,
                                                      "kernel": {"name": "python3"}})  # its kernel runs beside it
    assert jupyter.status_code == 201, jupyter.text
    kernel_id = str(jupyter.json()["kernel"]["id"])
    session_id = server.new_session(notebook_path=name, kernel_id=kernel_id)
    answer = server.request("PATCH", f"sessions/{session_id}", {"autonomy": autonomy})
    assert answer.status_code == 200, answer.text
    return session_id, kernel_id


def run_scene(server: JupyterServerProcess, name: str, autonomy: str, choice: str | None = None,
              timeout_s: float = 120) -> tuple[str, list[dict[str, Any]]]:
    """Run the prompt; answer every pending approval with `choice`; the run's journal once it ended."""
    session_id, kernel_id = bound_session(server, name, autonomy)
    run_id = server.start_run(session_id, PROMPT, kernel_id=kernel_id, notebook_path=name)
    answered: set[str] = set()
    deadline = time.monotonic() + timeout_s
    while True:
        rows = server.get(f"runs/{run_id}/events", after_seq=0).json()["events"]
        if rows and rows[-1]["terminal"]:
            return run_id, rows
        for row in rows:
            payload = row["payload"]
            if row["event"] == "approval" and payload.get("status") == "pending" and choice is not None:
                if payload["approval_id"] not in answered:
                    answered.add(payload["approval_id"])
                    reply = server.post(f"runs/{run_id}/approvals/{payload['approval_id']}", {"choice": choice})
                    assert reply.status_code == 200, reply.text
        assert time.monotonic() < deadline, rows
        time.sleep(0.1)


def tools(rows: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    return [(r["payload"]["name"], r["payload"]["is_error"]) for r in rows if r["event"] == "tool_complete"]


def reply(rows: list[dict[str, Any]]) -> str:
    return "".join(r["payload"]["text"] for r in rows if r["event"] == "token")


def source(cell: Any) -> str:
    return "".join(cell.source) if isinstance(cell.source, list) else str(cell.source)


def test_agent_mode_inserts_runs_fixes_and_plots_in_the_file_after_approvals(server: JupyterServerProcess) -> None:
    name = "agent.ipynb"
    run_id, rows = run_scene(server, name, "agent", choice="allow_once")
    assert [name for name, _ in tools(rows)] == TOOLS, [(r["event"], r["payload"]) for r in rows
                                                        if r["event"] != "token"]
    # Only the first run may be an error result (it raised): every other call was applied.
    assert not [n for i, (n, is_error) in enumerate(tools(rows)) if is_error and i != 1], tools(rows)
    approvals = [r["payload"] for r in rows if r["event"] == "approval" and r["payload"]["status"] == "pending"]
    assert len(approvals) == 3  # one per run_cell: agent mode asks before each run
    assert "allow_turn" in approvals[0]["choices"]
    changes = [r["payload"] for r in rows if r["event"] == "cell_change"]
    assert [c["action"] for c in changes] == ["insert", "run", "edit", "run", "insert", "run"]
    assert all(c["applied"] for c in changes), changes
    text = reply(rows)
    assert "KeyError" in text and text.endswith(
        f"The bar chart “{PLOT_TITLE}” is in the cell below the fixed one, with the regions by revenue.")

    nb = nbformat.read(server.notebooks / name, as_version=4)
    assert [source(c) for c in nb.cells] == [FIRST, FIXED, PLOT]
    fixed, plot = nb.cells[1], nb.cells[2]
    assert fixed.execution_count is not None and plot.execution_count is not None
    assert not [o for c in nb.cells for o in c.outputs if o["output_type"] == "error"]  # the error was replaced
    assert "north" in str(fixed.outputs[0]["data"]["text/plain"])
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
    for cell in (fixed, plot):
        hermes = cell.metadata["hermes"]
        assert hermes["run_id"] == run_id and hermes["tool_call_id"]
        assert hermes["source_sha256"] == hashlib.sha256(source(cell).encode()).hexdigest()
        assert hermes["approved_by"], hermes  # the runs were approved by a person


def test_allow_for_this_turn_asks_once(server: JupyterServerProcess) -> None:
    _, rows = run_scene(server, "turn.ipynb", "agent", choice="allow_turn")
    pending = [r for r in rows if r["event"] == "approval" and r["payload"]["status"] == "pending"]
    assert len(pending) == 1 and [a for a, _ in tools(rows)] == TOOLS


def test_agent_auto_runs_without_asking(server: JupyterServerProcess) -> None:
    run_id, rows = run_scene(server, "auto.ipynb", "agent_auto")
    assert not [r for r in rows if r["event"] == "approval"] and [a for a, _ in tools(rows)] == TOOLS
    nb = nbformat.read(server.notebooks / "auto.ipynb", as_version=4)
    assert [source(c) for c in nb.cells] == [FIRST, FIXED, PLOT]
    # The run's cell output names the autonomy it had, also after the server stored the turn (docs/autonomy.md).
    assert rows[-1]["payload"]["autonomy"] == "agent_auto"
    bundle = server.get(f"runs/{run_id}/bundle").json()
    assert bundle["application/vnd.hermes.run+json"]["autonomy"] == "agent_auto"


def test_propose_mode_changes_nothing_and_runs_nothing(server: JupyterServerProcess) -> None:
    name = "propose.ipynb"
    _, rows = run_scene(server, name, "propose")
    after = nbformat.read(server.notebooks / name, as_version=4)
    assert [source(c) for c in after.cells] == [FIRST] and after.cells[0].execution_count is None
    assert [r["payload"]["action"] for r in rows if r["event"] == "proposal"] != []
    assert not [r for r in rows if r["event"] == "approval"]
    assert not [r for r in rows if r["event"] == "cell_change" and r["payload"]["applied"]]
    assert "nothing runs" in reply(rows)


def test_ask_mode_says_it_could_not_add_a_cell(server: JupyterServerProcess) -> None:
    name = "ask.ipynb"
    _, rows = run_scene(server, name, "ask")
    assert [source(c) for c in nbformat.read(server.notebooks / name, as_version=4).cells] == [FIRST]
    assert "I could not add the cell" in reply(rows)


def test_from_a_hermes_cell_switched_to_agent_auto_the_cells_land_below_it(server: JupyterServerProcess) -> None:
    """The Binder way: run the cell (Propose: proposals), switch the session's mode, run it again. The agent's
    cells run beside the busy %%hermes cell (a kernel subshell) and land in the file: at the end here, since
    nbclient names no cell in its requests (JupyterLab does, and they land below the asking cell)."""
    name = "from_a_cell.ipynb"
    magic = "%%hermes\n" + PROMPT
    sources = ("%load_ext hermes_jupyter", magic, FIRST)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, server.notebooks / name)

    async def run() -> None:
        async with server_kernel(nb, server, name) as (client, _):
            await execute_all(client)
            (session,) = [s for s in server.get("sessions").json() if s.get("notebook_path") == name]
            answer = server.request("PATCH", f"sessions/{session['session_id']}", {"autonomy": "agent_auto"})
            assert answer.status_code == 200, answer.text
            await client.async_execute_cell(nb.cells[1], 1)

    asyncio.run(run())
    said = hermes_outputs(nb.cells[1])[-1]["data"]["text/markdown"]
    assert "The bar chart “Revenue by region” is in the cell below the fixed one" in said, said
    saved = nbformat.read(server.notebooks / name, as_version=4)
    assert [source(c) for c in saved.cells] == ["%load_ext hermes_jupyter", magic, FIRST, FIXED, PLOT]
    assert saved.cells[3].execution_count is not None
    assert any("image/png" in o.get("data", {}) for o in saved.cells[4].outputs)
