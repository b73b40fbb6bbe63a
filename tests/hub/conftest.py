"""One real JupyterHub for the hub tests, with two users whose servers carry the extension.

The hub starts once per test module (about 4 s, then about 12 s for both spawns together);
its timings are printed at the end and written to test-artifacts/hub-timings.json.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .hub_process import HubProcess
from .hub_settings import ADMIN_CONFIG, USER_CONFIGS, USERS

REPO = Path(__file__).resolve().parents[2]


def _missing_pieces() -> list[str]:
    missing = []
    if importlib.util.find_spec("jupyterhub") is None:
        missing.append("the `jupyterhub` package (pip install jupyterhub; it belongs in the test extras)")
    if shutil.which("npm") is None:
        missing.append("npm (node 20), to install configurable-http-proxy")
    return missing


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[HubProcess]:
    missing = _missing_pieces()
    if missing:
        pytest.fail("the JupyterHub tests need " + " and ".join(missing), pytrace=False)
    started = time.monotonic()
    process = HubProcess(tmp_path_factory.mktemp("hub"), users=USERS, admin_config=ADMIN_CONFIG,
                         user_configs=USER_CONFIGS)
    try:
        process.start()
        process.spawn_all()
        ready_s = time.monotonic() - started
        yield process
    finally:
        process.stop()
    timings = {**process.timings.as_dict(), "ready_s": round(ready_s, 2),
               "total_s": round(time.monotonic() - started, 2)}
    _report_timings(pytestconfig, timings)


TIMINGS = pytest.StashKey[dict[str, object]]()


def _report_timings(config: pytest.Config, timings: dict[str, object]) -> None:
    config.stash[TIMINGS] = timings
    artifacts = REPO / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "hub-timings.json").write_text(json.dumps(timings, indent=2) + "\n")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    timings = config.stash.get(TIMINGS, None)
    if timings is not None:
        terminalreporter.write_line("JupyterHub test timings (s): " + json.dumps(timings))
