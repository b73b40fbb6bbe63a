"""Fixtures of the contract suites: the real hermes-agent install, once per session (as tests/agents has it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.hermes_fixtures import HermesInstallError, ensure_hermes_agent, install_failed_loudly


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    try:
        return ensure_hermes_agent()
    except HermesInstallError as error:
        pytest.skip(install_failed_loudly(error))
