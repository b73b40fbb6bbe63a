"""Repeat what repo2docker does with `binder/`, in a fresh venv instead of an image.

repo2docker copies the repository, installs `binder/requirements.txt` with pip from the
repository root, then runs `binder/postBuild` from there. We do the same over a snapshot of the
work tree (the files git would ship: tracked and untracked, minus .gitignore'd), so nothing
built in this checkout (node_modules, the built labextension, .venv) can help the build along.

A full build (fresh venv, npm install and build of the labextension, every dependency) takes
about a minute and a half; it is cached under ~/.cache/hermes-jupyter/binder, keyed by
everything the build reads except the Python sources. On a cache hit the package alone is
reinstalled from the snapshot (with the labextension of that full build, which the key
proves current) and postBuild runs again. HERMES_JUPYTER_BINDER_FRESH=1 forces a full build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FRESH_ENV = "HERMES_JUPYTER_BINDER_FRESH"
INSTALL_TIMEOUT_S = 900
# What the build reads besides the Python sources: a change here means a full build. Of pyproject.toml
# only the packaging tables count (a pytest or mypy setting changes nothing in the image).
KEY_FILES = ("binder/requirements.txt", "binder/runtime.txt", "binder/postBuild", "install.json")
KEY_PYPROJECT_TABLES = ("build-system", "project", "tool.hatch")
KEY_TREES = ("jupyter-config", "labextension/src", "labextension/style")
KEY_LABEXTENSION = ("labextension/package.json", "labextension/package-lock.json", "labextension/tsconfig.json")


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-jupyter" / "binder"


class BinderBuildError(RuntimeError):
    """A step repo2docker would run failed; the message carries its output."""


@dataclass
class BinderEnv:
    """The result: a venv as the image's, and the repository copy it was built from (the image's REPO_DIR)."""

    venv: Path
    repo_dir: Path
    fresh: bool
    build_s: float

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        """An environment with only this venv on the Python side, as in the image."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("JUPYTER", "HERMES_", "JPY_", "VIRTUAL_ENV", "PYTHON"))}
        return {**keep, "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(self.venv),
                **extra}


def snapshot(dest: Path) -> Path:
    """Copy the files git would ship into `dest` (the repository as repo2docker receives it)."""
    listing = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                             capture_output=True).stdout.decode()
    for rel in filter(None, listing.split("\0")):
        src = REPO / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def build_key(repo_dir: Path) -> str:
    digest = hashlib.sha256(sys.version.encode())
    pyproject = tomllib.loads((repo_dir / "pyproject.toml").read_text())
    for table in KEY_PYPROJECT_TABLES:
        value: object = pyproject
        for part in table.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        digest.update(json.dumps([table, value], sort_keys=True).encode())
    paths = [repo_dir / p for p in (*KEY_FILES, *KEY_LABEXTENSION)]
    for tree in KEY_TREES:
        paths.extend(sorted(p for p in (repo_dir / tree).rglob("*") if p.is_file()))
    for path in paths:
        digest.update(str(path.relative_to(repo_dir)).encode())
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
    return digest.hexdigest()[:16]


def _run(argv: list[str], *, cwd: Path, env: dict[str, str], what: str, log: Path) -> None:
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(argv)}\n".encode())
        out.flush()
        # A session of its own: nothing the build tools signal to their process group reaches pytest,
        # and a step that hangs is ended with everything it started (npm, node).
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = -signal.SIGKILL
    if code != 0:
        raise BinderBuildError(f"{what} failed ({code}):\n{log.read_text(errors='replace')[-4000:]}")


def _runtime_python(repo_dir: Path) -> str:
    """The interpreter binder/runtime.txt asks for (`python-3.11` → python3.11)."""
    runtime = (repo_dir / "binder" / "runtime.txt").read_text().strip()
    version = runtime.removeprefix("python-")
    found = shutil.which(f"python{version}")
    if found is None:
        raise BinderBuildError(f"binder/runtime.txt asks for {runtime}, and python{version} is not on PATH")
    return found


def build(repo_dir: Path, cache: Path) -> BinderEnv:
    """Build (or reuse) the Binder venv for the snapshot at `repo_dir`."""
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        key = build_key(repo_dir)
        venv = cache / f"venv-{key}"
        stamp = venv / ".binder-build"
        fresh = os.environ.get(FRESH_ENV) == "1" or not stamp.exists()
        log = cache / f"build-{key}.log"
        log.write_text("")
        if fresh:
            _full_build(repo_dir, venv, log)
            for old in cache.glob("venv-*"):
                if old != venv:
                    shutil.rmtree(old, ignore_errors=True)
            for old_log in cache.glob("build-*.log"):
                if old_log != log:
                    old_log.unlink(missing_ok=True)
        else:
            _reinstall_package(repo_dir, venv, log)
        env = BinderEnv(venv, repo_dir, fresh, 0.0)
        _run(["./binder/postBuild"], cwd=repo_dir, env=env.env(), what="binder/postBuild", log=log)
        stamp.write_text(key + "\n")
    env.build_s = time.monotonic() - started
    return env


def _full_build(repo_dir: Path, venv: Path, log: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    _run([_runtime_python(repo_dir), "-m", "venv", str(venv)], cwd=repo_dir, env=dict(os.environ),
         what="python -m venv", log=log)
    env = BinderEnv(venv, repo_dir, True, 0.0).env()
    _run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-r", "binder/requirements.txt"],
         cwd=repo_dir, env=env, what="pip install -r binder/requirements.txt", log=log)


def _reinstall_package(repo_dir: Path, venv: Path, log: Path) -> None:
    """Reinstall hermes-jupyter alone; the labextension is the one the full build made from the same sources."""
    built = venv / "share" / "jupyter" / "labextensions" / "hermes-jupyter"
    target = repo_dir / "hermes_jupyter" / "labextension"
    shutil.copytree(built, target, ignore=shutil.ignore_patterns("install.json"), dirs_exist_ok=True)
    env = BinderEnv(venv, repo_dir, False, 0.0).env()
    _run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "--no-deps", "--force-reinstall", "."],
         cwd=repo_dir, env=env, what="pip install --no-deps . (cached build)", log=log)
