"""``load_saved_run`` leaves the host process's Arrow memory pool alone; only the CLI entry
point picks jemalloc (``ragaudit._arrow``), and ``ARROW_DEFAULT_MEMORY_POOL`` still wins.

Each case runs in a fresh isolated interpreter (``python -I``): the pool is process-wide
state, so the test process (whose CLI tests already ran ``main``) cannot show it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import sys
import pyarrow as pa
from ragaudit.data.records import load_saved_run
from ragaudit.cli import main
before = pa.default_memory_pool().backend_name
load_saved_run(sys.argv[1])
after_load = pa.default_memory_pool().backend_name
try:
    main(["funnel", sys.argv[1]], standalone_mode=False)
except SystemExit:
    pass
print(before, after_load, pa.default_memory_pool().backend_name, file=sys.stderr)
"""


def _pools(run: Path, pool: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(run)], env=env,
                          capture_output=True, text=True, check=True, timeout=120)  # fmt: skip
    return done.stderr.split()[-3:]


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    rows = [{"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a"}], "answer": "x"}]
    header = {"format": "ragaudit.run", "format_version": 1, "name": "r", "config": {"k": 1}}
    path.write_text(json.dumps({**header, "rows": rows}), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_loader_keeps_the_hosts_pool_and_the_cli_picks_jemalloc(run_file: Path) -> None:
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow build has no jemalloc")
    before, after_load, after_cli = _pools(run_file, "system")
    assert before == after_load == after_cli == "system"  # the env override wins everywhere
    before, after_load, after_cli = _pools(run_file, None)
    assert after_load == before != "jemalloc"  # the library changed nothing
    assert after_cli == "jemalloc"  # the CLI entry point chose the faster pool
