"""scripts/bootstrap.sh installs only when something the install reads changed (the stamp in .venv).

The venv's python is a stand-in that records its calls, so no real pip runs; its pip "installs"
uv as a stand-in too, which records its calls in the same log. Only the script bootstrap.sh feeds
it on stdin (reading pyproject.toml) runs in a real Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INPUTS = ["pyproject.toml", "install.json", "jupyter-config", "labextension/package.json",
          "labextension/package-lock.json", "labextension/tsconfig.json", "labextension/src", "labextension/style", "labextension/schema"]
FAKE_PYTHON = """#!/bin/sh
venv="$(cd "$(dirname "$0")/.." && pwd)"
[ "$1" = "-" ] && exec "@REAL_PYTHON@" "$@"
echo "$*" >>"$venv/calls.log"
case "$*" in
  *"-m pip install"*" uv")
    cat >"$venv/bin/uv" <<'UV'
#!/bin/sh
venv="$(cd "$(dirname "$0")/.." && pwd)"
echo "uv $*" >>"$venv/calls.log"
mkdir -p "$venv/share/jupyter/labextensions/hermes-jupyter"
echo '{}' >"$venv/share/jupyter/labextensions/hermes-jupyter/package.json"
shift 2
case " $* " in *" pip "*) touch "$venv/bin/pip" && chmod +x "$venv/bin/pip" ;; esac
UV
    chmod +x "$venv/bin/uv" ;;
  *"-m pip install"*)
    mkdir -p "$venv/share/jupyter/labextensions/hermes-jupyter"
    echo '{}' >"$venv/share/jupyter/labextensions/hermes-jupyter/package.json"
    touch "$venv/bin/pip" && chmod +x "$venv/bin/pip" ;;  # pip installs into a venv that has pip
esac
""".replace("@REAL_PYTHON@", sys.executable)


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
    (root / "hermes_jupyter" / "labextension").mkdir(parents=True)  # built already, as after a first install
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return root


def pip_installs(root: Path, *extras: str, env: dict[str, str] | None = None) -> int:
    """Run bootstrap.sh once; how many pip installs it made."""
    log = root / ".venv" / "calls.log"
    before = _installs(log)
    done = subprocess.run(["bash", "scripts/bootstrap.sh", *extras], cwd=root, capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return _installs(log) - before


def _installs(log: Path) -> int:
    """Installs of the package or its dependencies, by pip or uv; fetching uv itself is not one."""
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for line in lines if "pip install" in line and not line.endswith(" uv"))


def test_dependencies_are_installed_with_uv_once_pip_has_fetched_it(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    calls = (root / ".venv" / "calls.log").read_text().splitlines()
    assert [c for c in calls if "pip install" in c][-1].startswith("uv pip install")


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


def test_every_install_gives_the_venv_its_own_pip(tmp_path: Path) -> None:
    """`%pip install` in a cell and `pip install` in a terminal need pip inside the venv, which is made without it."""
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    install = [c for c in (root / ".venv" / "calls.log").read_text().splitlines() if "pip install" in c][-1]
    assert install.startswith("uv pip install") and install.split()[-1] == "pip"
    assert pip_installs(root) == 0
    (root / ".venv" / "bin" / "pip").unlink()  # a venv made before the venvs had pip
    assert pip_installs(root) == 1
    assert pip_installs(root) == 0


def test_a_test_install_serves_a_demo_launch_and_not_the_other_way(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root, "test") == 1
    assert pip_installs(root, "demo") == 0  # `test` includes `demo` (pyproject.toml)
    assert pip_installs(root) == 0
    other = checkout(tmp_path / "other")
    assert pip_installs(other, "demo") == 1
    assert pip_installs(other, "demo") == 0
    assert pip_installs(other, "test") == 1


def test_python_sources_need_no_reinstall(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    (root / "hermes_jupyter" / "cli.py").write_text("# edited\n", encoding="utf-8")  # the install is editable
    assert pip_installs(root) == 0


FAKE_NPM = """#!/bin/sh
echo "npm $*" >>"$NPM_LOG"
case "$*" in run*) mkdir -p ../hermes_jupyter/labextension/static ;; esac
"""


def test_a_fresh_checkout_builds_the_labextension_while_pip_fetches_the_dependencies(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    shutil.rmtree(root / "hermes_jupyter")  # a fresh clone: nothing built yet
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    npm_log = tmp_path / "npm.log"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NPM_LOG": str(npm_log)}
    assert pip_installs(root, env=env) == 2  # the dependencies, then the package without building anything
    calls = (root / ".venv" / "calls.log").read_text().splitlines()
    installs = [c for c in calls if "pip install" in c and not c.endswith(" uv")]
    assert installs[-1].endswith("--no-build-isolation -e .")
    assert npm_log.read_text().splitlines() == ["npm ci --no-audit --no-fund", "npm run build"]  # from the lock file
    assert pip_installs(root, env=env) == 0


def test_the_dependencies_of_an_extra_that_includes_another_are_fetched_not_the_package_itself(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    shutil.rmtree(root / "hermes_jupyter")  # a fresh clone: the dependencies are installed first, by name
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NPM_LOG": str(tmp_path / "npm.log")}
    assert pip_installs(root, "test", env=env) == 2
    calls = (root / ".venv" / "calls.log").read_text().splitlines()
    dependencies = [c for c in calls if "pip install" in c and not c.endswith(" uv")][0].split()
    assert {"pandas>=2", "matplotlib>=3.7", "notebook>=7.2", "pytest>=8", "pip"} <= set(dependencies)
    assert not [d for d in dependencies if d.startswith("hermes-jupyter")]  # `test` names `hermes-jupyter[demo]`


SYSTEM_PYTHON = """#!/bin/sh
# The machine's python: makes the stand-in venv, and its pip can install into another python.
echo "$*" >>"$SYSTEM_LOG"
case "$*" in
  "-m venv"*)
    mkdir -p .venv/bin && cp "$FAKE_VENV_PYTHON" .venv/bin/python && chmod +x .venv/bin/python ;;
  "-m pip --python .venv/bin/python install"*" uv")
    [ -z "$NO_SYSTEM_PIP" ] || exit 1
    .venv/bin/python -m pip install uv ;;
