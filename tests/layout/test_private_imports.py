"""No module imports another package's private module or name (issue 23).

A leading underscore means "private to the package that holds it": ``ragaudit.data.formats._qids``
may be imported anywhere inside ``ragaudit.data.formats``, a name ``_x`` of
``ragaudit.stats.resampling`` anywhere inside ``ragaudit.stats``, ``ragaudit._io`` anywhere in
``ragaudit``.  A piece shared beyond that gets a public home (a module without the underscore,
or a name exported by its package's ``__all__``).  This scans every import statement of
``src/`` with :mod:`ast`, those inside functions and ``TYPE_CHECKING`` blocks included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _scope(module: str, name: str | None) -> str | None:
    """The package a private ``module`` (or ``module.name``) belongs to; None if public."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    if name is not None and _private(name):
        return ".".join(parts[:-1])
    return None


def _imports(path: Path, root: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name or None)`` of every import of ``path`` (relative ones resolved)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found += [(node.lineno, base, alias.name) for alias in node.names]
    return found


def private_imports(root: Path) -> list[str]:
    """One ``FILE:LINE: importer imports target`` per import of a private piece from outside
    the package it belongs to."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for line, target, name in _imports(path, root):
            scope = _scope(target, name)
            if scope is None or not scope:
                continue
            if module != scope and not module.startswith(scope + "."):
                shown = f"{target}.{name}" if name else target
                bad.append(f"{path.relative_to(root.parent)}:{line}: {module} imports {shown}")
    return bad


def test_no_package_imports_another_packages_private_module_or_name():
    bad = private_imports(SRC)
    assert not bad, (
        "private pieces imported across packages (give each a public home: a module without "
        "the underscore, or a name in its package's __all__):\n" + "\n".join(bad)
    )


@pytest.mark.parametrize(
    ("where", "source", "expected"),
    [
        ("ragaudit/metrics/m.py", "from ragaudit.data.formats._strings import IntArray", 1),
        ("ragaudit/metrics/m.py", "from ragaudit.stats.resampling import _kernel", 1),
        ("ragaudit/metrics/m.py", "import ragaudit.stats._inputs", 1),
        ("ragaudit/metrics/m.py", "def f():\n    from ragaudit.labels.build import _x\n", 1),
        ("ragaudit/stats/a.py", "from ragaudit.stats._inputs import pair_runs", 0),
        ("ragaudit/stats/a.py", "from ragaudit.stats.bounded import _bisect", 0),
        ("ragaudit/stats/a.py", "from ._inputs import pair_runs", 0),
        ("ragaudit/diagnose/a.py", "from ..stats._inputs import pair_runs", 1),
        ("ragaudit/metrics/m.py", "from ragaudit._io import atomic_write", 0),
        ("ragaudit/metrics/m.py", "from ragaudit import __version__", 0),
        ("ragaudit/metrics/m.py", "from ragaudit.stats import pair_runs", 0),
    ],
)
def test_the_scan_flags_exactly_the_cross_package_private_imports(
    tmp_path, where, source, expected
):
    path = tmp_path / where
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    assert len(private_imports(tmp_path)) == expected
