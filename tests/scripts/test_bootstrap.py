"""scripts/bootstrap.sh installs only when something the install reads changed (the stamp in .venv).

The venv's python is a stand-in that records its calls, so no real pip runs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INPUTS = ["pyproject.toml", "install.json", "jupyter-config", "labextension/package.json",
          "labextension/package-lock.json", "labextension/tsconfig.json", "labextension/src", "labextension/style", "labextension/schema"]
FAKE_PYTHON = """#!/bin/sh
venv="$(cd "$(dirname "$0")/.." && pwd)"
echo "$*" >>"$venv/calls.log"
case "$*" in
  *"-m pip install"*)
    mkdir -p "$venv/share/jupyter/labextensions/hermes-jupyter"
    echo '{}' >"$venv/share/jupyter/labextensions/hermes-jupyter/package.json" ;;
esac
"""


def checkout(tmp_path: Path) -> Path:
    """The files bootstrap.sh reads, and a venv whose python only logs."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "bootstrap.sh", root / "scripts" / "bootstrap.sh")
    for name in INPUTS:
        src, dst = REPO / name, root / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("node_modules"))
        elif src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return root


def pip_installs(root: Path, *extras: str) -> int:
    """Run bootstrap.sh once; how many pip installs it made."""
    log = root / ".venv" / "calls.log"
    before = log.read_text().count("-m pip install") if log.exists() else 0
    done = subprocess.run(["bash", "scripts/bootstrap.sh", *extras], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return log.read_text().count("-m pip install") - before


def test_second_launch_skips_pip_until_the_checkout_changes(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    assert pip_installs(root) == 0  # nothing changed: no pip, no npm
    (root / "labextension" / "src" / "index.ts").write_text("// changed\n", encoding="utf-8")
    assert pip_installs(root) == 1  # the labextension must be rebuilt
    assert pip_installs(root) == 0
    with (root / "pyproject.toml").open("a") as f:
        f.write("\n# a new dependency\n")
    assert pip_installs(root) == 1


def test_extras_and_a_missing_labextension_reinstall(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    assert pip_installs(root, "test") == 1  # the test extras were never installed
    assert pip_installs(root) == 0  # a test install serves a plain launch
    assert pip_installs(root, "test") == 0
    shutil.rmtree(root / ".venv" / "share")
    assert pip_installs(root) == 1


def test_python_sources_need_no_reinstall(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    (root / "hermes_jupyter").mkdir()
    (root / "hermes_jupyter" / "cli.py").write_text("# edited\n", encoding="utf-8")  # the install is editable
    assert pip_installs(root) == 0
