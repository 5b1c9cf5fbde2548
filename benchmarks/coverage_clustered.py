"""Coverage of a mean's 95% interval when questions are clustered (the audit page's noise section).

Populations of clusters as a RAG golden set has them: few sources (G = 8, 14, 30), sizes drawn
uniformly from 2..8 per source, intra-cluster correlation rho = 0, 0.2, 0.5.  Each cluster has
its own success probability p_g ~ Beta(mu t, (1 - mu) t) with t = (1 - rho) / rho (p_g = mu
when rho = 0), so 0/1 verdicts have mean mu and intra-cluster correlation rho (beta-binomial).

* binary: verdicts ~ Bernoulli(p_g), mu = 0.8, 0.95, 0.99 (hit@k, correct);
* fractional: a question scores 1 with probability q_g (q_g ~ the same Beta with mean
  2 mu - 1), else Uniform(0, 1), mu = 0.8, 0.9, 0.95 (nDCG-like);
* paired 0/1 differences of two runs (``compare --cluster-by``): see :data:`PAIRED`;
* judge repeats (``compare --judge-repeats``): n = 20-200 questions, each judged R = 2-5 times
  by a judge that flips 0-20% of verdicts; the interval ``judge_noise`` prints, for the judged
  mean it claims: see :data:`JUDGE`.

Cluster size is independent of the cluster's mean, so the truth is mu for every estimator.
Intervals: the cluster betting interval (``stats/cluster_betting.py``, the default now); the
Korn-Graubard beta interval on the effective n (``clustered_rate``, printed before as
"clustered"); the cluster bootstrap percentile interval (printed before as "bootstrap";
``--bootstrap-datasets`` datasets of 1,000 resamples); and the naive interval that ignores
clusters (Clopper-Pearson for 0/1 samples, else betting: the dashboard's).

Usage::

    uv run python benchmarks/coverage_clustered.py           # summary + markdown table, seed 0

``benchmarks/coverage_stats.py`` prints these rows after its own; the slow tests in
``tests/stats/test_coverage_clustered.py`` assert coverage on the same simulation.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np

from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.cluster_betting import cluster_mean_bounds
from ragaudit.stats.cluster_signflip import cluster_signflip
from ragaudit.stats.clustered import clustered_rate
from ragaudit.stats.intervals import clopper_pearson_bounds
from ragaudit.stats.judge_noise import judge_noise


class Scenario(NamedTuple):
    kind: str  # "binary" or "fractional"
    mu: float
    n_clusters: int
    rho: float


SCENARIOS = tuple(
    Scenario(kind, mu, g, rho)
    for kind, mus in (("binary", (0.8, 0.95, 0.99)), ("fractional", (0.8, 0.9, 0.95)))
    for mu in mus
    for g in (8, 14, 30)
    for rho in (0.0, 0.2, 0.5)
)


def datasets(rng: np.random.Generator, sc: Scenario, size: int):
    """``size`` datasets: per dataset the values (list of arrays) and cluster codes."""
    sizes = rng.integers(2, 9, size=(size, sc.n_clusters))
    centre = sc.mu if sc.kind == "binary" else 2 * sc.mu - 1
    if sc.rho == 0:
        p = np.full(sizes.shape, centre)
    else:
        t = (1 - sc.rho) / sc.rho
        p = rng.beta(centre * t, (1 - centre) * t, size=sizes.shape)
    out = []
    for row_sizes, row_p in zip(sizes, p, strict=True):
        codes = np.repeat(np.arange(sc.n_clusters), row_sizes)
        hit = rng.random(codes.size) < row_p[codes]
        fraction = rng.random(codes.size) if sc.kind != "binary" else None
        y = hit.astype(float) if fraction is None else np.where(hit, 1.0, fraction)
        out.append((y, codes))
    return out


def _cluster_sums(data):
    sums = np.array([np.bincount(c, weights=y) for y, c in data])
    sizes = np.array([np.bincount(c) for _, c in data], dtype=float)
    return sums, sizes


def betting(data, confidence=0.95):
    sums, sizes = _cluster_sums(data)
    return cluster_mean_bounds(sums, sizes, 0.0, 1.0, confidence)


def korn_graubard(data, confidence=0.95):
    bounds = [clustered_rate(y, c, confidence=confidence).confidence_interval for y, c in data]
    return np.array([b.low for b in bounds]), np.array([b.high for b in bounds])


def naive(data, confidence=0.95):
    low, high = np.empty(len(data)), np.empty(len(data))
    for i, (y, _) in enumerate(data):
        if np.all((y == 0) | (y == 1)):
            lo, hi = clopper_pearson_bounds(np.array([y.sum()]), np.array([y.size]), confidence)
        else:
            lo, hi = bounded_mean_bounds(y[None], 0.0, 1.0, confidence)
        low[i], high[i] = lo[0], hi[0]
    return low, high


def cluster_bootstrap(data, rng, confidence=0.95, n_resamples=1000):
    sums, sizes = _cluster_sums(data)
    g = sums.shape[1]
    low, high = np.empty(len(data)), np.empty(len(data))
    tail = 100 * (1 - confidence) / 2
    for i in range(len(data)):
        draws = rng.integers(0, g, size=(n_resamples, g))
        theta = sums[i][draws].sum(1) / sizes[i][draws].sum(1)
        low[i], high[i] = np.percentile(theta, [tail, 100 - tail])
    return low, high


# Paired 0/1 verdicts of two runs (compare --cluster-by): A right with probability p_g (the
# binary scenarios' beta-binomial, mean 0.9); where A is wrong B is right with probability 0.3,
# where A is right B is wrong with probability 0.05, so E[b - a] = 0.3 (1 - mu) - 0.05 mu
# exactly (linear in p_g).  Differences in {-1, 0, 1}, betting over clusters on [-1, 1].
PAIRED = tuple(Scenario("paired", 0.9, g, rho) for g in (8, 14, 30) for rho in (0.0, 0.5))


def paired_datasets(rng: np.random.Generator, sc: Scenario, size: int):
    """``size`` datasets of per-question differences ``b - a`` and cluster codes."""
    out = []
    for y, codes in datasets(rng, sc._replace(kind="binary"), size):
        u = rng.random(y.size)
        b = np.where(y == 1, (u >= 0.05).astype(float), (u < 0.3).astype(float))
        out.append((b - y, codes))
    return out


def paired_truth(sc: Scenario) -> float:
    return 0.3 * (1 - sc.mu) - 0.05 * sc.mu


# compare --cluster-by's verdict and interval (issue 21): the cluster sign-flip test and its
# inversion united with CR2 t on Bell-McCaffrey df.  B breaks a share of A's hits: 5% (B - A =
# -0.015), or 3.33% so that B - A = 0 exactly (the null: type-I error of the verdict).
SIGNFLIP_PAIRED = tuple(
    (Scenario("paired", 0.9, g, rho), brk)
    for brk in (0.05, 0.03 / 0.9)
    for g in (8, 14, 30, 40)
    for rho in (0.1, 0.2, 0.5)
)


def paired_datasets_breaking(rng, sc: Scenario, size: int, brk: float):
    """:func:`paired_datasets` with B breaking ``brk`` of A's hits (and fixing 30% of misses)."""
    out = []
    for y, codes in datasets(rng, sc._replace(kind="binary"), size):
        u = rng.random(y.size)
        b = np.where(y == 1, (u >= brk).astype(float), (u < 0.3).astype(float))
        out.append((b - y, codes))
    return out


