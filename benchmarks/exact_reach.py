"""Where the exact sign-flip p stops and Monte Carlo starts, for differences at 4 decimals.

For each spread (normal differences with sd 0.03, 0.1, 0.3, rounded to 4 decimals: the
lattice unit is 1e-4) and each number of questions, one seeded data set goes through
``stats.permutation.exact_pvalue`` (what ``compare`` calls): the table gives the method it
used (``exact (lattice)``: direct convolution; ``exact (lattice, FFT)``: FFT convolution of
scaled binomials; ``Monte Carlo`` when neither is affordable), the sum of the lattice steps K
that sets the cost, and the time of the call (median of ``--repeat`` runs): CPU seconds of
this process, and wall seconds, which include whatever else the machine is doing.

Usage::

    uv run python benchmarks/exact_reach.py [--seed 0] [--repeat 3]

A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ragaudit.stats.permutation import exact_pvalue

SPREADS = (0.03, 0.1, 0.3)
SIZES = (300, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 40_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"seed {args.seed}, median of {args.repeat} calls\n")
    print("| sd of the differences | n | K = sum of steps | p method | p | CPU s | wall s |")
    print("|---:|---:|---:|---|---:|---:|---:|")
    for sd in SPREADS:
        for n in SIZES:
            rng = np.random.default_rng([args.seed, n, int(sd * 1e4)])
            d = np.round(rng.normal(0.0, sd, n), 4)
            steps = int(np.rint(np.abs(d) * 1e4).sum())
            cpu, wall, found = [], [], None
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                found = exact_pvalue(d, 20)
                wall.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            method = "Monte Carlo" if found is None else found[1]
            p = "" if found is None else f"{found[0]:.4f}"
            print(
                f"| {sd} | {n:,} | {steps:,} | {method} | {p} | "
                f"{statistics.median(cpu):.2f} | {statistics.median(wall):.2f} |"
            )


if __name__ == "__main__":
    main()
