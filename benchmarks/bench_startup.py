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
import resource
import shutil
import statistics
import subprocess
import sys
import time

from _readme import measured, splice, start

COMMANDS = (
    "", "evaluate", "compare", "plan", "run", "demo", "judge", "labels build", "labels bias",
    "funnel", "agreement", "report", "import", "cache stats", "illusions", "explain", "show",
    "calibrate", "chunks", "export", "baseline update",
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


def _row(label: str, walls: list[float], cpus: list[float]) -> str:
    ms = 1000.0
    return (
        f"| {label} | {statistics.median(walls) * ms:.0f} ({min(walls) * ms:.0f}-"
        f"{max(walls) * ms:.0f}) | {statistics.median(cpus) * ms:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--readme", action="store_true", help="also write the table into README.md")
    parser.add_argument("commands", nargs="*", default=list(COMMANDS))
    options = parser.parse_args()
    exe = shutil.which("ragaudit") or sys.exit("ragaudit is not on PATH (use `uv run`)")
    started, load = start("bench_startup")
    print(f"{options.runs} runs each (after one warm-up that writes .pyc); {sys.executable}")
    rows = []
    floors = {"python -c pass": "pass", "python -c 'import click'": "import click"}
    jobs = [(label, [sys.executable, "-c", code]) for label, code in floors.items()]
    jobs += [(f"ragaudit {c} --help".replace("  ", " "), [exe, *c.split(), "--help"])
             for c in options.commands]  # fmt: skip
    jobs.append(("ragaudit plan", [exe, "plan"]))
    for label, args in jobs:
        walls, cpus = _time(args, options.runs)
        print(_line(label, walls, cpus), flush=True)
        rows.append(_row(f"`{label}`", walls, cpus))
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    summary = "\n".join([
        f"{measured(started, load)}  "
        f"`bench_startup.py {' '.join(sys.argv[1:])}`: {options.runs} fresh processes per "
        "command after one warm-up; wall median (min-max) and the median CPU time (user + "
        "sys) of the child, which a loaded machine inflates less than the wall clock.",
        "",
        "| command | wall ms | CPU ms |",
        "|---|---:|---:|",
        *rows,
    ])  # fmt: skip
    print("\n" + summary)
    if options.readme:
        splice("bench_startup", summary)
        print("README.md updated (between the <!-- bench_startup --> markers)")


if __name__ == "__main__":
    main()
