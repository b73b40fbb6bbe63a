#!/usr/bin/env bash
# The run command: JupyterLab with hermes-jupyter and the demo notebook, on the offline demo agent.
# Extra arguments go to `jupyter lab` (e.g. --port=8899 --no-browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
cd binder  # the notebook root: the demo notebook, not the repository's internals
exec ../.venv/bin/jupyter lab "${root_flag[@]}" --ip=127.0.0.1 --HermesJupyter.backend=demo "$@" demo.ipynb
