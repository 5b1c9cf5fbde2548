"""The stress test's rewrites share no code with the judges they test (issue 31, item 6).

import-linter's "stress rewrites are independent" contract in pyproject.toml forbids the
imports, direct or indirect; this test reads the generator's modules and checks that every
import is either the standard library or another module of the generator.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import ragaudit.judges

GENERATOR = ("stress", "stress_tables", "stress_scan", "stress_convert", "stress_rewrites",
             "stress_broken")  # fmt: skip
OWN = {f"ragaudit.judges.{name}" for name in GENERATOR} | {"ragaudit.judges"}
#: The one project module the generator may use: the exception it raises on a bad family.
ALLOWED = OWN | {"ragaudit.exceptions", "__future__"}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module in ("ragaudit", "ragaudit.judges"):  # "from ragaudit import _text"
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _outside(path: Path) -> set[str]:
    """The imports of ``path`` that are neither the generator nor the standard library."""
    return {
        module for module in _imports(path)
        if module not in ALLOWED and not (
            module.split(".")[0] != "ragaudit" and module.split(".")[0] in sys.stdlib_module_names)
    }  # fmt: skip


@pytest.mark.parametrize("name", GENERATOR)
def test_the_generator_imports_only_itself_and_the_standard_library(name):
    path = Path(ragaudit.judges.__file__).with_name(f"{name}.py")
    assert _outside(path) == set()


def test_the_check_catches_a_judge_import(tmp_path):
    module = tmp_path / "stress_bad.py"
    module.write_text("import re\nfrom ragaudit.judges.claims import read\n"
                      "from ragaudit import _text\nimport numpy\n")  # fmt: skip
    assert _outside(module) == {"ragaudit.judges.claims", "ragaudit", "ragaudit._text", "numpy"}
