#!/usr/bin/env bash
# The run command: JupyterLab with hermes-jupyter and the demo notebook, on the offline demo agent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
exec .venv/bin/jupyter lab "${root_flag[@]}" --ip=127.0.0.1 --ServerApp.root_dir="$PWD/binder" \
  --HermesJupyter.backend=demo "$@" demo.ipynb