def signflip_rows(rng, size, n_permutations=2000):
    """Coverage, width and rejection rate of ``compare --cluster-by`` on paired 0/1 data."""
    out = []
    for sc, brk in SIGNFLIP_PAIRED:
        truth = 0.3 * (1 - sc.mu) - brk * sc.mu
        results = [
            cluster_signflip(d, codes, n_permutations=n_permutations, rng=i)
            for i, (d, codes) in enumerate(paired_datasets_breaking(rng, sc, size, brk))
        ]
        low = np.array([r.confidence_interval.low for r in results])
        high = np.array([r.confidence_interval.high for r in results])
        reject = np.mean([r.pvalue < 0.05 for r in results])
        kind = "null B - A = 0" if abs(truth) < 1e-12 else f"B - A = {truth:+.3f}"
        out.append(
            (
                f"clustered paired 0/1 difference, {kind} (A 0.9), G={sc.n_clusters}, ICC {sc.rho}",
                "cluster sign-flip inversion + CR2-BM (compare --cluster-by)",
                coverage(low, high, truth),
                size,
                f"width {float(np.mean(high - low)):.3f}; verdict SIGNIFICANT in {reject:.3f}",
            )
        )
    return out


def candidate_rows(rng, size, n_permutations=2000):
    """The comparison that chose compare --cluster-by's method (``--candidates``).

    Per cell: coverage, mean width and rejection rate of the cluster sign-flip inversion alone,
    its union with CR2 t on Bell-McCaffrey df (the chosen one, before the few-clusters betting
    hull), CR2-BM alone and CR1 t on G - 1 df, on the same datasets.
    """
    from scipy.special import stdtr, stdtrit

    from ragaudit.stats.cluster_signflip import cr2_standard_error
    from ragaudit.stats.signflip_interval import signflip_bounds

    out = []
    for brk in (0.05, 0.03 / 0.9):
        for g in (8, 14, 30):
            for rho in (0.0, 0.2, 0.5):
                sc = Scenario("paired", 0.9, g, rho)
                truth = 0.3 * (1 - sc.mu) - brk * sc.mu
                got: dict[str, list[tuple[float, float, float]]] = {}
                for d, codes in paired_datasets_breaking(rng, sc, size, brk):
                    sums, sizes = np.bincount(codes, weights=d), np.bincount(codes).astype(float)
                    low, high, p0, _, _ = signflip_bounds(
                        sums, sizes, 0.05, n_permutations, np.random.default_rng(1)
                    )
                    mean = d.mean()
                    se2, df = cr2_standard_error(d, codes)
                    h2 = stdtrit(df, 0.975) * se2
                    u = np.bincount(codes, weights=d - mean)
                    se1 = np.sqrt(g / (g - 1) * np.sum(u * u)) / d.size
                    h1 = stdtrit(g - 1, 0.975) * se1

                    def p_t(se, dof, m=mean):
                        return 2 * stdtr(dof, -abs(m) / se) if se > 0 else (1.0 if m == 0 else 0.0)

                    for name, row in (
                        ("sign-flip inversion alone", (low, high, p0)),
                        (
                            "sign-flip + CR2-BM (chosen)",
                            (min(low, mean - h2), max(high, mean + h2), p0),
                        ),
                        ("CR2-BM t", (mean - h2, mean + h2, p_t(se2, df))),
                        ("CR1 t (G-1 df)", (mean - h1, mean + h1, p_t(se1, g - 1))),
                    ):
                        got.setdefault(name, []).append(row)
                first = True
                for name, rows_ in got.items():
                    v = np.array(rows_)
                    out.append(
                        (
                            f"candidates: paired 0/1, B - A = {truth:+.3f}, G={g}, ICC {rho}"
                            if first
                            else "",
                            name,
                            coverage(v[:, 0], v[:, 1], truth),
                            size,
                            f"width {np.mean(v[:, 1] - v[:, 0]):.3f}; rejects 0 in "
                            f"{np.mean(v[:, 2] < 0.05):.3f}",
                        )
                    )
                    first = False
    return out


