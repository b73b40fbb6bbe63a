"""The package's wings import only downward (docs/architecture.md): a lower folder never imports a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_jupyter

PACKAGE = Path(hermes_jupyter.__file__).parent

#: folder -> the folders of the package it must never import.
FORBIDDEN = {
    "sessions": {"recovery", "runs", "server", "notebook", "kernel", "agents"},
    "recovery": {"runs", "server", "notebook", "kernel", "agents"},
    "notebook": {"kernel", "server", "runs"},
    "kernel": {"server", "runs", "agents"},
}


def _imported_folders(path: Path) -> set[str]:
    """The top folders of hermes_jupyter a module imports (relative or absolute, anywhere in the file)."""
    depth = len(path.relative_to(PACKAGE).parts) - 1  # 0: a top-level module
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level <= depth:
                    continue  # within its own folder
                parts = (node.module or "").split(".")
                names = [parts[0]] if parts[0] else [alias.name for alias in node.names]
            elif (module := node.module or "").startswith("hermes_jupyter."):
                names = [module.split(".")[1]]
            else:
                continue
            found.update(names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("hermes_jupyter."))
    return found


def test_no_folder_imports_a_folder_above_it() -> None:
    upward = []
    for folder, above in FORBIDDEN.items():
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for name in sorted(_imported_folders(path) & above):
                upward.append(f"{path.relative_to(PACKAGE)} imports {name}/")
    assert upward == []
