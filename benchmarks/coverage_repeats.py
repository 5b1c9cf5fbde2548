"""Coverage of a run's mean over repeated generations: the question as the unit vs pooled Wilson.

Each of ``--questions`` questions has a success rate ``p_i``; each is run ``--repeats`` times
(independent Bernoulli(p_i) outcomes).  The target is the population mean of ``p_i``.  Three
scenarios:

* ``no question effect``: every ``p_i = 0.7`` (repeats are independent draws; ICC 0);
* ``strong question effect``: ``p_i ~ Beta(0.5, 0.25)`` (mean 2/3, ICC 1/1.75 = 0.57);
* ``rare flaky questions``: 75% of questions always right, 15% always wrong, 10% at 0.5.

For each, ``--datasets`` seeded datasets; the table gives the coverage and mean width of
ragaudit's interval (:func:`ragaudit.stats.repeats.repeated_mean_interval`: the one policy's
interval of the per-question means) and of the Wilson interval over all ``nR`` outcomes
pooled as if independent (what mlflow's sweep prints).

Usage::

    uv run python benchmarks/coverage_repeats.py [--datasets 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from ragaudit.stats.intervals import proportion_interval
from ragaudit.stats.repeats import repeated_mean_interval


def _rates(scenario: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if scenario == "no question effect":
        return np.full(n, 0.7)
    if scenario == "strong question effect":
        return rng.beta(0.5, 0.25, size=n)
    kind = rng.random(n)
    return np.where(kind < 0.75, 1.0, np.where(kind < 0.9, 0.0, 0.5))


TRUTH = {
    "no question effect": 0.7,
    "strong question effect": 0.5 / 0.75,
    "rare flaky questions": 0.75 + 0.1 * 0.5,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"seed {args.seed}, {args.datasets:,} datasets of {args.questions} questions x "
        f"{args.repeats} repeats, 95% intervals; load {os.getloadavg()[0]:.1f}"
    )
    print()
    print(
        "| scenario | ragaudit (questions as clusters) | width | pooled Wilson (nR draws) | width |"
    )
    print("|---|---|---|---|---|")
    for scenario, truth in TRUTH.items():
        rng = np.random.default_rng([args.seed, list(TRUTH).index(scenario)])
        ours = pooled = 0
        ours_width = pooled_width = 0.0
        for _ in range(args.datasets):
            p = _rates(scenario, args.questions, rng)
            y = (rng.random((args.questions, args.repeats)) < p[:, None]).astype(float)
            ci = repeated_mean_interval(y).confidence_interval
            ours += ci.low <= truth <= ci.high
            ours_width += ci.high - ci.low
            w = proportion_interval(int(y.sum()), y.size, method="wilson").confidence_interval
            pooled += w.low <= truth <= w.high
            pooled_width += w.high - w.low
        d = args.datasets
        print(
            f"| {scenario} | {ours / d:.3f} | {ours_width / d:.3f} | "
            f"{pooled / d:.3f} | {pooled_width / d:.3f} |"
        )


if __name__ == "__main__":
    main()
