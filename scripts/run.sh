#!/usr/bin/env bash
# The run command: JupyterLab with hermes-jupyter and the demo notebook, on the offline demo agent.
# Extra arguments go to `jupyter lab` (e.g. --port=8899 --no-browser).
# Installs only when the checkout changed (scripts/bootstrap.sh keeps a stamp), so a second launch is quick.
# The `demo` extra is what the demo notebook imports (pandas, matplotlib) and Notebook 7, the same list
# Binder installs (binder/requirements.txt); the venv has its own pip, so `%pip install` works in a cell.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh demo
# Kernels and terminals of this JupyterLab find the venv first: `!jupyter hermes recover` in a cell
# or `pip install …` in a terminal reach this install, not another Python on PATH.
export HERMES_JUPYTER_VENV="$PWD/.venv"
export VIRTUAL_ENV="$HERMES_JUPYTER_VENV"
export PATH="$HERMES_JUPYTER_VENV/bin:$PATH"
args=(--ip=127.0.0.1 --HermesJupyter.backend=demo)
[ "$(id -u)" -eq 0 ] && args+=(--allow-root)
if [ "$(basename "${SHELL:-}")" = "bash" ]; then
  # A terminal runs the user's usual bash set-up, then puts the venv back in front (see venv_bashrc).
  args+=("--ServerApp.terminado_settings=$(python -c 'import sys; print(repr({"shell_command": sys.argv[1:]}))' \
    "$SHELL" --rcfile "$PWD/scripts/venv_bashrc" -i)")
fi
cd binder  # the notebook root: the demo notebook, not the repository's internals
exec jupyter lab "${args[@]}" "$@" demo.ipynb