def paired_betting(data, confidence=0.95):
    sums, sizes = _cluster_sums(data)
    return cluster_mean_bounds(sums, sizes, -1.0, 1.0, confidence)


# Judge repeats (``compare --judge-repeats``): question i's answer is right with probability
# p_i ~ Beta(m c, (1 - m) c) (c = 1: most answers plainly right or wrong; c = 10: p_i spread
# around m), and each of R judge repeats reports it flipped with probability f.  Verdicts are
# 0/1, a question's R verdicts are clustered, questions are independent.  The interval
# ``judge_noise`` prints claims the judged mean over the population of questions with both
# sources of noise, E[y] = m (1 - f) + (1 - m) f.
class JudgeScenario(NamedTuple):
    n: int
    repeats: int
    m: float
    flip: float
    concentration: float


JUDGE = tuple(
    JudgeScenario(n, r, m, f, c)
    for n in (20, 50, 200)
    for r in (2, 3, 5)
    for m in (0.8, 0.95, 0.98)
    for f in (0.0, 0.05, 0.2)
    for c in (1.0, 10.0)
)


def judge_truth(sc: JudgeScenario) -> float:
    return sc.m * (1 - sc.flip) + (1 - sc.m) * sc.flip


def judge_datasets(rng: np.random.Generator, sc: JudgeScenario, size: int) -> np.ndarray:
    """``(size, n, R)`` 0/1 verdicts."""
    p = rng.beta(sc.m * sc.concentration, (1 - sc.m) * sc.concentration, (size, sc.n, 1))
    flips = rng.random((size, sc.n, sc.repeats)) < sc.flip
    return ((rng.random((size, sc.n, sc.repeats)) < p) ^ flips).astype(float)


