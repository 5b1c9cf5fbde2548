"""``_parallel.WORKERS`` counts the cores the process may use, not the machine's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_one_allowed_core_means_one_worker():
    one_core = min(os.sched_getaffinity(0))
    code = (
        f"import os; os.sched_setaffinity(0, {{{one_core}}}); "
        "import ragaudit._parallel as p; print(p.WORKERS, os.cpu_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    workers, machine = (int(x) for x in out.stdout.split())
    assert workers == 1  # os.cpu_count() alone would give min(2, machine)
    assert machine >= 1
