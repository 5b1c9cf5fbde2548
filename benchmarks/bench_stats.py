"""Speed of ragaudit's paired statistics against scipy on the same data.

Workload (the one the issue sets): 7 metrics x 1,000 paired questions, a paired bootstrap
interval with 10,000 resamples and a paired permutation test with 10,000 random sign flips,
for every metric.

* ragaudit: ``compare_runs`` end to end on in-memory runs (one shared index matrix for all
  metrics, resampled in bounded-memory batches), plus its two kernels timed separately;
* scipy: ``scipy.stats.bootstrap(paired=True, vectorized=True)`` and
  ``scipy.stats.permutation_test(permutation_type="samples", vectorized=True)``, each called
  once with all 7 metrics along an axis (scipy's fastest use);
* the exact and score methods of issue 11, each beside the closest scipy call: the exact
  lattice sign-flip p of the 4 binary metrics (McNemar exact, any n) vs
  ``scipy.stats.binomtest``; Tango's score interval of the 4 binary differences vs the scipy
  paired bootstrap it replaces; Clopper-Pearson for 4 funnel rates vs
  ``scipy.stats.binomtest(...).proportion_ci(method="exact")``;
* the betting interval (Waudby-Smith-Ramdas) of the 3 fractional differences (``compare
  --ci betting``) and the sign-flip inversion with its p (``compare``'s default) vs the scipy
  paired bootstrap; ``compare_runs``
  both with its default intervals and with ``method="bootstrap"`` (the bootstrap for every
  metric, the workload above);
* planning: the exact 5 x 3 planning table (``planning_table``) against a Monte Carlo estimate
  of the same table with 600 trials per candidate effect, the chapter's method.

Every call runs ``--repeat`` times (default 5); the table gives the median and the range
(min-max) of the wall times, and the speed-up is the ratio of the medians.  The intervals of
the two tools are checked to agree within Monte Carlo error.  Prints a markdown table;
``--readme`` also writes it into README.md between the ``<!-- bench_stats -->`` markers.

Usage::

    uv run python benchmarks/bench_stats.py [--readme]

This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
from _readme import measured, splice, start
from scipy import stats

from ragaudit.stats import PerQuestionMetrics, compare_runs, planning_table
from ragaudit.stats._group import group_signflip
from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.intervals import clopper_pearson_bounds, tango_bounds
from ragaudit.stats.permutation import exact_pvalue, monte_carlo_pvalues
from ragaudit.stats.resampling import _bootstrap_means, _interval

N_QUESTIONS, N_METRICS = 1000, 7
RESAMPLES = PERMUTATIONS = 10_000


def timed(repeat: int, call: Callable[[], object]) -> tuple[list[float], object]:
    """Wall times of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - began)
    return times, result


def spread(times: list[float]) -> str:
    """``median (min-max)`` in milliseconds."""
    ms = [1000 * t for t in times]
    return f"{statistics.median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f})"


