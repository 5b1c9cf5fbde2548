"""Type-I error of ``compare --cluster-by``'s verdict at G = 30 clusters (issue 32, item 4).

An independent re-simulation measured 0.072 +- 0.016 on 300 datasets at G = 30; 300 datasets
cannot tell 0.05 from 0.08.  This script draws ``--datasets`` seeded datasets per null
scenario (B - A has mean 0 in every cluster) and runs the verdict's own test,
``stats.cluster_signflip.cluster_signflip`` with compare's 10,000 random flips, then prints
the rejection rate at alpha 0.05 with its binomial standard error and a 95% Clopper-Pearson
interval.  Cluster sizes are drawn from 2..8 per source, as golden sets have them.

Null scenarios:

* ``0/1, ICC rho``: the paired 0/1 verdicts of ``benchmarks/coverage_clustered.py`` (A 0.9,
  B breaks 3.33% of A's hits and fixes 30% of its misses, so B - A = 0), beta-binomial
  clusters;
* ``fractional symmetric``: a cluster effect u_g ~ N(0, 0.1) times a random sign per question
  plus N(0, 0.1) noise (differences symmetric about 0 in every cluster);
* ``fractional skewed``: per question +0.05 w.p. 0.8, -0.2 w.p. 0.2 (mean 0, skewness -1.5),
  independent: the cluster sums are skewed, which the sign-flip test does not assume away;
* ``fractional skewed, shared``: the same two values, with the loss probability shared in a
  cluster (0.2 on average, Beta(2, 8) per cluster): skewed and correlated.

Usage::

    uv run python benchmarks/clustered_type_one.py [--datasets 4000] [--seed 0] [--clusters 30]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from coverage_clustered import Scenario, paired_datasets_breaking

from ragaudit.stats.cluster_signflip import cluster_signflip
from ragaudit.stats.intervals import clopper_pearson_bounds

Data = list[tuple[np.ndarray, np.ndarray]]


def _codes(rng: np.random.Generator, g: int) -> np.ndarray:
    return np.repeat(np.arange(g), rng.integers(2, 9, size=g))


def symmetric(rng: np.random.Generator, g: int, size: int) -> Data:
    out = []
    for _ in range(size):
        codes = _codes(rng, g)
        u = rng.normal(0, 0.1, g)[codes] * rng.choice([-1.0, 1.0], codes.size)
        out.append((u + rng.normal(0, 0.1, codes.size), codes))
    return out


def skewed(rng: np.random.Generator, g: int, size: int, shared: bool = False) -> Data:
    out = []
    for _ in range(size):
        codes = _codes(rng, g)
        q = rng.beta(2, 8, g)[codes] if shared else np.full(codes.size, 0.2)
        loss = rng.random(codes.size) < q
        # +0.05 / -0.2 has mean 0 only at q = 0.2; with a shared q keep each cluster's mean 0
        gain = 0.2 * q / (1 - q)
        out.append((np.where(loss, -0.2, gain), codes))
    return out


def scenarios(g: int) -> dict[str, Callable[[np.random.Generator, int], Data]]:
    return {
        **{
            f"0/1, ICC {rho}": (
                lambda rng, size, rho=rho: paired_datasets_breaking(
                    rng, Scenario("paired", 0.9, g, rho), size, 0.03 / 0.9
                )
            )
            for rho in (0.1, 0.5)
        },
        "fractional symmetric": lambda rng, size: symmetric(rng, g, size),
        "fractional skewed (-1.5), independent": lambda rng, size: skewed(rng, g, size),
        "fractional skewed, loss rate shared in a cluster": (
            lambda rng, size: skewed(rng, g, size, shared=True)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clusters", type=int, default=30)
    args = parser.parse_args()
    print(
        f"# compare --cluster-by: type-I error at alpha 0.05, G = {args.clusters}, "
        f"{args.datasets} datasets per scenario (seed {args.seed}, 10,000 flips each)\n"
    )
    print("| null scenario | rejection rate | standard error | 95% CI |")
    print("|---|---|---|---|")
    for k, (name, draw) in enumerate(scenarios(args.clusters).items()):
        data = draw(np.random.default_rng([args.seed, k]), args.datasets)
        rejected = sum(
            cluster_signflip(d, codes, n_permutations=10_000, rng=i).pvalue < 0.05
            for i, (d, codes) in enumerate(data)
        )
        rate = rejected / args.datasets
        se = np.sqrt(rate * (1 - rate) / args.datasets)
        low, high = clopper_pearson_bounds(np.array(rejected), np.array(args.datasets), 0.95)
        print(f"| {name} | {rate:.4f} | {se:.4f} | [{float(low):.4f}, {float(high):.4f}] |")


if __name__ == "__main__":
    main()
