"""The program the server runs inside a kernel is a file of its own, read as a resource, never imported."""

from __future__ import annotations

import ast
import sys
from importlib import resources
from pathlib import Path

from hermes_jupyter.server import notebook_access

SERVER = Path(notebook_access.__file__).parent


def test_the_probe_is_kernel_summary_then_the_probe_program_read_as_package_data() -> None:
    files = resources.files("hermes_jupyter.server")
    parts = [files.joinpath(name).read_text(encoding="utf-8") for name in ("kernel_summary.py", "kernel_probe_program.py")]
    assert notebook_access._PROBE == "\n".join(parts)
    compile(notebook_access._PROBE, "<hermes probe>", "exec")  # one program, as the kernel will exec it
    assert "hermes_jupyter.server.kernel_probe_program" not in sys.modules


def test_the_server_module_keeps_no_program_in_a_string() -> None:
    tree = ast.parse((SERVER / "notebook_access.py").read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    long_strings = [node.lineno for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and len(node.value) > 400 and id(node) not in docstrings]
    assert long_strings == []
