#!/usr/bin/env bash
# Install hermes-agent into its own cached venv (its exact pins clash with the Jupyter stack)
# and print the path of its `hermes` executable. Idempotent: a venv that already holds the
# pinned version is reused without touching the network (a few milliseconds).
#
#   HERMES_AGENT_VENV     venv location (default ~/.cache/hermes-jupyter/hermes-agent-venv)
#   HERMES_AGENT_VERSION  version to install (default 0.19.0)
#   HERMES_AGENT_PYTHON   interpreter for the venv (default: python3.11, python3.12, python3.13, python3)
set -euo pipefail

version="${HERMES_AGENT_VERSION:-0.19.0}"
venv="${HERMES_AGENT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-jupyter/hermes-agent-venv}"
stamp="$venv/.hermes-jupyter-installed"
spec="hermes-agent[acp]==${version}"

if [[ -x "$venv/bin/hermes" && -f "$stamp" && "$(cat "$stamp")" == "$spec" ]]; then
    echo "$venv/bin/hermes"
    exit 0
fi

# shellcheck source=pick_python.sh
source "$(dirname "${BASH_SOURCE[0]}")/pick_python.sh"

# Serialise concurrent callers (parallel test sessions) on one lock beside the venv.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [[ -x "$venv/bin/hermes" && -f "$stamp" && "$(cat "$stamp")" == "$spec" ]]; then
    echo "$venv/bin/hermes"
    exit 0
fi

python="$(pick_python ensure_hermes_agent HERMES_AGENT_PYTHON 3.11 3.14)"
echo "ensure_hermes_agent: installing $spec into $venv (about 30 s)" >&2
if [[ -e "$venv" && ! -f "$venv/pyvenv.cfg" ]]; then
    echo "ensure_hermes_agent: $venv exists and is not a venv; refusing to replace it" >&2
    exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv"
log="$venv.install.log"
if ! "$venv/bin/python" -m pip install --disable-pip-version-check "$spec" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "ensure_hermes_agent: pip install of $spec failed (full log: $log)" >&2
    exit 1
fi
# Look the modules up without importing them: importing run_agent writes a skeleton ~/.hermes.
"$venv/bin/python" -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ("run_agent", "acp_adapter", "acp")))' || {
    echo "ensure_hermes_agent: $spec installed, but run_agent / acp_adapter are missing" >&2
    exit 1
}
echo "$spec" >"$stamp"
echo "$venv/bin/hermes"
