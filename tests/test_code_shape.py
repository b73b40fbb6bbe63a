"""The package keeps the shape docs/architecture.md promises: small modules with one job, short functions.

A module over MAX_MODULE_LINES or a function over MAX_FUNCTION_LINES is named here, so a split is decided
when the code grows, not found later. (The labextension has the same check: __tests__/function-size.spec.ts.)
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hermes_jupyter"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
#: Files that are data, not code: the program a kernel runs (loaded as text, never imported here).
DATA = {"server/kernel_probe_program.py"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).as_posix() not in DATA)


def test_no_module_is_over_the_limit() -> None:
    long = {p.relative_to(PACKAGE).as_posix(): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"split these modules (lines): {long}"


def test_no_function_is_over_the_limit() -> None:
    long: dict[str, int] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = lines
    assert long == {}, f"split these functions (lines): {long}"


def test_the_checks_see_the_package() -> None:
    """Guards the two checks above against passing on an empty walk."""
    assert len(_modules()) > 100
