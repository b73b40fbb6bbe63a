"""The Binder build, reproduced: install from binder/ in a fresh venv, run postBuild, start
JupyterLab from that venv and execute the demo notebook on the offline agent with nbclient.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .binder_server import BinderLab, execute_notebook
from .build import REPO, BinderEnv, build, default_cache, snapshot

DEMO = "binder/demo.ipynb"
# The demo paces its agent for people (0.02 s a token; one cell counts to 3000, to leave time to
# restart the kernel mid-run): about 80 s of waiting. The test keeps every cell, only faster.
TOKEN_DELAY_S = 0.001
RUN_MIME = "application/vnd.hermes.run+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def binder(tmp_path_factory: pytest.TempPathFactory) -> BinderEnv:
    repo_dir = snapshot(tmp_path_factory.mktemp("binder-repo"))
    return build(repo_dir, default_cache())


@pytest.fixture
def lab(binder: BinderEnv, tmp_path: Path) -> Iterator[BinderLab]:
    process = BinderLab(binder, tmp_path, extra_args=[f"--DemoAgent.token_delay={TOKEN_DELAY_S}"]).start()
    try:
        yield process
    finally:
        process.stop()


def _hermes_outputs(nb: Any) -> list[dict[str, Any]]:
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if RUN_MIME in o.get("data", {})]


def test_binder_files_are_what_repo2docker_reads() -> None:
    assert (REPO / "binder" / "runtime.txt").read_text().strip() == "python-3.11"  # requires-python >= 3.11
    lines = [ln.strip() for ln in (REPO / "binder" / "requirements.txt").read_text().splitlines()]
    assert ".[demo]" in lines  # the repository itself with the demo's extra, from the repository root where repo2docker runs pip
    assert (REPO / DEMO).exists(), "binder/demo.ipynb is what the Binder link opens"
    post_build = REPO / "binder" / "postBuild"
    assert post_build.stat().st_mode & 0o111 and post_build.read_text().startswith("#!/usr/bin/env bash")


@pytest.mark.timeout(900)  # a full build (fresh venv, npm) takes 80 to 110 s here; a cached one about 15 s
async def test_demo_notebook_runs_on_a_fresh_binder_build(binder: BinderEnv, lab: BinderLab) -> None:
    page = lab.get("lab")
    assert page.status_code == 200 and '"name": "hermes-jupyter"' in page.text  # the sidebar will load

    nb = await execute_notebook(lab, DEMO)

    outputs = _hermes_outputs(nb)
    assert outputs, "the demo notebook showed no hermes run"
    for output in outputs:
        run = output["data"][RUN_MIME]
        assert run["status"] == "completed", run
        assert output["data"]["text/markdown"].strip() and WIDGET_MIME not in output["data"]  # static, final
        status = lab.get(f"hermes/api/runs/{run['run_id']}").json()
        assert status["status"] == "completed" and status["last_seq"] == run["seq"]
    # Binder's defaults: the demo agent, state under ~/.hermes/jupyter.
    sessions = lab.get("hermes/api/sessions").json()
    assert {o["data"][RUN_MIME]["session_id"] for o in outputs} <= {s["session_id"] for s in sessions}
    assert {s.get("backend") for s in sessions} == {"demo"}
    assert list((lab.home / ".hermes" / "jupyter" / "sessions").glob("*.json"))