esac
"""


def fresh_machine(tmp_path: Path, *, system_pip: bool) -> tuple[Path, dict[str, str], Path]:
    """A checkout without .venv, and the machine's python as a stand-in that logs its calls."""
    root = checkout(tmp_path)
    shutil.rmtree(root / ".venv")
    fake_venv_python = tmp_path / "venv-python"
    fake_venv_python.write_text(FAKE_PYTHON)
    system = tmp_path / "python3.11"
    system.write_text(SYSTEM_PYTHON)
    system.chmod(0o755)
    log = tmp_path / "system.log"
    env = {**os.environ, "PYTHON": str(system), "SYSTEM_LOG": str(log), "FAKE_VENV_PYTHON": str(fake_venv_python)}
    if not system_pip:
        env["NO_SYSTEM_PIP"] = "1"
    return root, env, log


def test_a_new_venv_is_made_without_pip_and_gets_uv_from_the_systems_pip(tmp_path: Path) -> None:
    root, env, log = fresh_machine(tmp_path, system_pip=True)
    assert pip_installs(root, env=env) == 1
    assert log.read_text().splitlines() == [
        "-m venv --without-pip .venv",
        "-m pip --python .venv/bin/python install --disable-pip-version-check -q uv",
    ]
    calls = (root / ".venv" / "calls.log").read_text().splitlines()
    assert [c for c in calls if "pip install" in c][-1].startswith("uv pip install")


def test_without_the_systems_pip_the_venv_gets_its_own_pip(tmp_path: Path) -> None:
    root, env, log = fresh_machine(tmp_path, system_pip=False)
    assert pip_installs(root, env=env) == 1
    assert log.read_text().splitlines()[-1] == "-m venv .venv"  # the usual venv, with pip
    calls = (root / ".venv" / "calls.log").read_text().splitlines()
    assert "-m pip install --disable-pip-version-check -q uv" in calls  # uv from the venv's own pip


def test_a_style_only_change_marks_the_labextension_sources_for_a_rebuild(tmp_path: Path) -> None:
    """The editable build compares only labextension/src with its output: a change to the styles alone
    must still rebuild, so bootstrap marks src as newer than the last build."""
    root = checkout(tmp_path)
    assert pip_installs(root) == 1
    index = root / "labextension" / "src" / "index.ts"
    os.utime(index, (1_000_000, 1_000_000))
    assert pip_installs(root) == 0
    assert index.stat().st_mtime == 1_000_000  # nothing changed: nothing marked
    (root / "labextension" / "style" / "base.css").write_text("/* changed */\n", encoding="utf-8")
    assert pip_installs(root) == 1
    assert index.stat().st_mtime > 1_000_000
