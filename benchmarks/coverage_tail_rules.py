"""Candidate rules for widening compare's default to the betting interval (issue 21).

``compare``'s default interval for paired differences (the sign-flip test inverted) misses rare
large drops a sample has not seen.  Each candidate rule says, from the sample alone, when to
also take in the betting interval (Waudby-Smith & Ramdas 2024; valid for every distribution on
[-1, 1]).  For every scenario of ``coverage_stats.SIGNFLIP_SCENARIOS`` this draws seeded
datasets, computes the default with the unseen-tail rule switched off (the real kernel), the
betting interval, and for each candidate the union on the datasets it picks, then the step
that keeps the verdict: an interval reaching past 0 while the exact p < 0.05 ends at 0.  Each
cell is ``coverage / mean width relative to the default without a rule / share of datasets
widened``.  The chosen rule (``stats/unseen_tail.py``) is ``half unchanged & max abs(d) <= 0.25``.

Usage::

    uv run python benchmarks/coverage_tail_rules.py --datasets 500
"""

from __future__ import annotations

import argparse
import importlib

import numpy as np
from coverage_stats import SIGNFLIP_SCENARIOS, signflip_intervals  # benchmarks/ is sys.path[0]

from ragaudit.stats.bounded import bounded_mean_bounds


def _unchanged(d: np.ndarray, share: float) -> np.ndarray:
    return (d == 0).sum(axis=1) >= share * d.shape[1]


def _small(d: np.ndarray, size: float) -> np.ndarray:
    return np.abs(d).max(axis=1) <= size


RULES = {
    "none": lambda d: np.zeros(d.shape[0], dtype=bool),
    "80% unchanged": lambda d: _unchanged(d, 0.8),
    "75% unchanged": lambda d: _unchanged(d, 0.75),
    "< 20 differ": lambda d: (d != 0).sum(axis=1) < 20,
    "< 25 differ": lambda d: (d != 0).sum(axis=1) < 25,
    "half unchanged & max abs(d) <= 0.25 (chosen)": lambda d: _unchanged(d, 0.5) & _small(d, 0.25),
    "half unchanged & max abs(d) <= 0.5": lambda d: _unchanged(d, 0.5) & _small(d, 0.5),
    "20% unchanged & max abs(d) <= 0.25": lambda d: _unchanged(d, 0.2) & _small(d, 0.25),
}


def cells(d, truth, low, high, p, b_low, b_high):
    """One ``coverage / width ratio / share widened`` cell per rule."""
    out = []
    for rule in RULES.values():
        use = rule(d)
        lo, hi = (
            np.where(use, np.minimum(low, b_low), low),
            np.where(use, np.maximum(high, b_high), high),
        )
        cut = (p < 0.05) & (lo <= 0) & (hi >= 0)  # the verdict's p decides about 0
        tiny = np.nextafter(0.0, 1.0)
        positive = d.mean(axis=1) > 0
        lo, hi = np.where(cut & positive, tiny, lo), np.where(cut & ~positive, -tiny, hi)
        covered = np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))
        ratio = np.mean(hi - lo) / np.mean(high - low)
        out.append(f"{covered:.3f} / {ratio:.2f} / {np.mean(use):.2f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # the default without the unseen-tail rule (ragaudit.stats re-exports a function named as
    # the module, hence import_module)
    module = importlib.import_module("ragaudit.stats.signflip_interval")
    module.may_hide_tail = lambda _: False  # type: ignore[attr-defined]
    rng = np.random.default_rng(args.seed)
    print(f"seed {args.seed}; {args.datasets} datasets per scenario; "
          "cell = coverage / width vs no rule / share widened")  # fmt: skip
    print()
    print("| scenario | " + " | ".join(RULES) + " |")
    print("|---|" + "---:|" * len(RULES))
    for label, draw in SIGNFLIP_SCENARIOS.items():
        d, truth = draw(rng, args.datasets)
        low, high, p = signflip_intervals(d, n_permutations=1000)
        b_low, b_high = bounded_mean_bounds(d, -1.0, 1.0, 0.95)
        print(f"| {label} | " + " | ".join(cells(d, truth, low, high, p, b_low, b_high)) + " |")


if __name__ == "__main__":
    main()
