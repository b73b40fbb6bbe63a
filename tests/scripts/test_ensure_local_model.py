"""scripts/ensure_local_model.sh --check never builds, and the local model fixture turns its answer into a
skip (a plain run) or a failure (scripts/test.sh's HERMES_JUPYTER_REQUIRE_LOCAL_MODEL=1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.fakes import local_model

REPO = Path(__file__).resolve().parents[2]


def test_check_without_a_build_exits_3_says_what_to_run_and_creates_nothing(tmp_path: Path) -> None:
    venv = tmp_path / "cache" / "llama-cpp-venv"
    env = {**os.environ, "HERMES_LOCAL_MODEL_VENV": str(venv)}
    done = subprocess.run(["bash", str(REPO / "scripts" / "ensure_local_model.sh"), "--check"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and done.stdout == ""
    assert "run scripts/ensure_local_model.sh to build it" in done.stderr
    assert not (tmp_path / "cache").exists()  # no venv, no lock, no log: nothing was started


def test_a_missing_build_skips_and_under_test_sh_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_LOCAL_MODEL_VENV", str(tmp_path / "absent"))
    with pytest.raises(local_model.LocalModelMissing) as missing:
        local_model.cached_build()
    monkeypatch.delenv(local_model.REQUIRE_ENV, raising=False)
    assert "no current build" in local_model._skip_or_fail(missing.value)
    monkeypatch.setenv(local_model.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="the local model is missing"):
        local_model._skip_or_fail(missing.value)
