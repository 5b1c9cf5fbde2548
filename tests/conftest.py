"""Fixtures shared by every test directory.

``demo_files`` runs the demo once per session (issue 32, the CPU budget: four modules used
to run it each); a test gets its own copy from the ``copy_demo`` fixture, so nothing one test writes
reaches another, exactly as when each ran the demo itself (the demo's files hold no path of
the directory they are written to, so a copy is the same bytes a new run writes).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``run_demo`` writes (two saved runs, the chunk labels, report.html): read only."""
    from ragaudit.cli.demo import run_demo

    out = tmp_path_factory.mktemp("demo-session")
    run_demo(out, lambda line: None)
    return out


@pytest.fixture(scope="session")
def copy_demo(demo_files: Path) -> Callable[[Path], Path]:
    """``copy_demo(where)``: a private copy of the session's demo files in ``where``."""

    def copy(where: Path) -> Path:
        shutil.copytree(demo_files, where, dirs_exist_ok=True)
        return where

    return copy
