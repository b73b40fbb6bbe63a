"""What scripts/run.sh gives the kernels and terminals of its JupyterLab: the venv first on PATH."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .test_bootstrap import checkout, pip_installs

REPO = Path(__file__).resolve().parents[2]


def test_a_terminal_shell_puts_the_venv_back_in_front_after_the_users_rc_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text('export PATH="/opt/other-python/bin:$PATH"\n')  # as pyenv or conda init do
    venv = tmp_path / "venv"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "HERMES_JUPYTER_VENV": str(venv), "TERM": "dumb"}
    done = subprocess.run(
        ["bash", "--rcfile", str(REPO / "scripts" / "venv_bashrc"), "-i", "-c", 'echo "$PATH|$VIRTUAL_ENV"'],
        env=env, capture_output=True, text=True, timeout=30,
    )
    path, virtual_env = done.stdout.strip().splitlines()[-1].split("|")
    entries = path.split(os.pathsep)
    assert entries[0] == str(venv / "bin") and "/opt/other-python/bin" in entries  # the user's set-up still ran
    assert virtual_env == str(venv)


def test_run_sh_starts_jupyter_lab_from_the_venv_with_it_first_on_path(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert pip_installs(root) == 1  # a plain install: run.sh wants the demo's extra on top
    for name in ("run.sh", "venv_bashrc"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    (root / "binder").mkdir()
    venv_bin = root / ".venv" / "bin"
    # A real python, except for the install's closing import check (the checkout copy holds no package).
    (venv_bin / "python").write_text(
        f'#!/bin/sh\ncase "$*" in *"import hermes_jupyter.server.app"*) exit 0 ;; esac\nexec "{sys.executable}" "$@"\n')
    report = tmp_path / "jupyter-lab.txt"
    (venv_bin / "jupyter").write_text(f'#!/bin/sh\n{{ pwd; echo "$PATH"; printf "%s\\n" "$@"; }} >"{report}"\n')
    (venv_bin / "jupyter").chmod(0o755)
    env = {**os.environ, "SHELL": "/bin/bash", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "scripts/run.sh", "--no-browser"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    installs = [c for c in (root / ".venv" / "calls.log").read_text().splitlines() if c.startswith("uv pip install")]
    assert installs[-1].endswith("-e .[demo] pip")  # pandas, matplotlib, Notebook 7 and pip (pyproject.toml)
    cwd, path, *args = report.read_text().splitlines()
    assert Path(cwd) == root / "binder" and path.split(os.pathsep)[0] == str(venv_bin)
    assert args[0] == "lab" and args[-2:] == ["--no-browser", "demo.ipynb"] and "--HermesJupyter.backend=demo" in args
    shell = next(a for a in args if a.startswith("--ServerApp.terminado_settings="))
    assert ast.literal_eval(shell.split("=", 1)[1]) == {
        "shell_command": ["/bin/bash", "--rcfile", str(root / "scripts" / "venv_bashrc"), "-i"]}
