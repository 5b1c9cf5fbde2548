"""Coverage of the $/question interval on skewed, non-negative costs (issue 32, item 3).

Per cell, ``--datasets`` seeded samples of per-question costs with a known mean; for each
interval the coverage, the share of misses above the interval (the mean beyond its upper
end), the median width over the mean, and the share of intervals unbounded above:

* Student's t (the interval before issue 32), clipped at 0;
* Hall (1992)'s skew-corrected t (``stats.amounts.hall_t_bounds``);
* Zhou & Tu (2000)'s two-part lognormal (``stats.amounts.two_part_lognormal_bounds``);
* the symmetric t with Hall's Edgeworth correction (``stats.amounts.symmetric_edgeworth_bounds``);
* the hull of Hall's and the two-part interval (the printed interval before the symmetric one
  joined);
* the printed interval: ``stats.policy.amount_interval`` (the hull of the three; unbounded
  above with fewer than 2 paid questions).

Cells: lognormal costs (sigma 0.3, 1, 2), a share of questions paid (the rest $0: cached or
free), and tails that are not lognormal (gamma with shape 0.5, Pareto with index 3 and 2.5;
then Pareto cells added with the symmetric interval, heavier or smaller than those two: index
2.2 at n = 100, index 3 at n = 20, index 2.5 at n = 50).  Each cell draws from its own seed
``[seed, cell]``, so adding cells at the end leaves the others' samples as they were.

``--candidates`` adds a second table: on the Pareto cells, the intervals from the literature
that were measured against the printed one (``benchmarks/_amount_candidates.py``; the
resampling ones take seed 0 and 999 resamples).  ``--docs`` writes both tables into
docs/guide/stats.md between their markers.

Usage::

    uv run python benchmarks/coverage_amounts.py [--datasets 2000] [--seed 0] [--candidates]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _amount_candidates import CANDIDATES, RESAMPLES, SEED
from _readme import splice
from scipy.special import stdtrit

from ragaudit.stats.amounts import (
    hall_t_bounds,
    symmetric_edgeworth_bounds,
    two_part_lognormal_bounds,
)
from ragaudit.stats.policy import amount_interval

DOCS = Path(__file__).resolve().parent.parent / "docs" / "guide" / "stats.md"
Draw = Callable[[np.random.Generator, int, int], np.ndarray]


def _lognormal(sigma: float, paid: float = 1.0) -> tuple[Draw, float]:
    def draw(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
        costs = rng.lognormal(0.0, sigma, (size, n))
        return costs if paid == 1.0 else np.where(rng.random((size, n)) < paid, costs, 0.0)

    return draw, paid * float(np.exp(sigma**2 / 2))


LOGNORMAL_CELLS: tuple[tuple[str, Draw, float, int], ...] = tuple(
    (name, *_lognormal(sigma, paid), n)
    for name, sigma, paid, n in (
        ("lognormal sigma 0.3", 0.3, 1.0, 20),
        ("lognormal sigma 1", 1.0, 1.0, 20),
        ("lognormal sigma 1", 1.0, 1.0, 100),
        ("lognormal sigma 2", 2.0, 1.0, 20),
        ("lognormal sigma 2", 2.0, 1.0, 500),
        ("5% paid, lognormal sigma 1", 1.0, 0.05, 20),
        ("5% paid, lognormal sigma 1", 1.0, 0.05, 200),
        ("30% paid, lognormal sigma 1", 1.0, 0.3, 50),
    )
)


def _pareto(index: float) -> tuple[Draw, float]:
    def draw(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
        return rng.pareto(index, (size, n)) + 1  # Pareto with minimum 1: mean index/(index - 1)

    return draw, index / (index - 1)


PARETO_CELLS: tuple[tuple[str, Draw, float, int], ...] = tuple(
    (f"Pareto index {index:g}", *_pareto(index), n)
    for index, n in ((3.0, 50), (2.5, 200), (2.2, 100), (3.0, 20), (2.5, 50))
)
CELLS: tuple[tuple[str, Draw, float, int], ...] = (
    *LOGNORMAL_CELLS,
    ("gamma shape 0.5", lambda rng, size, n: rng.gamma(0.5, 1.0, (size, n)), 0.5, 20),
    *PARETO_CELLS,
)


def student_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    half = float(stdtrit(x.size - 1, 0.5 + confidence / 2)) * x.std(ddof=1) / np.sqrt(x.size)
    return max(0.0, float(x.mean() - half)), float(x.mean() + half)


def hull_before(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """The printed interval before the symmetric one joined: the hull of Hall's and two-part."""
    hall, part = hall_t_bounds(x, confidence), two_part_lognormal_bounds(x, confidence)
    return max(0.0, min(hall[0], part[0])), max(hall[1], part[1])


