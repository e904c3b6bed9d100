"""The rules core imports only the standard library and itself (ADR 0001)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import starfever.engine

ENGINE = Path(starfever.engine.__file__).parent


def test_engine_imports_only_the_standard_library() -> None:
    for path in ENGINE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or name.startswith("starfever.engine"), (
                    f"{path.name} imports {name}")


def test_engine_has_no_clock() -> None:
    for path in ENGINE.glob("*.py"):
        text = path.read_text()
        assert "import time" not in text and "datetime" not in text, path.name
