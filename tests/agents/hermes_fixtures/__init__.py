"""A real hermes-agent for the hermes backend tests: the cached install and a HERMES_HOME.

The install is the one users get from `scripts/ensure_hermes_agent.sh` (its own venv, about
25 s the first time, instant once cached). The HERMES_HOME points Hermes at the scripted
OpenAI stub on 127.0.0.1, so the tests run offline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
ENSURE_SCRIPT = REPO / "scripts" / "ensure_hermes_agent.sh"
INSTALL_TIMEOUT_S = 900
# Set (e.g. in CI) to make a failed install fail the tests instead of skipping them.
REQUIRE_ENV = "HERMES_JUPYTER_REQUIRE_HERMES"


class HermesInstallError(RuntimeError):
    """scripts/ensure_hermes_agent.sh could not provide hermes-agent."""


def ensure_hermes_agent() -> Path:
    """Run the install script and return the Python of the hermes-agent venv."""
    try:
        done = subprocess.run(["bash", str(ENSURE_SCRIPT)], capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HermesInstallError(f"{ENSURE_SCRIPT} did not finish: {exc}") from exc
    if done.returncode != 0:
        raise HermesInstallError(f"{ENSURE_SCRIPT} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    hermes = Path(done.stdout.strip().splitlines()[-1])
    python = hermes.parent / "python"
    if not python.exists():
        raise HermesInstallError(f"{ENSURE_SCRIPT} printed {hermes}, but {python} does not exist")
    return python


def install_failed_loudly(error: HermesInstallError) -> str:
    """Shout about a skipped hermes suite on stderr; the returned text is the skip reason."""
    banner = "!" * 78
    message = f"HERMES-AGENT TESTS SKIPPED: the install is impossible here.\n{error}"
    sys.stderr.write(f"\n{banner}\n{message}\n{banner}\n")
    if os.environ.get(REQUIRE_ENV):
        raise error
    return message


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    """The hermes-agent venv's Python, installed once per session (a plugin of tests/conftest.py, so the
    agent tests and the contract suites share it); skipped, loudly, where the install is impossible."""
    try:
        return ensure_hermes_agent()
    except HermesInstallError as error:
        pytest.skip(install_failed_loudly(error))


def write_hermes_home(home: Path, base_url: str, model: str, extra_yaml: str = "", api_key: str = "dummy") -> Path:
    """A HERMES_HOME whose config.yaml points at an OpenAI-compatible server (hermes-agent.md §4)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        f"  default: {model}\n"
        f"  api_key: {api_key}\n"
        "  context_length: 65536\n"
        "agent:\n"
        "  environment_probe: false\n" + extra_yaml,
        encoding="utf-8",
    )
    return home


def run_hermes_turn(python: Path, home: Path, message: str, *, run_id: str = "r1",
                    toolsets: tuple[str, ...] = ("todo",), **traits: Any) -> tuple[Any, Any]:
    """One turn of a fresh HermesAgent on the real install over `home`: (TurnResult, RecordingSink)."""
    import asyncio

    from hermes_jupyter.agents.base import TurnRequest
    from hermes_jupyter.agents.hermes import HermesAgent
    from hermes_jupyter.agents.hermes.process import RUNNER
    from tests.fakes.recording_sink import RecordingSink

    agent = HermesAgent(command=[str(python), str(RUNNER)], env={"HERMES_HOME": str(home)},
                        toolsets=list(toolsets), **traits)
    sink = RecordingSink()

    async def go() -> Any:
        try:
            request = TurnRequest(session_id="s", run_id=run_id, message=message, history=[])
            return await asyncio.wait_for(agent.run_turn(request, sink), 120)
        finally:
            await agent.aclose()

    return asyncio.run(go()), sink
