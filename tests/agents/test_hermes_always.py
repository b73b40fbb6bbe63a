"""Hermes' "allow always" list through the real hermes-agent install: listed as Hermes keeps it, and a
revoked pattern is gone from its config.yaml (so no later turn runs it without asking)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from hermes_jupyter.agents.always import allowed_always, revoke_always
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from tests.agents.hermes_fixtures import write_hermes_home


def test_allowed_always_lists_hermes_allowlist_and_a_revoke_removes_it_from_its_config(
    hermes_python: Path, tmp_path: Path
) -> None:
    home = write_hermes_home(tmp_path / "h", "http://127.0.0.1:9/v1", "stub",
                             extra_yaml="command_allowlist:\n- recursive delete\n- podman *\n")
    agent = HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(home)})

    async def go() -> tuple[dict[str, Any], list[dict[str, str]]]:
        try:
            before = await allowed_always({"hermes": agent})
            after = await revoke_always({"hermes": agent}, "hermes", "podman *")
            return before, after
        finally:
            await agent.aclose()

    listed, after = asyncio.run(asyncio.wait_for(go(), 120))
    assert listed["unavailable"] == [] and listed["always"] == [{"backend": "hermes", "pattern": "podman *"}, {"backend": "hermes", "pattern": "recursive delete"}]
    assert after == [{"backend": "hermes", "pattern": "recursive delete"}]
    config = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert config["command_allowlist"] == ["recursive delete"]
    assert config["model"]["default"] == "stub"  # the rest of the config is kept