def make_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded per-question values of two systems, shape (metrics, questions)."""
    rng = np.random.default_rng(seed)
    a = rng.random((N_METRICS, N_QUESTIONS))
    b = np.clip(a + rng.normal(0.01, 0.15, a.shape), 0, 1)
    a[3:] = a[3:] > 0.3  # a few binary metrics, as in a real comparison
    b[3:] = b[3:] > 0.31
    return a, b


def as_runs(a: np.ndarray, b: np.ndarray) -> tuple[PerQuestionMetrics, PerQuestionMetrics]:
    ids = [f"q{i:04d}" for i in range(N_QUESTIONS)]
    names = [f"m{j}" for j in range(N_METRICS)]

    def run(values: np.ndarray, name: str) -> PerQuestionMetrics:
        rows = {q: {m: float(values[j, i]) for j, m in enumerate(names)} for i, q in enumerate(ids)}
        return PerQuestionMetrics(name, rows)

    return run(a, "A"), run(b, "B")


def mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def simulated_mde(n: int, disagree: float, trials: int, rng: np.random.Generator) -> float | None:
    """The chapter's method: estimate power by simulation on the 0.01 grid."""
    steps = round(disagree * 100)
    for step in range(1, steps + 1):
        effect = step / 100
        outcome = rng.multinomial(
            n, [(disagree - effect) / 2, (disagree + effect) / 2, 1 - disagree], size=trials
        )
        low = np.minimum(outcome[:, 0], outcome[:, 1])
        p = np.minimum(1, 2 * stats.binom.cdf(low, outcome[:, 0] + outcome[:, 1], 0.5))
        if np.mean(p <= 0.05) >= 0.8:
            return effect
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--readme", action="store_true", help="also write the table into README.md")
    args = parser.parse_args()
    started, load = start(f"bench_stats  seed={args.seed}")
    a, b = make_data(args.seed)
    run_a, run_b = as_runs(a, b)
    diffs = (b - a).T.copy()

    def our_compare(method: str) -> object:
        return compare_runs(
            run_a,
            run_b,
            n_resamples=RESAMPLES,
            n_permutations=PERMUTATIONS,
            seed=args.seed,
            subsample_sizes=(),
            method=method,
        )

    def scipy_bootstrap(x: np.ndarray, y: np.ndarray, method: str = "percentile") -> object:
        return stats.bootstrap(
            (x, y),
            mean_diff,
            paired=True,
            vectorized=True,
            axis=-1,
            n_resamples=RESAMPLES,
            method=method,
            rng=args.seed,
        )

    t_compare, comparison = timed(args.repeat, lambda: our_compare("auto"))
    t_compare_boot, _ = timed(args.repeat, lambda: our_compare("bootstrap"))

    def our_bootstrap() -> tuple[np.ndarray, np.ndarray]:
        theta = _bootstrap_means(diffs, RESAMPLES, np.random.default_rng(args.seed))
        return _interval(theta, diffs, 0.95, "percentile")

    def our_bca() -> tuple[np.ndarray, np.ndarray]:
        theta = _bootstrap_means(diffs, RESAMPLES, np.random.default_rng(args.seed))
        return _interval(theta, diffs, 0.95, "bca")

    t_boot, ours_ci = timed(args.repeat, our_bootstrap)
    t_bca, _ = timed(args.repeat, our_bca)
    t_perm, _ = timed(
        args.repeat,
        lambda: monte_carlo_pvalues(diffs, PERMUTATIONS, np.random.default_rng(args.seed)),
    )
    binary = diffs[:, 3:]
    t_lattice, ours_exact = timed(
        args.repeat, lambda: [exact_pvalue(np.ascontiguousarray(col), 20) for col in binary.T]
    )
    b_only, a_only = (binary > 0).sum(axis=0), (binary < 0).sum(axis=0)
    t_sp_binom, sp_exact = timed(
        args.repeat,
        lambda: [
            stats.binomtest(int(min(x, y)), int(x + y), 0.5).pvalue
            for x, y in zip(b_only, a_only, strict=True)
        ],
    )
    exact_gap = max(
        abs(ours[0] - theirs)  # type: ignore[index]
        for ours, theirs in zip(ours_exact, sp_exact, strict=True)  # type: ignore[call-overload]
    )
    n_binary = np.full(binary.shape[1], N_QUESTIONS)
    t_tango, _ = timed(args.repeat, lambda: tango_bounds(b_only, a_only, n_binary, 0.95))
    t_sp_boot_binary, _ = timed(args.repeat, lambda: scipy_bootstrap(a[3:], b[3:]))
    fractional = diffs[:, :3].T
    t_betting, _ = timed(
        args.repeat,
        lambda: bounded_mean_bounds(fractional, -1.0, 1.0, 0.95),
    )
    t_sp_boot_fractional, _ = timed(args.repeat, lambda: scipy_bootstrap(a[:3], b[:3]))
    t_signflip, _ = timed(
        args.repeat,
        lambda: group_signflip(
            np.ascontiguousarray(diffs[:, :3]), [0, 1, 2], [True] * 3, PERMUTATIONS, 20, 0.95,
            args.seed, np.ones(N_QUESTIONS, dtype=bool), [],
        ),
    )  # fmt: skip
    kept = np.array([990, 950, 900, 850])
    t_cp, ours_cp = timed(
        args.repeat, lambda: clopper_pearson_bounds(kept, np.full(4, N_QUESTIONS), 0.95)
    )
    t_sp_cp, sp_cp = timed(
        args.repeat,
        lambda: [
            stats.binomtest(int(k), N_QUESTIONS).proportion_ci(0.95, method="exact") for k in kept
        ],
    )
    cp_gap = float(np.max(np.abs(ours_cp[0] - [ci.low for ci in sp_cp])))  # type: ignore[attr-defined, index]

    t_sp_boot, sp_ci = timed(args.repeat, lambda: scipy_bootstrap(a, b))
    t_sp_bca, _ = timed(args.repeat, lambda: scipy_bootstrap(a, b, "BCa"))
    t_sp_perm, _ = timed(
        args.repeat,
        lambda: stats.permutation_test(
            (a, b),
            mean_diff,
            permutation_type="samples",
            vectorized=True,
            axis=-1,
            n_resamples=PERMUTATIONS,
            rng=args.seed,
        ),
    )

    low_gap = np.max(np.abs(ours_ci[0] - sp_ci.confidence_interval.low))  # type: ignore[attr-defined]
    ns, rates = [20, 42, 100, 300, 1000], [0.1, 0.2, 0.3]
    t_plan, _ = timed(args.repeat, lambda: planning_table(ns, rates))
    sim_rng = np.random.default_rng(args.seed)
    t_sim, _ = timed(1, lambda: [simulated_mde(n, d, 600, sim_rng) for n in ns for d in rates])

    t_sp_both = [x + y for x, y in zip(t_sp_boot, t_sp_perm, strict=True)]
    rows = [
        ("paired bootstrap, percentile (7 x 1000, 10k)", t_boot, t_sp_boot),
        ("paired bootstrap, BCa (7 x 1000, 10k)", t_bca, t_sp_bca),
        ("paired permutation test, Monte Carlo (7 x 1000, 10k)", t_perm, t_sp_perm),
        ("exact lattice p, 4 binary x 1000 (vs binomtest = McNemar exact)", t_lattice, t_sp_binom),
        ("Tango score interval, 4 binary x 1000 (vs paired bootstrap)", t_tango, t_sp_boot_binary),
        ("Clopper-Pearson, 4 rates (vs binomtest proportion_ci exact)", t_cp, t_sp_cp),
        (
            "betting interval, 3 fractional x 1000 (vs paired bootstrap)",
            t_betting,
            t_sp_boot_fractional,
        ),
        (
            "sign-flip inversion + its p, 3 fractional x 1000, 10k flips (vs paired bootstrap)",
            t_signflip,
            t_sp_boot_fractional,
        ),
        (
            "both, full `compare_runs` (ours, default) vs bootstrap + permutation (scipy)",
            t_compare,
            t_sp_both,
        ),
        (
            "both, full `compare_runs --ci bootstrap` (ours) vs bootstrap + permutation (scipy)",
            t_compare_boot,
            t_sp_both,
        ),
    ]
    rows.append(("planning table 5 x 3, exact (ours) vs 600-trial simulation", t_plan, t_sim))
    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}")
    print(f"largest |ours - scipy| percentile lower endpoint: {low_gap:.5f} (Monte Carlo error)")
    print(f"largest |ours - binomtest| exact p: {exact_gap:.2e}; Clopper-Pearson low: {cp_gap:.2e}")
    print(f"compare_runs p methods: {[m.p_method for m in comparison.metrics]}")  # type: ignore[attr-defined]
    print(f"compare_runs verdicts: {[m.verdict for m in comparison.metrics]}")  # type: ignore[attr-defined]
    table = [
        "| task | ragaudit ms | scipy ms | speed-up (medians) |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {spread(ours)} | {spread(theirs)} | "
            f"{statistics.median(theirs) / statistics.median(ours):.1f}x |"
            for name, ours, theirs in rows
        ),
    ]
    summary = "\n".join([
        f"{measured(started, load)}  `{' '.join(['bench_stats.py', *sys.argv[1:]])}`: "
        f"median (min-max) wall milliseconds of {args.repeat} calls each in one process (the "
        "simulation: 1 call), numpy "
        f"{np.__version__}, scipy {__import__('scipy').__version__}, seed {args.seed}.",
        "",
        *table,
    ])  # fmt: skip
    print("\n## summary\n\n" + summary + "\n")
    if args.readme:
        splice("bench_stats", summary)
        print("README.md updated (between the <!-- bench_stats --> markers)")


if __name__ == "__main__":
    main()
