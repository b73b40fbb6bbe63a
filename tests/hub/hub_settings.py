"""The hub the tests run: its users, what the admin sets for all of them, what alice sets for herself."""

from __future__ import annotations

import sys
from pathlib import Path

ENV_REPORT_RUNNER = Path(__file__).with_name("env_report_runner.py")
USERS = ("alice", "bob")
# The demo agent pauses this long before each token, so a run has gaps longer than the proxy's
# idle timeout (tests/hub/idle_proxy.py); only heartbeats can keep such a stream open.
TOKEN_DELAY_S = 1.2
ALICE_HEARTBEAT_S = 0.15
ADMIN_BACKENDS = ["demo", "hermes"]

# What the admin sets for every user: jupyter_server_config.json in a dir on JUPYTER_CONFIG_PATH,
# which outranks the users' own ~/.jupyter (jupyter_core puts JUPYTER_CONFIG_PATH first).
ADMIN_CONFIG = {
    "HermesJupyter": {"backend": "demo", "allowed_backends": ADMIN_BACKENDS},
    "DemoAgent": {"token_delay": TOKEN_DELAY_S},
    # The report runner reads its parent's /proc to learn the secrets it must not inherit; the sandbox
    # would hide that parent (tests/agents/test_agent_reach.py covers the sandbox), so it is off here.
    "HermesAgent": {"command": [sys.executable, str(ENV_REPORT_RUNNER)], "startup_timeout": 30, "sandbox": "off"},
}
# alice's own ~/.jupyter config sets what the admin left open and tries, in vain, to widen what the
# admin closed. Her heartbeat and drain fit inside the proxy's idle timeout and the grace period of
# a stop (2 s, PodLikeSpawner in tests/hub/hub_process.py); bob keeps the defaults (15 s and 10 s).
ALICE_DRAIN_S = 0.3
USER_CONFIGS = {"alice": {"HermesJupyter": {"heartbeat_interval": ALICE_HEARTBEAT_S, "drain_timeout": ALICE_DRAIN_S,
                                            "allowed_backends": ["demo", "openai", "hermes"]}}}