def judge_printed(data: np.ndarray, confidence=0.95):
    """The interval ``judge_noise`` prints (its ``confidence_interval``: Korn-Graubard beta
    interval with the questions as clusters of their R verdicts)."""
    bounds = [judge_noise(y, confidence=confidence).confidence_interval for y in data]
    return np.array([b.low for b in bounds]), np.array([b.high for b in bounds])


def coverage(low, high, truth) -> float:
    return float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))


def label(sc: Scenario) -> str:
    what = "0/1 verdicts" if sc.kind == "binary" else "fractional scores"
    return f"clustered {what}, mean {sc.mu}, G={sc.n_clusters}, ICC {sc.rho}"


def judge_label(sc: JudgeScenario) -> str:
    return (
        f"judge repeats n={sc.n}, R={sc.repeats}: correct {sc.m}, flip {sc.flip}, "
        f"concentration {sc.concentration:g} (judged mean {judge_truth(sc):.3f})"
    )


def judge_rows(rng: np.random.Generator, size: int):
    """Rows of the judge-repeat scenarios (:data:`JUDGE`)."""
    out = []
    for sc in JUDGE:
        low, high = judge_printed(judge_datasets(rng, sc, size))
        out.append(
            (
                judge_label(sc),
                "Korn-Graubard beta, questions as clusters (compare --judge-repeats)",
                coverage(low, high, judge_truth(sc)),
                size,
                f"width {float(np.mean(high - low)):.3f}; "
                f"{int(np.sum(high - low <= 0))} zero-width",
            )
        )
    return out


def judge_summary(table) -> list[str]:
    """Markdown lines: per n and R, the lowest coverage of the judge rows and the mean width."""
    groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for label_, _, value, _, note in table:
        if not label_.startswith("judge repeats"):
            continue
        n, r = label_.split("n=")[1].split(":")[0].split(", R=")
        groups.setdefault((n, r), []).append((value, float(note.split("width ")[1].split(";")[0])))
    lines = ["| n | R | lowest coverage | mean width |", "|---:|---:|---:|---:|"]
    for (n, r), got in groups.items():
        lowest = min(v for v, _ in got)
        lines.append(f"| {n} | {r} | {lowest:.3f} | {np.mean([w for _, w in got]):.3f} |")
    return lines


