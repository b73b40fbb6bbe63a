#!/usr/bin/env bash
# Creates .venv (Python 3.11+) with its own pip and installs hermes-jupyter into it, editable, with the given extras.
# The wheel build runs npm for the labextension (hatch-jupyter-builder), so node 20 / npm must be on PATH.
# Usage: scripts/bootstrap.sh [EXTRAS]   e.g. scripts/bootstrap.sh test
#
# The install is skipped when nothing it depends on changed since the last one: a stamp in .venv
# records the extras and a checksum of what pip and the labextension build read (the Python
# sources need no reinstall: the install is editable). HERMES_JUPYTER_REINSTALL=1 forces it.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
stamp_file=.venv/.hermes-jupyter-install
labext_stamp=.venv/.hermes-jupyter-labextension  # the labextension's inputs at its last build

# What the install reads besides the Python sources, one checksum line per file, in a stable order.
install_inputs() {
  local paths=(pyproject.toml install.json jupyter-config labextension/package.json
    labextension/package-lock.json labextension/tsconfig.json labextension/src labextension/style
    labextension/schema)
  local existing=()
  for p in "${paths[@]}"; do [ -e "$p" ] && existing+=("$p"); done
  find "${existing[@]}" -type f ! -path '*/node_modules/*' ! -path '*/__tests__/*' | LC_ALL=C sort | xargs cksum
}

# The stamp of the wanted install: the extras with those they include (`test` includes `demo`),
# then one checksum of the inputs.
wanted_stamp() {
  echo "extras=$(requirements --extras)"
  install_inputs | cksum
}

# Up to date when the inputs match and the stamped extras include the wanted ones (a `test`
# install serves a `demo` one and a plain one), and the labextension and pip are still in the venv.
up_to_date() {
  [ -x .venv/bin/python ] && [ -x .venv/bin/pip ] && [ -f "$stamp_file" ] || return 1
  [ -f .venv/share/jupyter/labextensions/hermes-jupyter/package.json ] || return 1
  local stamped_extras stamped_sum wanted
  stamped_extras="$(sed -n 's/^extras=//p' "$stamp_file")"
  stamped_sum="$(sed -n '2p' "$stamp_file")"
  [ "$stamped_sum" = "$(install_inputs | cksum)" ] || return 1
  for wanted in ${extras//,/ }; do
    [[ ",$stamped_extras," == *",$wanted,"* ]] || return 1
  done
}

if up_to_date; then
  echo "bootstrap: hermes-jupyter is installed and nothing it depends on changed (HERMES_JUPYTER_REINSTALL=1 forces a reinstall)"
  [ "${HERMES_JUPYTER_REINSTALL:-}" = "1" ] || exit 0
fi
# A venv without pip is made in a second (ensurepip is most of the usual 7 s); the system's pip then
# puts uv in it, and uv puts pip back in 0.3 s with the rest of the install (`%pip install` in a
# cell and `pip install` in a terminal need the venv's own pip). Where that cannot be done, the
# venv gets its own pip as usual.
new_venv() {
  if "$python" -m venv --without-pip .venv >/dev/null 2>&1 \
    && "$python" -m pip --python .venv/bin/python install --disable-pip-version-check -q uv >/dev/null 2>&1 \
    && [ -x .venv/bin/uv ]; then
    return 0
  fi
  rm -rf .venv
  "$python" -m venv .venv
}
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $python"
  new_venv
fi
target="."
[ -n "$extras" ] && target=".[$extras]"
pip=(.venv/bin/python -m pip install --disable-pip-version-check -q)
# uv resolves and downloads in parallel: the dependencies take ~4 s instead of ~50 s with pip
# (most of a first launch). It is one wheel from PyPI; when it cannot be had, pip does it all.
if [ -x .venv/bin/uv ] || { "${pip[@]}" uv >/dev/null 2>&1 && [ -x .venv/bin/uv ]; }; then
  pip=(.venv/bin/uv pip install -q --python .venv/bin/python)
fi

# What pip would fetch for `$target`, plus the build backend and pip, read from pyproject.toml; an
# extra that names this package (`hermes-jupyter[demo]`) is expanded, not fetched. With --extras:
# the wanted extras and those they include, comma-separated, for the stamp.
requirements() {
  .venv/bin/python - "$extras" "${1:-}" <<'PY'
import re, sys, tomllib
with open("pyproject.toml", "rb") as f:
    data = tomllib.load(f)
name = data["project"]["name"]
extras = data["project"].get("optional-dependencies", {})
seen, reqs, todo = [], [], [e for e in sys.argv[1].split(",") if e]
while todo:
    extra = todo.pop(0)
    if extra in seen:
        continue
    seen.append(extra)
    for req in extras.get(extra, []):
        own = re.fullmatch(re.escape(name) + r"\[([\w,\s-]+)\]", req.strip())
        if own:
            todo += [e.strip() for e in own.group(1).split(",")]
        else:
            reqs.append(req)
if sys.argv[2] == "--extras":
    print(",".join(sorted(seen)))
else:
    print("\n".join([*data["build-system"]["requires"], *data["project"]["dependencies"], *reqs, "pip"]))
PY
}

# A fresh checkout (no labextension built yet): build it while pip fetches the dependencies (the
# two slow parts, one CPU-bound, one network-bound), then install the package itself with
# neither left to do. Anything that fails here falls back to the plain install, which says why.
install_in_parallel() {
  [ ! -d hermes_jupyter/labextension ] && command -v npm >/dev/null 2>&1 || return 1
  echo "bootstrap: building the labextension while pip installs the dependencies"
  local npm_install=(npm install --no-audit --no-fund)
  [ -f labextension/package-lock.json ] && npm_install=(npm ci --no-audit --no-fund)  # the lock as is: ~5 s less
  (cd labextension && "${npm_install[@]}" && npm run build) >.venv/labextension-build.log 2>&1 &
  local npm_pid=$!
  local reqs
  # Bytecode is compiled now, while npm builds (uv does not by default): the first start does not pay for it.
  local compile=()
  [ "${pip[0]}" = .venv/bin/uv ] && compile=(--compile-bytecode)
  reqs="$(requirements)" && mapfile -t reqs_list <<<"$reqs" && "${pip[@]}" "${compile[@]}" "${reqs_list[@]}" || {
    kill "$npm_pid" 2>/dev/null; wait "$npm_pid" 2>/dev/null; return 1; }
  wait "$npm_pid" || return 1
  "${pip[@]}" --no-build-isolation -e "$target"
}

echo "bootstrap: installing hermes-jupyter$( [ -n "$extras" ] && echo "[$extras]" ) (builds the labextension on first run)"
stamp="$(wanted_stamp)"  # before the install: an edit made meanwhile triggers the next one
# The editable build rebuilds the labextension only when a file under labextension/src is newer than
# its output, so a change to its styles, schema or packages alone would be skipped: mark src as new.
labext_sum="$(install_inputs | grep ' labextension/' | cksum)"
if [ -f "$labext_stamp" ] && [ "$(cat "$labext_stamp")" != "$labext_sum" ]; then
  touch labextension/src/index.ts
fi
rm -f "$stamp_file"
install_in_parallel || "${pip[@]}" -e "$target" pip
.venv/bin/python -c "import hermes_jupyter.server.app" # fail loudly if the install did not take
echo "$stamp" >"$stamp_file"
echo "$labext_sum" >"$labext_stamp"