def printed(x: np.ndarray, confidence: float) -> tuple[float, float]:
    ci = amount_interval(x, confidence=confidence).confidence_interval
    return ci.low, ci.high


INTERVALS = (
    ("Student t (before)", student_t),
    ("Hall skew-corrected t", hall_t_bounds),
    ("two-part lognormal", two_part_lognormal_bounds),
    ("symmetric Edgeworth t", symmetric_edgeworth_bounds),
    ("hull of Hall and two-part (printed before)", hull_before),
    ("printed: hull of the three (amount_interval)", printed),
)


def _measure(
    samples: np.ndarray, truth: float, bounds: Callable[[np.ndarray, float], tuple[float, float]]
) -> tuple[float, float, float, float, float]:
    """Coverage, misses above, misses below, median width / mean, share unbounded above."""
    found = np.array([bounds(x, 0.95) for x in samples])
    low, high = found[:, 0], found[:, 1]
    width = np.where(np.isfinite(high), high - low, np.inf) / truth
    return (
        float(np.mean((low <= truth) & (truth <= high))),
        float(np.mean(truth > high)),
        float(np.mean(truth < low)),
        float(np.median(width)),
        float(np.mean(~np.isfinite(high))),
    )


def table(seed: int, size: int) -> str:
    lines = [
        "| cell | interval | coverage | misses above | median width / mean | unbounded |",
        "|---|---|---|---|---|---|",
    ]
    for c, (name, draw, truth, n) in enumerate(CELLS):
        samples = draw(np.random.default_rng([seed, c]), size, n)
        for k, (label, bounds) in enumerate(INTERVALS):
            cov, above, _, width, unbounded = _measure(samples, truth, bounds)
            cell = f"{name}, n={n}" if k == 0 else ""
            lines.append(
                f"| {cell} | {label} | {cov:.3f} | {above:.3f} | {width:.2f} | {unbounded:.2f} |"
            )
    return "\n".join(lines)


def candidates_table(seed: int, size: int) -> str:
    lines = [
        "| cell | interval | coverage | misses above | misses below | median width / mean |",
        "|---|---|---|---|---|---|",
    ]
    first = len(CELLS) - len(PARETO_CELLS)
    methods = (INTERVALS[1], *CANDIDATES, *INTERVALS[3:])
    for c, (name, draw, truth, n) in enumerate(PARETO_CELLS, start=first):
        samples = draw(np.random.default_rng([seed, c]), size, n)
        for k, (label, bounds) in enumerate(methods):
            cov, above, below, width, _ = _measure(samples, truth, bounds)
            cell = f"{name}, n={n}" if k == 0 else ""
            lines.append(
                f"| {cell} | {label} | {cov:.3f} | {above:.3f} | {below:.3f} | {width:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--candidates", action="store_true", help="also the literature's")
    parser.add_argument("--docs", action="store_true", help="write docs/guide/stats.md")
    args = parser.parse_args()
    print(
        f"# $/question 95% intervals: coverage on {args.datasets} seeded samples per cell "
        f"(seed {args.seed})\n"
    )
    main_table = table(args.seed, args.datasets)
    print(main_table, flush=True)
    if args.docs:
        splice("coverage_amounts", main_table, DOCS)
    if args.candidates:
        print(
            f"\n# Pareto cells: the literature's intervals (resampling: seed {SEED}, "
            f"{RESAMPLES} resamples per sample)\n"
        )
        other = candidates_table(args.seed, args.datasets)
        print(other)
        if args.docs:
            splice("coverage_amounts_candidates", other, DOCS)
    sys.exit(0)


if __name__ == "__main__":
    main()
