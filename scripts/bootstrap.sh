#!/usr/bin/env bash
# Creates .venv (Python 3.11+) and installs hermes-jupyter into it, editable, with the given extras.
# The wheel build runs npm for the labextension (hatch-jupyter-builder), so node 20 / npm must be on PATH.
# Usage: scripts/bootstrap.sh [EXTRAS]   e.g. scripts/bootstrap.sh test
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $python"
  "$python" -m venv .venv
fi
target="."
[ -n "$extras" ] && target=".[$extras]"
echo "bootstrap: installing hermes-jupyter$( [ -n "$extras" ] && echo "[$extras]" ) (builds the labextension on first run)"
.venv/bin/python -m pip install --disable-pip-version-check -q -e "$target"
.venv/bin/python -c "import hermes_jupyter.server.app" # fail loudly if the install did not take
