#!/usr/bin/env bash
# The test command: installs everything the tests need (venv, npm packages, Debian chromium,
# the hermes-agent venv, Debian bubblewrap, the local model: llama.cpp with SmolLM2, built once and
# cached, about 11 minutes the first time), then runs the whole suite, real servers, kernels and browser included.
set -euo pipefail
cd "$(dirname "$0")/.."
# A real model server for the tests (tests/fakes/local_model.py). Its first build compiles llama.cpp:
# it runs meanwhile the rest installs (downloads, mostly), and is awaited before the tests.
bash scripts/ensure_local_model.sh >/dev/null &
local_model=$!
bash scripts/bootstrap.sh test
bash scripts/ensure_chromium.sh
bash scripts/ensure_bubblewrap.sh   # the agent sandbox (tests/agents/test_agent_reach.py)
wait "$local_model"
export HERMES_JUPYTER_REQUIRE_HERMES=1   # a failed hermes-agent install fails the run instead of skipping
export HERMES_JUPYTER_REQUIRE_BROWSER=1  # so does a missing chromium or playwright
export HERMES_JUPYTER_REQUIRE_LOCAL_MODEL=1  # and a missing local model build
(cd labextension && npm test --silent)  # the TypeScript fold, against the same contract
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
