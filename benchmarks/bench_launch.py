"""Launch times of `bash scripts/run.sh`, printed as JSON.

Seconds from starting the command to a usable JupyterLab: `/lab` answers with the
hermes-jupyter labextension in its page config and the hermes API answers.

- `second_s`: a launch with nothing changed (the install is skipped by its stamp);
- `plain_s`: `jupyter lab` from the same venv, no run.sh, the floor to compare with;
- with `--fresh`, first `first_s`: a copy of the checkout as a clone has it (no .venv, no
  node_modules, no built labextension), so pip installs every dependency and npm installs and
  builds the labextension; the second launch and the floor are then measured in that copy.

Usage: python benchmarks/bench_launch.py [--fresh]
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-launch-token"
TIMEOUT_S = 900.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _usable(port: int) -> bool:
    base = f"http://127.0.0.1:{port}/"
    headers = {"Authorization": f"token {TOKEN}"}
    try:
        lab = httpx.get(base + "lab", headers=headers, timeout=5)
        api = httpx.get(base + "hermes/api/sessions", headers=headers, timeout=5)
    except httpx.HTTPError:
        return False
    return lab.status_code == 200 and '"name": "hermes-jupyter"' in lab.text and api.status_code == 200


def time_launch(command: list[str], cwd: Path, state_dir: Path, log: Path) -> float:
    """Seconds until JupyterLab is usable; the server is stopped afterwards."""
    port = _free_port()
    env = {**os.environ, "HERMES_JUPYTER_STATE_DIR": str(state_dir)}
    args = [*command, "--no-browser", f"--port={port}", f"--IdentityProvider.token={TOKEN}"]
    start = time.monotonic()
    with log.open("ab") as out:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while not _usable(port):
            if proc.poll() is not None:
                raise RuntimeError(f"{command} exited with {proc.returncode}; see {log}")
            if time.monotonic() - start > TIMEOUT_S:
                raise TimeoutError(f"{command} not usable after {TIMEOUT_S} s; see {log}")
            time.sleep(0.1)
        return time.monotonic() - start
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def clone(dest: Path) -> Path:
    """The files git would check out (tracked and untracked-but-not-ignored), nothing built."""
    listing = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                             capture_output=True).stdout.decode()
    for rel in filter(None, listing.split("\0")):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def main(fresh: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "launch.log"
        root = clone(Path(tmp) / "clone") if fresh else REPO
        run_sh = ["bash", str(root / "scripts" / "run.sh")]
        if fresh:
            result["first_s"] = round(time_launch(run_sh, root, Path(tmp) / "first", log), 2)
        result["second_s"] = round(time_launch(run_sh, root, Path(tmp) / "second", log), 2)
        plain = [str(root / ".venv" / "bin" / "jupyter"), "lab", "--ip=127.0.0.1"]
        if os.getuid() == 0:
            plain.append("--allow-root")
        result["plain_s"] = round(time_launch(plain, root, Path(tmp) / "plain", log), 2)
        result["second_over_plain"] = round(result["second_s"] / result["plain_s"], 2)
    return result


if __name__ == "__main__":
    print(json.dumps(main("--fresh" in sys.argv), indent=2))
