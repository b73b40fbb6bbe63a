"""A real local model for the tests: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M.

Not a stand-in like the rest of this package: a third-party server and a real (tiny) model, so the
tests meet what a user's llama.cpp does (no usage when streaming, `length` stops, a context limit).
scripts/ensure_local_model.sh builds it once into a cached venv; the fixture never builds, it only
serves what is there, and skips with the reason when nothing is, unless
HERMES_JUPYTER_REQUIRE_LOCAL_MODEL=1 (scripts/test.sh) turns a missing build into a failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ..server_process import free_port

REPO = Path(__file__).resolve().parents[2]
ENSURE_SCRIPT = REPO / "scripts" / "ensure_local_model.sh"
REQUIRE_ENV = "HERMES_JUPYTER_REQUIRE_LOCAL_MODEL"
MODEL_NAME = "smollm2-135m"
N_CTX = 512
START_TIMEOUT_S = 120.0


class LocalModelMissing(RuntimeError):
    """The cached build is not there (or not current): the sentence says what to run."""


@dataclass(frozen=True)
class LocalModel:
    """A running server: `base_url` ends in /v1, as OPENAI_BASE_URL does; `model` is its one model's name."""

    base_url: str
    model: str
    n_ctx: int
    python: Path
    gguf: Path
    log: Path


def cached_build() -> tuple[Path, Path]:
    """(python, gguf) of the cached build, asked of the script in its no-build mode."""
    try:
        done = subprocess.run(["bash", str(ENSURE_SCRIPT), "--check"], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalModelMissing(f"{ENSURE_SCRIPT} --check did not finish: {exc}") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or len(lines) < 2:
        raise LocalModelMissing(done.stderr.strip() or f"{ENSURE_SCRIPT} --check exited {done.returncode}")
    return Path(lines[-2]), Path(lines[-1])


def _answers(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class LocalModelServer:
    """`python -m llama_cpp.server` on a free loopback port, its output in `log`."""

    python: Path
    gguf: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> LocalModel:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        args = [str(self.python), "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", MODEL_NAME,
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", "1"]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(base_url):
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}:\n{self._tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"llama_cpp.server did not answer GET /v1/models:\n{self._tail()}")
            time.sleep(0.1)
        return LocalModel(base_url, MODEL_NAME, N_CTX, self.python, self.gguf, self.log)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)

    def _tail(self, n_chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-n_chars:] if self.log.exists() else ""


def _skip_or_fail(error: LocalModelMissing) -> str:
    message = f"LOCAL MODEL TESTS SKIPPED: no cached llama-cpp-python build.\n{error}"
    banner = "!" * 78
    sys.stderr.write(f"\n{banner}\n{message}\n{banner}\n")
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 and the local model is missing: {error}", pytrace=False)
    return message


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModel]:
    """One llama.cpp server with SmolLM2-135M for the whole session (it loads in about a second)."""
    try:
        python, gguf = cached_build()
    except LocalModelMissing as error:
        pytest.skip(_skip_or_fail(error))
    server = LocalModelServer(python, gguf, tmp_path_factory.mktemp("local-model") / "server.log")
    try:
        yield server.start()
    finally:
        server.stop()
