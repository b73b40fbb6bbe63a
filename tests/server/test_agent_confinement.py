"""The server tells the hermes backend what its sandbox hides (state and runtime dirs) and what it may write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.server.services import HermesServices


def test_the_hermes_agent_is_confined_to_root_dir_away_from_the_servers_dirs(jp_serverapp: Any,
                                                                             hermes_state: Path) -> None:
    services: HermesServices = jp_serverapp.web_app.settings["hermes"]
    agent = services.manager.backends["hermes"]
    assert isinstance(agent, HermesAgent) and agent.sandbox == "auto"
    assert str(hermes_state) in agent.sandbox_hidden
    assert jp_serverapp.runtime_dir in agent.sandbox_hidden
    assert str(jp_serverapp.root_dir) in agent.sandbox_writable
    assert not {os.path.realpath(p) for p in agent.sandbox_hidden} & {os.path.realpath(p) for p in agent.sandbox_writable}
