"""A recovered cell is the same bytes whichever way it is recovered: JupyterLab (which writes
`GET runs/{id}/bundle` into the open notebook), `POST notebooks/recover`, `jupyter hermes recover`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from .server_process import ServerProcess, server_fixture

RUN_MIME = "application/vnd.hermes.run+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
JUPYTER = str(Path(sys.executable).parent / "jupyter")

server = server_fixture(token_delay=0.005)


def wait_status(server: ServerProcess, run_id: str, status: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while (info := server.api("GET", f"runs/{run_id}"))["status"] != status:
        assert time.monotonic() < deadline, info
        time.sleep(0.05)
    return info


def saved_mid_run(server: ServerProcess, name: str, run_id: str, session_id: str) -> Path:
    """A notebook saved while its `%%hermes` cell streamed (status running, the widget view in the bundle)."""
    output = new_output("display_data", data={
        RUN_MIME: {"run_id": run_id, "session_id": session_id, "seq": 2, "status": "running"},
        "text/markdown": "1 2", "text/plain": "1 2",
        WIDGET_MIME: {"model_id": "gone", "version_major": 2, "version_minor": 0},
    })
    nb = new_notebook(cells=[new_code_cell("%%hermes\ncount to 40", outputs=[output], execution_count=1)])
    path = server.root_dir / name
    nbformat.write(nb, path)
    return path


def recovered_output(path: Path) -> str:
    (output,) = nbformat.read(path, as_version=4).cells[0].outputs
    return json.dumps(output, sort_keys=True)


def test_a_recovered_cell_is_identical_from_the_cli_the_api_and_the_bundle_jupyterlab_writes(server: ServerProcess) -> None:
    kernel = server.jupyter("POST", "api/kernels", {"name": "python3"}).json()
    session_id = server.new_session()
    run_id = server.start_run(session_id, "count to 100000", kernel_id=kernel["id"], notebook_path="x.ipynb")
    deadline = time.monotonic() + 30
    while server.api("GET", f"runs/{run_id}")["last_seq"] < 20:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert server.jupyter("DELETE", f"api/kernels/{kernel['id']}").status_code == 204
    wait_status(server, run_id, "interrupted")  # settled without a terminal row of the agent's own

    by_api = saved_mid_run(server, "by-api.ipynb", run_id, session_id)
    by_cli = saved_mid_run(server, "by-cli.ipynb", run_id, session_id)
    answer = server.api("POST", "notebooks/recover", json={"path": by_api.name})
    assert answer["cells_recovered"] == 1
    subprocess.run([JUPYTER, "hermes", "recover", str(by_cli), "--state-dir", str(server.state_dir)],
                   check=True, capture_output=True, timeout=60)
    bundle = server.api("GET", f"runs/{run_id}/bundle")

    assert recovered_output(by_api) == recovered_output(by_cli)
    (output,) = nbformat.read(by_api, as_version=4).cells[0].outputs
    assert dict(output["data"]) == bundle  # what the labextension writes into the open notebook
    assert bundle[RUN_MIME]["status"] == "interrupted" and WIDGET_MIME not in bundle
    assert bundle["text/markdown"].startswith("1 2 3")


def test_the_cli_defers_to_the_running_server_that_serves_the_notebook(server: ServerProcess) -> None:
    # A running server may hold the notebook in a collaboration room or a browser: the shell asks it
    # (found in its runtime dir) instead of rewriting the file under it, and says what it answered.
    session_id = server.new_session()
    run_id = server.start_run(session_id, "count to 5")
    wait_status(server, run_id, "completed")
    path = saved_mid_run(server, "deferred.ipynb", run_id, session_id)
    env = {**server.kernel_env(), "JUPYTER_RUNTIME_DIR": str(server.runtime_dir)}
    kernel_session = server.jupyter("POST", "api/sessions", {
        "path": path.name, "type": "notebook", "kernel": {"name": "python3"}}).json()
    before = path.read_bytes()
    refused = subprocess.run([JUPYTER, "hermes", "recover", str(path)], capture_output=True, text=True,
                             timeout=60, env=env)
    assert refused.returncode == 1 and "left untouched" in refused.stderr, refused.stderr
    assert "jupyter hermes recover --force" in refused.stderr, refused.stderr  # the refusal names the way out
    assert path.read_bytes() == before

    forced = path.with_name("forced.ipynb")
    forced.write_bytes(before)
    done = subprocess.run([sys.executable, "-m", "hermes_jupyter.cli", "recover", str(path), "--force"],
                          capture_output=True, text=True, timeout=60, env=env, check=True)
    assert "1 cell recovered by the running Jupyter server" in done.stdout, done.stdout
    (output,) = nbformat.read(path, as_version=4).cells[0].outputs
    assert dict(output["data"]) == server.api("GET", f"runs/{run_id}/bundle")

    assert server.jupyter("DELETE", f"api/sessions/{kernel_session['id']}").status_code == 204
    done = subprocess.run([JUPYTER, "hermes", "recover", str(forced)], capture_output=True, text=True,
                          timeout=60, env=env, check=True)
    assert "1 cell recovered by the running Jupyter server" in done.stdout, done.stdout
    (output,) = nbformat.read(forced, as_version=4).cells[0].outputs
    assert dict(output["data"]) == server.api("GET", f"runs/{run_id}/bundle")
