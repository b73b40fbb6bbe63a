# Sourced by the ensure_* scripts: `pick_python NAME OVERRIDE MIN MAX` prints the first Python on PATH with
# MIN <= version < MAX (e.g. 3.11 3.14), or $OVERRIDE when that variable is set; exits 1 with NAME's words otherwise.
pick_python() {
    local name="$1" override="${!2:-}" min="$3" max="$4" candidate
    if [[ -n "$override" ]]; then echo "$override"; return; fi
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "
import sys
v = sys.version_info[:2]
sys.exit(not (tuple(map(int, '$min'.split('.'))) <= v < tuple(map(int, '$max'.split('.')))))" 2>/dev/null; then
            command -v "$candidate"; return
        fi
    done
    echo "$name: no Python >=$min,<$max found" >&2
    exit 1
}
