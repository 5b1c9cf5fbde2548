"""Type-I error of the sign-flip verdict when the differences are skewed (issue 32, item 4).

The paired sign-flip test is exact when, under "no change", each difference is as likely to be
``+d`` as ``-d`` (symmetric differences).  A change can have mean 0 and still be skewed: most
questions gain a little, a few lose a lot.  For a two-point difference, ``+a`` with probability
``1 - q`` and ``-b`` with probability ``q`` (``a (1 - q) = b q``, mean 0, skewness
``(2q - 1) / sqrt(q (1 - q))``), the sample is fixed by the number ``k ~ Bin(n, q)`` of losses,
so the rejection rate of ``compare``'s verdict (its exact p-value,
``stats.permutation.exact_pvalue``, at alpha 0.05) is a finite sum over ``k``: exact, no seed.

The sign-flip p-value does not depend on the scale, so ``q`` alone sets the row; the issue's
case is ``+0.05`` w.p. 0.8 and ``-0.2`` w.p. 0.2 (``q = 0.2``, skewness -1.5).

Usage::

    uv run python benchmarks/signflip_null_skew.py [--sizes 6 8 10 12 15 20 30 50 100]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import comb

from ragaudit.stats.permutation import exact_pvalue

LOSS_PROBABILITIES = (0.05, 0.1, 0.2, 0.3, 0.5)


def skewness(q: float) -> float:
    """Skewness of ``+a`` w.p. ``1 - q``, ``-b`` w.p. ``q`` with mean 0."""
    return (2 * q - 1) / np.sqrt(q * (1 - q))


def type_one_error(n: int, q: float, alpha: float = 0.05) -> float:
    """Exact rejection rate at mean 0 (the sum over the number of losses)."""
    gain, loss = q, -(1 - q)  # a (1 - q) = b q with a = q, b = 1 - q
    total = 0.0
    for k in range(n + 1):
        d = np.array([loss] * k + [gain] * (n - k))
        found = exact_pvalue(d, 20)
        if found is None:
            raise SystemExit(f"n={n}, k={k}: no exact p-value")
        if found[0] < alpha:
            total += comb(n, k, exact=True) * q**k * (1 - q) ** (n - k)
    return float(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6, 8, 10, 12, 15, 20, 30, 50, 100])
    args = parser.parse_args()
    print("# Type-I error of the sign-flip verdict at alpha 0.05, mean-0 two-point differences")
    print("(exact: a sum over the number of losses; no seed)\n")
    head = " | ".join(f"q={q:g} (skew {skewness(q):+.2f})" for q in LOSS_PROBABILITIES)
    print(f"| n | {head} |")
    print("|---|" + "---|" * len(LOSS_PROBABILITIES))
    for n in args.sizes:
        cells = " | ".join(f"{type_one_error(n, q):.3f}" for q in LOSS_PROBABILITIES)
        print(f"| {n} | {cells} |")


if __name__ == "__main__":
    main()
