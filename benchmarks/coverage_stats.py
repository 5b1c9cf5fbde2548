"""Coverage of ragaudit's 95% intervals on the data RAG evaluations have (issue 11).

Each scenario draws ``--datasets`` seeded datasets from a known truth, computes the interval
ragaudit prints, and counts how often it contains the truth.  The Monte Carlo error of a
coverage ``c`` estimated from ``R`` datasets is ``sqrt(c (1 - c) / R)``.  The previous default
of each row is measured too, for comparison.

Scenarios
---------
* paired binary difference (``compare``, a 0/1 metric), n = 30, P(A only) = 3%, P(B only) = 5%
  (and 10% / 15%); the rest split evenly between "both right" and "both wrong";
* a funnel stage rate of 0.98 at n = 50 (and the unanswerable block: rate 0.9 at n = 6);
* the funnel's gap ``stage-1 rate - end-to-end correct`` at n = 50: stage 1 passes with
  probability 0.98, a question that passed is answered correctly with probability 0.85, one
  that did not with probability 0.3 (luck); Tango's paired score interval from the
  (stage 1 passed but wrong, lucky) counts, and the paired percentile bootstrap it replaced.

* the dashboard's means of fractional scores (recall@k, nDCG@k, precision@k, faithfulness):
  datasets of per-question scores where most questions share one value, and a harsher family
  (95% at 1, 4% at 0.95, 1% at 0: a judge's rare total failure) at n = 10, 20, 50, 200; the
  betting interval (``stats/bounded.py``, Waudby-Smith & Ramdas 2024), the Korn-Graubard MOVER
  interval it replaced and the percentile bootstrap before that.

* ``compare``'s paired differences of fractional scores (``d = b - a`` in [-1, 1]): most
  questions do not change (recall, MRR), or all shift together (precision@k when k doubles),
  and rare large drops (90% unchanged, 5% +0.05, 4% -0.05, 1% -1) at n = 20, 50, 200; the same
  three intervals.  ``width`` is the mean width of the intervals: the price of a guarantee for
  every distribution.

Usage::

    uv run python benchmarks/coverage_stats.py            # prints the markdown table

The slow tests in ``tests/stats/test_coverage.py`` assert the same scenarios (fewer datasets).
"""

from __future__ import annotations

import argparse

import numpy as np

from ragaudit.stats.bounded import bounded_mean_bounds, kg_mover_bounds
from ragaudit.stats.intervals import clopper_pearson_bounds, tango_bounds, wilson_bounds
from ragaudit.stats.resampling import _bootstrap_means, _interval


def paired_tables(rng: np.random.Generator, n: int, a_only: float, b_only: float, size: int):
    """``(a_only, b_only, n)`` counts of ``size`` paired 2x2 tables."""
    rest = (1.0 - a_only - b_only) / 2
    counts = rng.multinomial(n, [a_only, b_only, rest, rest], size=size)
    return counts[:, 0], counts[:, 1]


def bootstrap_paired_binary(rng, n, a_only, b_only, size, n_resamples=2000):
    """The previous default: percentile bootstrap of the per-question differences."""
    lows, highs = np.empty(size), np.empty(size)
    c, b = paired_tables(rng, n, a_only, b_only, size)
    for i in range(size):
        d = np.concatenate([-np.ones(c[i]), np.ones(b[i]), np.zeros(n - c[i] - b[i])])[:, None]
        theta = _bootstrap_means(d, n_resamples, rng)
        low, high = _interval(theta, d, 0.95, "percentile")
        lows[i], highs[i] = low[0], high[0]
    return lows, highs


def gap_datasets(rng, n, size):
    """Per dataset: the per-question gap indicator ``hit - correct`` (values -1, 0, 1)."""
    hit = rng.random((size, n)) < 0.98
    correct = np.where(hit, rng.random((size, n)) < 0.85, rng.random((size, n)) < 0.3)
    truth = 0.98 - (0.98 * 0.85 + 0.02 * 0.3)
    return hit.astype(float) - correct.astype(float), truth


