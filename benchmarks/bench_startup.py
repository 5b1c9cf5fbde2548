"""Start-up time of every ``ragaudit <command> --help`` and of ``ragaudit plan`` (issue 15).

Each command runs in its own process: one warm-up, then ``--runs`` timed runs.  Printed per
command: the wall-clock median, interquartile range, minimum and maximum, and the median CPU
time (user + sys) of the child, which a loaded machine inflates less than the wall clock.
Two floors come first: a bare interpreter and ``import click`` (every command pays both).

Usage::

    uv run python benchmarks/bench_startup.py            # 15 runs per command
    uv run python benchmarks/bench_startup.py --runs 5 compare plan

For what a command imports, use ``python -X importtime -c "..."`` on the same call.
This is a benchmark, not a test: the laziness itself is tested in tests/cli/test_lazy_imports.py.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

COMMANDS = (
    "", "evaluate", "compare", "plan", "run", "demo", "judge", "labels build", "labels bias",
    "funnel", "agreement", "report", "import", "cache stats", "illusions", "explain", "show",
)  # fmt: skip


# Children may write .pyc files: an installed package has them after its first run, and
# PYTHONDONTWRITEBYTECODE (set in some shells) would make every run compile from source.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(args: list[str], runs: int) -> tuple[list[float], list[float]]:
    subprocess.run(args, capture_output=True, check=True, env=ENV)  # warm-up (disk cache, .pyc)
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True, env=ENV)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def _line(label: str, walls: list[float], cpus: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(walls, n=4) if len(walls) > 1 else (walls[0],) * 3
    ms = 1000.0
    return (
        f"{label:<28} wall median {statistics.median(walls) * ms:6.0f} ms "
        f"(IQR {q1 * ms:5.0f}-{q3 * ms:5.0f}, min {min(walls) * ms:5.0f}, "
        f"max {max(walls) * ms:5.0f})  cpu median {statistics.median(cpus) * ms:5.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("commands", nargs="*", default=list(COMMANDS))
    options = parser.parse_args()
    exe = shutil.which("ragaudit") or sys.exit("ragaudit is not on PATH (use `uv run`)")
    load = os.getloadavg()
    print(f"# bench_startup  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average at start {load[0]:.1f}, {load[1]:.1f}, "
          f"{load[2]:.1f}")  # fmt: skip
    print(f"{options.runs} runs each (after one warm-up that writes .pyc); {sys.executable}")
    floors = {"python -c pass": "pass", "python -c 'import click'": "import click"}
    for label, code in floors.items():
        print(_line(label, *_time([sys.executable, "-c", code], options.runs)), flush=True)
    for command in options.commands:
        args = [exe, *command.split(), "--help"]
        print(_line(f"ragaudit {command} --help", *_time(args, options.runs)), flush=True)
    print(_line("ragaudit plan", *_time([exe, "plan"], options.runs)), flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
