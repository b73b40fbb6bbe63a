"""binder/demo.ipynb run top to bottom in JupyterLab (Run All), as a Binder visitor does.

The nbclient twin is tests/binder/test_demo_notebook.py; this one adds what only a browser shows:
each `%%hermes` cell ends with exactly one hermes output, completed, in the page and in the saved
file, and no cell shows an error.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import nbformat
import pytest

from ..server_process import JupyterServerProcess
from .conftest import TOKEN_DELAY_S, lab_server_args
from .lab_page import RUN_OUTPUT

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "binder" / "demo.ipynb"
RUN_MIME = "application/vnd.hermes.run+json"

# Every code cell has run (an execution count) and the kernel is idle again.
_ALL_RAN_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') { return false; }
  const cells = Array.from(w.content.model.cells);
  return cells.filter(c => c.type === 'code').every(c => c.executionCount !== null);
}"""


def _source(cell: Any) -> str:
    return "".join(cell.source) if isinstance(cell.source, list) else str(cell.source)


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    """A server started the way scripts/run.sh starts one: the venv first on PATH for the shell cell."""
    root = tmp_path_factory.mktemp("demo-lab")
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    server = JupyterServerProcess(root, token_delay=TOKEN_DELAY_S, extra_args=lab_server_args(root), env={"PATH": path})
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_demo_notebook_runs_top_to_bottom_in_jupyterlab(
    make_lab: Callable[[JupyterServerProcess], Any], demo_server: JupyterServerProcess
) -> None:
    shutil.copy(DEMO, demo_server.notebooks / "demo.ipynb")
    lab = make_lab(demo_server)
    lab.open_notebook("demo.ipynb")
    lab.run_all_cells()
    lab.page.wait_for_function(_ALL_RAN_JS, timeout=240_000, polling=500)
    hermes_cells = [c for c in nbformat.read(DEMO, as_version=4).cells
                    if c.cell_type == "code" and _source(c).startswith("%%hermes")]
    outputs = lab.page.locator(RUN_OUTPUT)
    lab.page.wait_for_function(
        "([sel, n]) => { const o = document.querySelectorAll(sel);"
        " return o.length === n && Array.from(o).every(e => e.dataset.status === 'completed'); }",
        arg=[RUN_OUTPUT, len(hermes_cells)], timeout=60_000,
    )
    assert outputs.count() == len(hermes_cells)
    assert lab.page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert lab.page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count() == 0
    lab.screenshot("demo-notebook-run-all")

    lab.save_notebook()
    saved = nbformat.read(demo_server.notebooks / "demo.ipynb", as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert not [c for c in code if any(o["output_type"] == "error" for o in c.outputs)]
    for cell in (c for c in code if _source(c).startswith("%%hermes")):
        runs = [o for o in cell.outputs if RUN_MIME in o.get("data", {})]
        assert len(runs) == 1, (_source(cell), cell.outputs)  # one writer: one output per run
        assert runs[0]["data"][RUN_MIME]["status"] == "completed", _source(cell)
