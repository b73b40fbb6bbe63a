"""binder/demo.ipynb, run top to bottom as written, on a server started the way scripts/run.sh starts one.

The light twin of test_binder (no fresh build): the current install, the demo
agent, a kernel the server started for the notebook, and the venv first on PATH
as run.sh puts it, so the shell cell's `jupyter` is this install's.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
import os
import re
import shutil
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any, Iterator

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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
    # The agent scene in the session's default mode (Propose): its cells are proposals and nothing runs.
    analysis = next(c for c in code if _source(c) == "%%hermes\nanalyse the sales data")
    assert "nothing runs in this mode" in hermes_outputs(analysis)[-1]["data"]["text/markdown"]
    assert len(sessions) == 1  # one notebook, one session
    # The shell command reaches this install's `jupyter hermes` and lists the session the cells used.
    shell = next(c for c in code if _source(c).startswith("!jupyter"))
    assert "not found" not in _text(shell) and sessions.pop() in _text(shell)


def test_use_the_notebook_describes_the_demo_dataframe_in_a_real_kernel(server: JupyterServerProcess) -> None:
    """The magic binds its session to the notebook and the kernel; the demo agent's notebook tools
    then read the `sales` DataFrame the cell above defined, in the kernel itself."""
    pytest.importorskip("pandas")
    nb = nbformat.read(DEMO, as_version=4)
    keep = [c for c in nb.cells if c.cell_type == "code" and (_source(c).startswith("%load_ext") or _source(c) == (
        "%%hermes\nuse the notebook") or ("sales" in _source(c) and not _source(c).startswith("%%")))]
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


def _extras_installed_by(text: str, pattern: str) -> set[str]:
    found = re.search(pattern, text)
    assert found, pattern
    return {e.strip() for e in found.group(1).split(",") if e.strip()}


def _distributions_of(extras: set[str]) -> set[str]:
    """The distributions pyproject.toml names for the package with these extras (and those they include)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names, todo, seen = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}, list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in map(Requirement, project["optional-dependencies"][extra]):
            if canonicalize_name(req.name) == canonicalize_name(project["name"]):
                todo += list(req.extras)
            else:
                names.add(canonicalize_name(req.name))
    return names


def _imported_modules(nb: Any) -> set[str]:
    modules = set()
    for cell in (c for c in nb.cells if c.cell_type == "code" and not _source(c).startswith("%%")):
        code = "\n".join(ln for ln in _source(cell).splitlines() if not ln.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return modules


def test_what_run_sh_and_binder_install_is_one_list_that_covers_the_demos_imports() -> None:
    """A fresh clone's `scripts/run.sh` venv holds what the demo imports (its Run All once stopped at
    `import pandas`), the same extras as the Binder image, and Notebook 7, which the demo names."""
    run_extras = _extras_installed_by((REPO / "scripts" / "run.sh").read_text(), r"(?m)^bash scripts/bootstrap\.sh ([\w,]+)")
    binder_extras = _extras_installed_by((REPO / "binder" / "requirements.txt").read_text(), r"(?m)^\.\[([\w,]+)\]$")
    assert run_extras == binder_extras
    installed = _distributions_of(run_extras)
    assert {"pandas", "matplotlib", "notebook"} <= installed
    by_module = importlib.metadata.packages_distributions()
    demo_imports = _imported_modules(nbformat.read(DEMO, as_version=4))
    assert "pandas" in demo_imports
    for module in demo_imports - set(sys.stdlib_module_names):
        assert {canonicalize_name(d) for d in by_module.get(module, [])} & installed, module


def _tiny_wheel(dest: Path) -> Path:
    """A pure-Python wheel pip can install with no index and nothing to build."""
    wheel = dest / "hermes_tiny_probe-0.1-py3-none-any.whl"
    info = "hermes_tiny_probe-0.1.dist-info"
    files = {
        "hermes_tiny_probe/__init__.py": "VALUE = 'installed by %pip'\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: hermes-tiny-probe\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hermes-jupyter-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))
    return wheel


def test_pip_in_a_cell_and_in_a_shell_reach_the_kernels_own_environment(
    server: JupyterServerProcess, tmp_path: Path
) -> None:
    """`%pip install` runs the kernel's pip, and `!pip` (PATH as run.sh sets it) the venv's: both need pip in the venv.
    The probe goes to a --target directory, so the test venv itself is left as it was."""
    wheel, target = _tiny_wheel(tmp_path), tmp_path / "target"
    nb = new_notebook(cells=[
        new_code_cell(f"%pip install --no-index --no-deps --target {target} {wheel}"),
        new_code_cell(f"import sys\nsys.path.insert(0, {str(target)!r})\nimport hermes_tiny_probe\n"
                      "print(hermes_tiny_probe.VALUE)"),
        new_code_cell("!pip --version"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, server.root_dir / "pip.ipynb")

    async def run() -> None:
        async with server_kernel(nb, server, "pip.ipynb") as (client, _):
            await execute_all(client)

    asyncio.run(run())
    install, probe, shell = nb.cells
    assert not [o for c in nb.cells for o in c.outputs if o["output_type"] == "error"], _text(install)
    assert "installed by %pip" in _text(probe), _text(install)
    assert f"from {sys.prefix}{os.sep}" in _text(shell), _text(shell)  # the venv's pip, not another Python's
