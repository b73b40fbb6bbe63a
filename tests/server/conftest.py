"""A real jupyter_server (pytest-jupyter) with the extension, auth on, non-root base_url."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .client import HermesClient


@pytest.fixture
def hermes_state(tmp_path: Path) -> Path:
    return tmp_path / "hermes-state"


@pytest.fixture
def jp_server_config(hermes_state: Path, tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"hermes_jupyter": True},
            "allow_unauthenticated_access": False,
        },
        "HermesJupyter": {"state_dir": str(hermes_state), "drain_timeout": 1.0, "heartbeat_interval": 0.5},
        "DemoAgent": {"token_delay": 0.002},
    }


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


@pytest.fixture
def hermes(jp_serverapp: Any) -> Any:
    """The in-process server's HermesServices (store, journals, manager)."""
    return jp_serverapp.web_app.settings["hermes"]