def gap_tango(rng, n, size):
    diffs, truth = gap_datasets(rng, n, size)
    low, high = tango_bounds(
        (diffs > 0).sum(axis=1), (diffs < 0).sum(axis=1), np.full(size, n), 0.95
    )
    return coverage(low, high, truth)


def gap_bootstrap(rng, n, size, n_resamples=2000):
    diffs, truth = gap_datasets(rng, n, size)
    inside = 0
    for row in diffs:
        d = row[:, None]
        theta = _bootstrap_means(d, n_resamples, rng)
        low, high = _interval(theta, d, 0.95, "percentile")
        inside += bool(low[0] <= truth <= high[0])
    return inside / size


# name: (values, probabilities, n) of one question's score
MEAN_SCENARIOS = {
    "recall@k near 1 (97% at 1, 2% at 0.5, 1% at 0), n=50": ([1, 0.5, 0], [0.97, 0.02, 0.01], 50),
    "recall@k, 99% at 1 and 1% at 0.5, n=50": ([1, 0.5], [0.99, 0.01], 50),
    "nDCG@k (85% at 1, rest 0.63/0.5/0), n=54": (
        [1, 0.63, 0.5, 0],
        [0.85, 0.08, 0.04, 0.03],
        54,
    ),
    "precision@3 (97% at 1/3, 3% at 2/3), n=54": ([1 / 3, 2 / 3], [0.97, 0.03], 54),
    "precision@3, dense (0, 1/3, 2/3, 1), n=54": ([0, 1 / 3, 2 / 3, 1], [0.1, 0.6, 0.25, 0.05], 54),
    "faithfulness (95% at 1, 5% spread over 0-0.8), n=50": (
        [1, 0.8, 0.6, 0.4, 0.2, 0],
        [0.95, 0.02, 0.01, 0.01, 0.005, 0.005],
        50,
    ),
    **{
        f"95% at 1, 4% at 0.95, 1% at 0, n={n}": ([1, 0.95, 0], [0.95, 0.04, 0.01], n)
        for n in (10, 20, 50, 200)
    },
}


# name: (values, probabilities, n) of one question's paired difference b - a
PAIRED_SCENARIOS = {
    "recall@k, 5% of questions change, n=50": ([0, 0.5, -0.5, 1], [0.95, 0.03, 0.01, 0.01], 50),
    "MRR, 8% change, n=50": (
        [0, 0.5, -0.5, 1 / 3, -1 / 6, 1],
        [0.92, 0.02, 0.02, 0.02, 0.01, 0.01],
        50,
    ),
    "precision@k, k doubled (85% at -1/6), n=54": (
        [-1 / 6, -1 / 3, 0, 1 / 6],
        [0.85, 0.08, 0.05, 0.02],
        54,
    ),
    "nDCG@k, 30% change, n=54": (
        [0, 0.37, -0.37, 0.13, -0.13, 0.5, -1],
        [0.7, 0.08, 0.05, 0.07, 0.04, 0.04, 0.02],
        54,
    ),
    **{
        f"rare large drops (1% at -1, 4% at -0.05, 5% at +0.05), n={n}": (
            [0, 0.05, -0.05, -1],
            [0.9, 0.05, 0.04, 0.01],
            n,
        )
        for n in (20, 50, 200)
    },
}


def mean_datasets(rng, values, probs, n, size):
    """``size`` datasets of scores, each row's median (the centre), and the true mean."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    x = values[rng.choice(len(values), size=(size, n), p=probs)]
    return x, np.median(x, axis=1), float(values @ probs)


def mean_bootstrap(x, n_resamples=2000, rng=None):
    """The previous dashboard interval: percentile bootstrap of each row's mean."""
    lows, highs = np.empty(len(x)), np.empty(len(x))
    for i, row in enumerate(x):
        theta = _bootstrap_means(row[:, None], n_resamples, rng)
        low, high = _interval(theta, row[:, None], 0.95, "percentile")
        lows[i], highs[i] = low[0], high[0]
    return lows, highs


