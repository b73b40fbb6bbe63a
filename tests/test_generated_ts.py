"""The labextension's wire types are generated from the Python rows and event names, never restated by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "generate_ts_types.py"


def _generator() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate_ts_types", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_typescript_is_what_the_python_says_now() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_check_fails_on_a_stale_file_and_passes_once_regenerated(tmp_path: Path) -> None:
    gen = _generator()
    fresh = gen.render()  # type: ignore[attr-defined]
    assert "variant: NoteVariant;" in fresh and "  interimAssistant: 'interim_assistant'," in fresh
    target = tmp_path / "generated.ts"
    target.write_text(fresh.replace("  model: string | null;\n", ""), encoding="utf-8")  # a row field added in Python
    gen.TARGET = target  # type: ignore[attr-defined]
    gen.ROOT = tmp_path  # type: ignore[attr-defined]
    assert gen.main(["--check"]) == 1  # type: ignore[attr-defined]
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0  # type: ignore[attr-defined]
    assert target.read_text(encoding="utf-8") == fresh
