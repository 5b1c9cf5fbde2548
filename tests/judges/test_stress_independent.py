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


def _imports(name: str) -> set[str]:
    path = Path(ragaudit.judges.__file__).with_name(f"{name}.py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "ragaudit.judges":  # "from ragaudit.judges import stress_scan"
                found.update(f"ragaudit.judges.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("name", GENERATOR)
def test_the_generator_imports_only_itself_and_the_standard_library(name):
    for module in _imports(name):
        top = module.split(".")[0]
        assert module in OWN or module == "__future__" or (
            top != "ragaudit" and top in sys.stdlib_module_names
        ), f"ragaudit.judges.{name} imports {module}"


def test_the_check_would_catch_a_judge_import(tmp_path):
    # the same rule applied to a module that reads numbers with the judge's parser
    source = "from ragaudit.judges.claims import read_claims\nimport ragaudit._text\n"
    tree = ast.parse(source)
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert modules - OWN == {"ragaudit.judges.claims", "ragaudit._text"}
