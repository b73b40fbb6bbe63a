"""A real jupyter_server (pytest-jupyter) with the extension, auth on, non-root base_url."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from .client import HermesClient


@pytest.fixture
def hermes_state(tmp_path: Path) -> Path:
    return tmp_path / "hermes-state"


#: The in-process server's token. It is also listed as a person token, so the tests' requests act as a
#: person's API client would (answer approvals, rename, delete); tests/server/test_principals.py drops that.
SERVER_TOKEN = "hermes-test-server-token"


@pytest.fixture
def jp_server_config(hermes_state: Path, tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"hermes_jupyter": True},
            "allow_unauthenticated_access": False,
        },
        "IdentityProvider": {"token": SERVER_TOKEN},
        "HermesJupyter": {"state_dir": str(hermes_state), "drain_timeout": 1.0, "heartbeat_interval": 0.5,
                          "person_token_sha256": [hashlib.sha256(SERVER_TOKEN.encode()).hexdigest()]},
        "DemoAgent": {"token_delay": 0.002},
        # Tests that turn collaboration rooms on: the rooms' update store goes to a temp dir, not the cwd
        # (a room's store is built without the config, so SQLiteYStore.db_path would not reach it).
        "YDocExtension": {"ystore_class": "jupyter_server_ydoc.stores.TempFileYStore"},
    }


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


@pytest.fixture
def hermes(jp_serverapp: Any) -> Any:
    """The in-process server's HermesServices (store, journals, manager)."""
    return jp_serverapp.web_app.settings["hermes"]