def rows(seed: int, size: int, bootstrap_size: int):
    """Table rows ``(scenario, interval, coverage, datasets, note)``."""
    rng = np.random.default_rng(seed)
    out = []
    for sc in SCENARIOS:
        data = datasets(rng, sc, size)
        first = True
        for name, (low, high), count in (
            ("cluster betting (default)", betting(data), size),
            ("Korn-Graubard effective n (before: 'clustered')", korn_graubard(data), size),
            (
                "cluster bootstrap (before: 'bootstrap')",
                cluster_bootstrap(data[:bootstrap_size], rng),
                bootstrap_size,
            ),
            ("naive, ignores clusters", naive(data), size),
        ):
            width = float(np.mean(high - low))
            zero = int(np.sum(high - low <= 0))
            out.append(
                (
                    label(sc) if first else "",
                    name,
                    coverage(low, high, sc.mu),
                    count,
                    f"width {width:.3f}; {zero} zero-width",
                )
            )
            first = False
    for sc in PAIRED:
        data = paired_datasets(rng, sc, size)
        low, high = paired_betting(data)
        out.append(
            (
                f"clustered paired 0/1 difference B - A = {paired_truth(sc):+.3f} (A 0.9), "
                f"G={sc.n_clusters}, ICC {sc.rho}",
                "cluster betting on [-1, 1] (default)",
                coverage(low, high, paired_truth(sc)),
                size,
                f"width {float(np.mean(high - low)):.3f}; "
                f"{int(np.sum(high - low <= 0))} zero-width",
            )
        )
    return out + signflip_rows(rng, size) + judge_rows(rng, size)


def print_table(table) -> None:
    print("| scenario | interval | coverage | ± error | datasets | note |")
    print("|---|---|---:|---:|---:|---|")
    for scenario, name, value, count, note in table:
        error = np.sqrt(value * (1 - value) / count)
        print(f"| {scenario} | {name} | {value:.3f} | {error:.3f} | {count} | {note} |")


def summary(table) -> list[str]:
    """Markdown lines: per kind and G, the lowest coverage over means and ICCs, and the mean
    width, of each interval (the docs' condensed table)."""
    groups: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    scenario = ""
    for label_, name, value, _, note in table:
        scenario = label_ or scenario
        if "paired" in scenario or scenario.startswith("judge"):
            continue
        kind = "0/1 verdicts" if "0/1" in scenario else "fractional scores"
        g = scenario.split("G=")[1].split(",")[0]
        width = float(note.split("width ")[1].split(";")[0])
        groups.setdefault((kind, g, name), []).append((value, width))
    names = list(dict.fromkeys(name for _, _, name in groups))
    lines = [
        "| values | G | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for kind, g in dict.fromkeys((k, g) for k, g, _ in groups):
        cells = []
        for name in names:
            got = groups[(kind, g, name)]
            low = min(v for v, _ in got)
            cells.append(f"{low:.3f} (width {np.mean([w for _, w in got]):.2f})")
        lines.append(f"| {kind} | {g} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--bootstrap-datasets", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only-signflip", action="store_true", help="only compare --cluster-by")
    parser.add_argument("--candidates", action="store_true", help="the methods compared for it")
    args = parser.parse_args()
    if args.candidates:
        print(f"seed {args.seed}; nominal level 0.95; 2,000 random cluster flips past 2^16")
        print_table(candidate_rows(np.random.default_rng(args.seed), args.datasets))
        return
    if args.only_signflip:
        print(f"seed {args.seed}; nominal level 0.95; 2,000 random cluster flips past 2^16")
        print_table(signflip_rows(np.random.default_rng(args.seed), args.datasets))
        return
    print(f"seed {args.seed}; nominal level 0.95; error = Monte Carlo standard error")
    print()
    table = rows(args.seed, args.datasets, args.bootstrap_datasets)
    print("lowest coverage over means and ICCs (mean width):")
    print()
    print("\n".join(summary(table)))
    print()
    print("judge repeats (compare --judge-repeats): lowest coverage over correct rates, flip")
    print("rates and concentrations (mean width):")
    print()
    print("\n".join(judge_summary(table)))
    print()
    print_table(table)


if __name__ == "__main__":
    main()
