"""Coverage of the $/question interval on skewed, non-negative costs (issue 32, item 3).

Per cell, ``--datasets`` seeded samples of per-question costs with a known mean; for each
interval the coverage, the share of misses above the interval (the mean beyond its upper
end), the median width over the mean, and the share of intervals unbounded above:

* Student's t (the interval before issue 32), clipped at 0;
* Hall (1992)'s skew-corrected t (``stats.amounts.hall_t_bounds``);
* Zhou & Tu (2000)'s two-part lognormal (``stats.amounts.two_part_lognormal_bounds``);
* the printed interval: ``stats.policy.amount_interval`` (their hull; unbounded above with
  fewer than 2 paid questions).

Cells: lognormal costs (sigma 0.3, 1, 2), a share of questions paid (the rest $0: cached or
free), and tails that are not lognormal (gamma with shape 0.5, Pareto with index 3 and 2.5).

Usage::

    uv run python benchmarks/coverage_amounts.py [--datasets 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from scipy.special import stdtrit

from ragaudit.stats.amounts import hall_t_bounds, two_part_lognormal_bounds
from ragaudit.stats.policy import amount_interval

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
CELLS: tuple[tuple[str, Draw, float, int], ...] = (
    *LOGNORMAL_CELLS,
    ("gamma shape 0.5", lambda rng, size, n: rng.gamma(0.5, 1.0, (size, n)), 0.5, 20),
    ("Pareto index 3", lambda rng, size, n: rng.pareto(3.0, (size, n)) + 1, 1.5, 50),
    ("Pareto index 2.5", lambda rng, size, n: rng.pareto(2.5, (size, n)) + 1, 2.5 / 1.5, 200),
)


def student_t(x: np.ndarray, confidence: float) -> tuple[float, float]:
    half = float(stdtrit(x.size - 1, 0.5 + confidence / 2)) * x.std(ddof=1) / np.sqrt(x.size)
    return max(0.0, float(x.mean() - half)), float(x.mean() + half)


def printed(x: np.ndarray, confidence: float) -> tuple[float, float]:
    ci = amount_interval(x, confidence=confidence).confidence_interval
    return ci.low, ci.high


INTERVALS = (
    ("Student t (before)", student_t),
    ("Hall skew-corrected t", hall_t_bounds),
    ("two-part lognormal", two_part_lognormal_bounds),
    ("printed: hull (amount_interval)", printed),
)


def rows(seed: int, size: int) -> list[tuple[str, str, float, float, float, float]]:
    out = []
    for c, (name, draw, truth, n) in enumerate(CELLS):
        samples = draw(np.random.default_rng([seed, c]), size, n)
        for k, (label, bounds) in enumerate(INTERVALS):
            found = np.array([bounds(x, 0.95) for x in samples])
            low, high = found[:, 0], found[:, 1]
            width = np.where(np.isfinite(high), high - low, np.inf) / truth
            out.append(
                (
                    f"{name}, n={n}" if k == 0 else "",
                    label,
                    float(np.mean((low <= truth) & (truth <= high))),
                    float(np.mean(truth > high)),
                    float(np.median(width)),
                    float(np.mean(~np.isfinite(high))),
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"# $/question 95% intervals: coverage on {args.datasets} seeded samples per cell "
        f"(seed {args.seed})\n"
    )
    print("| cell | interval | coverage | misses above | median width / mean | unbounded |")
    print("|---|---|---|---|---|---|")
    for cell, label, cov, above, width, unbounded in rows(args.seed, args.datasets):
        print(f"| {cell} | {label} | {cov:.3f} | {above:.3f} | {width:.2f} | {unbounded:.2f} |")


if __name__ == "__main__":
    main()
