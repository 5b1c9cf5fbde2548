"""Exact coverage and width of the 0/1 paired interval (issue 32, item 2).

For a paired 2x2 table of ``n`` questions the counts ``(b, c, rest)`` are trinomial with
probabilities ``(p_b, p_c, 1 - p_b - p_c)`` and the truth is ``p_b - p_c``.  Coverage is
therefore a finite sum over every table, computed here exactly (no simulation, no seed) on a
grid of ``(p_b, p_c)`` for each ``n``:

* ``exact``: McNemar's exact test inverted (``stats.intervals.mcnemar_exact_bounds``, the
  default), the projection of Clopper-Pearson for the share of discordant pairs favouring B and
  Clopper-Pearson for the discordance rate;
* ``tango``: Tango (1998)'s asymptotic score interval (the default before issue 32).

It prints the smallest coverage over the grid (and where), the mean coverage, the mean
expected width, and how many tables of that ``n`` print an interval that disagrees with
McNemar's exact verdict (``p < alpha`` vs "excludes 0").

Usage::

    uv run python benchmarks/coverage_mcnemar.py [--grid 41] [--sizes 10 20 30 60 100 200]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import gammaln

from ragaudit.stats.intervals import mcnemar_exact_bounds, tango_bounds
from ragaudit.stats.mcnemar import mcnemar_pvalue


def tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(b, c)`` with ``b + c <= n``."""
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = b + c <= n
    return b[keep].astype(float), c[keep].astype(float)


def table_probabilities(b: np.ndarray, c: np.ndarray, n: int, pb: float, pc: float) -> np.ndarray:
    """Trinomial probability of each table."""
    rest = n - b - c
    with np.errstate(divide="ignore", invalid="ignore"):
        log = (
            gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(rest + 1)
            + np.where(b > 0, b * np.log(pb), 0.0) + np.where(c > 0, c * np.log(pc), 0.0)
            + np.where(rest > 0, rest * np.log(max(1.0 - pb - pc, 0.0)), 0.0)
        )  # fmt: skip
    return np.nan_to_num(np.exp(log))


def evaluate(
    n: int, grid: int, confidence: float
) -> dict[str, tuple[float, str, float, float, int]]:
    b, c = tables(n)
    alpha = 1.0 - confidence
    pvalue = np.array([mcnemar_pvalue(int(x), int(y)) for x, y in zip(c, b, strict=True)])
    significant = pvalue < alpha
    out = {}
    for name, (low, high) in {
        "exact": mcnemar_exact_bounds(b, c, np.full(b.size, n), confidence),
        "tango": tango_bounds(b, c, np.full(b.size, n), confidence),
    }.items():
        disagree = int(np.sum(((low > 0) | (high < 0)) != significant))
        worst, where, covs, widths = 1.0, "", [], []
        steps = np.linspace(0.0, 1.0, grid)
        for pb in steps:
            for pc in steps:
                if pb + pc > 1.0 + 1e-12 or pb + pc == 0.0:
                    continue
                prob = table_probabilities(b, c, n, pb, pc)
                truth = pb - pc
                cov = float(prob[(low <= truth + 1e-12) & (truth - 1e-12 <= high)].sum())
                covs.append(cov)
                widths.append(float((prob * (high - low)).sum()))
                if cov < worst:
                    worst, where = cov, f"p_b={pb:.3f} p_c={pc:.3f}"
        out[name] = (worst, where, float(np.mean(covs)), float(np.mean(widths)), disagree)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=41, help="points per axis of (p_b, p_c)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 60, 100, 200])
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    print(
        f"# 0/1 paired interval: exact coverage over a {args.grid}x{args.grid} grid of "
        f"(p_b, p_c), {args.confidence:g} intervals (exact enumeration, no seed)"
    )
    print(
        "| n | interval | min coverage | at | mean coverage | mean width "
        "| tables disagreeing with McNemar |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for name, (worst, where, mean, width, disagree) in evaluate(
            n, args.grid, args.confidence
        ).items():
            print(
                f"| {n} | {name} | {worst:.3f} | {where} | {mean:.3f} | {width:.3f} | {disagree} |"
            )


if __name__ == "__main__":
    main()
