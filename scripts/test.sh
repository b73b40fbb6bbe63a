#!/usr/bin/env bash
# The test command: installs everything the tests need (venv, npm packages, Debian chromium,
# the hermes-agent venv, Debian bubblewrap), then runs the whole suite, real servers, kernels and browser included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
bash scripts/ensure_chromium.sh
bash scripts/ensure_bubblewrap.sh   # the agent sandbox (tests/agents/test_agent_reach.py)
export HERMES_JUPYTER_REQUIRE_HERMES=1   # a failed hermes-agent install fails the run instead of skipping
export HERMES_JUPYTER_REQUIRE_BROWSER=1  # so does a missing chromium or playwright
(cd labextension && npm test --silent)  # the TypeScript fold, against the same contract
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