def bounded_rows(rng, prefix, scenarios, bounds, before, size, bootstrap_size):
    """Table rows of the betting interval, Korn-Graubard MOVER and the bootstrap, per scenario."""
    rows = []
    for label, (values, probs, n) in scenarios.items():
        x, centres, truth = mean_datasets(rng, values, probs, n, size)
        for scenario, name, (low, high), count in (
            (
                f"{prefix}: {label}",
                "betting, Waudby-Smith-Ramdas (default)",
                bounded_mean_bounds(x, *bounds, 0.95),
                size,
            ),
            ("", "Korn-Graubard MOVER (before)", kg_mover_bounds(x, centres, *bounds, 0.95), size),
            ("", before, mean_bootstrap(x[:bootstrap_size], rng=rng), bootstrap_size),
        ):
            zero = f"width {np.mean(high - low):.3f}; {int(np.sum(high - low <= 0))} zero-width"
            rows.append((scenario, name, coverage(low, high, truth), count, zero))
    return rows


def coverage(low, high, truth) -> float:
    return float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--bootstrap-datasets", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    size = args.datasets
    rows = []
    for a_only, b_only in ((0.03, 0.05), (0.10, 0.15)):
        c, b = paired_tables(rng, 30, a_only, b_only, size)
        low, high = tango_bounds(b, c, np.full(size, 30), 0.95)
        zero = int(np.sum(high - low <= 0))
        rows.append(
            (
                f"paired binary difference, n=30, {a_only:.0%} A only / {b_only:.0%} B only",
                "Tango score (default)",
                coverage(low, high, b_only - a_only),
                size,
                f"{zero} zero-width",
            )
        )
        boot_low, boot_high = bootstrap_paired_binary(
            rng, 30, a_only, b_only, args.bootstrap_datasets
        )
        rows.append(
            (
                "",
                "percentile bootstrap (before)",
                coverage(boot_low, boot_high, b_only - a_only),
                args.bootstrap_datasets,
                f"{int(np.sum(boot_high - boot_low <= 0))} zero-width",
            )
        )
    for rate, n in ((0.98, 50), (0.9, 6)):
        k = rng.binomial(n, rate, size)
        label = f"single rate {rate} at n={n}" + (" (stage 1)" if n == 50 else " (unanswerable)")
        for name, (low, high) in (
            ("Clopper-Pearson (default)", clopper_pearson_bounds(k, np.full(size, n), 0.95)),
            ("Wilson", wilson_bounds(k, np.full(size, n), 0.95)),
            (
                "Wilson, continuity-corrected",
                wilson_bounds(k, np.full(size, n), 0.95, correction=True),
            ),
        ):
            rows.append((label, name, coverage(low, high, rate), size, ""))
            label = ""
    rows.append(
        (
            "funnel gap, n=50 (stage-1 0.98, correct 0.85 / luck 0.3)",
            "Tango score, paired (default)",
            gap_tango(rng, 50, size),
            size,
            "",
        )
    )
    rows.append(
        (
            "",
            "paired percentile bootstrap (before)",
            gap_bootstrap(rng, 50, args.bootstrap_datasets),
            args.bootstrap_datasets,
            "",
        )
    )
    for prefix, scenarios, bounds, before in (
        ("dashboard mean", MEAN_SCENARIOS, (0.0, 1.0), "percentile bootstrap (earlier)"),
        (
            "compare, paired difference",
            PAIRED_SCENARIOS,
            (-1.0, 1.0),
            "paired percentile bootstrap (earlier)",
        ),
    ):
        rows += bounded_rows(rng, prefix, scenarios, bounds, before, size, args.bootstrap_datasets)
    print(f"seed {args.seed}; nominal level 0.95; error = Monte Carlo standard error")
    print()
    print("| scenario | interval | coverage | ± error | datasets | note |")
    print("|---|---|---:|---:|---:|---|")
    for scenario, name, value, count, note in rows:
        error = np.sqrt(value * (1 - value) / count)
        print(f"| {scenario} | {name} | {value:.3f} | {error:.3f} | {count} | {note} |")


if __name__ == "__main__":
    main()
