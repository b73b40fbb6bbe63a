"""kernel_restart_policy=detach: a restarted kernel's runs keep going; lifecycle events reach jupyter_events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .client import HermesClient


@pytest.fixture
def jp_server_config(hermes_state: Path) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"hermes_jupyter": True}, "allow_unauthenticated_access": False},
        "HermesJupyter": {"state_dir": str(hermes_state), "kernel_restart_policy": "detach", "drain_timeout": 1.0},
        "DemoAgent": {"token_delay": 0.002},
    }


@pytest.fixture
def api(jp_fetch: Any, jp_ws_fetch: Any) -> HermesClient:
    return HermesClient(jp_fetch, jp_ws_fetch)


async def test_detached_runs_survive_a_kernel_restart_and_emit_lifecycle_events(
    api: HermesClient, jp_fetch: Any, jp_serverapp: Any
) -> None:
    seen: list[dict[str, Any]] = []

    async def listener(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        seen.append(data)

    jp_serverapp.event_logger.add_listener(
        schema_id="https://events.hermes-jupyter.dev/hermes_jupyter/run/v1", listener=listener
    )
    kernel = json.loads((await jp_fetch("api", "kernels", method="POST", body="{}")).body)
    sid = (await api.create_session())["session_id"]
    run_id = await api.start(sid, "count to 300", kernel_id=kernel["id"])
    await api.stream(run_id, stop_after=5)
    await jp_fetch("api", "kernels", kernel["id"], "restart", method="POST", body="{}")
    assert (await api.wait_status(run_id, "completed", "interrupted"))["status"] == "completed"
    actions = [(e["action"], e["run_id"]) for e in seen]
    assert ("started", run_id) in actions and ("finished", run_id) in actions
    assert all("message" not in e and "content" not in e for e in seen), "events must carry no message content"
    await jp_fetch("api", "kernels", kernel["id"], method="DELETE")
