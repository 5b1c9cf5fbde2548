"""Independent oracles for the interval tests (scipy.optimize and scipy.stats, no ragaudit),
and the coverage benchmark's simulation for the slow coverage tests."""

import itertools
import math
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest
from scipy import optimize, stats


def tango_interval(both, a_only, b_only, neither, confidence=0.95):
    """Tango's score interval for p_B - p_A by brute force.

    The restricted maximum-likelihood estimate of the cell probabilities under
    ``p_(B only) - p_(A only) = delta`` is found by maximising the multinomial log-likelihood
    numerically over P(A only) (the concordant cells' MLE is their observed share of the rest);
    the limits are the roots of ``|T(delta)| = z`` with ``scipy.optimize.brentq``.  Tango
    (1998), Statistics in Medicine 17, 891-908, equations (3)-(5).
    """
    n = both + a_only + b_only + neither
    c, b = a_only, b_only
    z = stats.norm.ppf(0.5 + confidence / 2)

    def restricted_a_only(delta):
        low, high = max(0.0, -delta) + 1e-12, (1.0 - delta) / 2 - 1e-12

        def negative_loglik(q):  # q = P(A only), P(B only) = q + delta, rest 1 - 2q - delta
            terms = [(c, q), (b, q + delta), (both + neither, 1.0 - 2 * q - delta)]
            return -sum(k * math.log(p) for k, p in terms if k > 0)

        if high <= low:
            return max(0.0, -delta)
        return optimize.minimize_scalar(
            negative_loglik, bounds=(low, high), method="bounded", options={"xatol": 1e-13}
        ).x

    def score(delta):
        q = restricted_a_only(delta)
        return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))

    estimate = (b - c) / n
    eps = 1e-9
    low = -1.0 if estimate <= -1 else optimize.brentq(lambda d: score(d) - z, -1 + eps, estimate)
    high = 1.0 if estimate >= 1 else optimize.brentq(lambda d: score(d) + z, estimate, 1 - eps)
    return low, high


@pytest.fixture
def tango_oracle():
    return tango_interval


def mcnemar_interval(both, a_only, b_only, neither, confidence=0.95):
    """McNemar's exact test inverted for p_B - p_A, from scipy.stats alone.

    ``pi`` = P(B only | discordant) gets the Clopper-Pearson interval of ``b`` of ``m = b + c``
    (``binomtest(...).proportion_ci(method="exact")``, the set of ``pi`` the exact binomial
    test does not reject), ``psi`` = P(discordant) that of ``m`` of ``n``; the difference
    ``psi (2 pi - 1)`` ranges over the rectangle, whose extremes sit at its corners.
    """
    n = both + a_only + b_only + neither
    m = a_only + b_only
    if m:
        ci = stats.binomtest(b_only, m).proportion_ci(confidence, method="exact")
        pi = (ci.low, ci.high)
    else:
        pi = (0.0, 1.0)
    ci = stats.binomtest(m, n).proportion_ci(confidence, method="exact")
    corners = [s * (2 * p - 1) for s in (ci.low, ci.high) for p in pi]
    return min(corners), max(corners)


@pytest.fixture
def mcnemar_oracle():
    return mcnemar_interval


# Retrieval runs whose per-question values are known by construction (multi-run evaluate and
# compare --qrels tests): one relevant document per question, at the rank written here.
N = 30
QIDS = [f"q{i:02d}" for i in range(N)]
# Rank of the one relevant document per question (None: not retrieved in the top 5).
RANKS = {
    "base": [1] * 10 + [3] * 20,
    "strong": [1] * 22 + [3] * 8,
    "mixed": [2, 2] + [1] * 8 + [1, 2, 2, 1, 5, 1, None, 2, 1, 1] + [3] * 10,
}


def korn_graubard_interval(y, groups, confidence=0.95):
    """Korn & Graubard (1998) beta interval of a clustered mean of values in [0, 1]:
    statsmodels' CR1 standard error, scipy's t and beta quantiles.  Returns (n*, low, high)."""
    import numpy as np
    import statsmodels.api as sm

    y = np.asarray(y, dtype=float)
    n, p = y.size, y.mean()
    ones = np.ones(n)
    cluster_se = sm.OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
    naive_se = sm.OLS(y, ones).fit().bse[0]
    tail = (1 + confidence) / 2
    df_ratio = stats.t.ppf(tail, n - 1) / stats.t.ppf(tail, len(np.unique(groups)) - 1)
    n_0 = n * p * (1 - p) / np.var(y)
    n_eff = min(n_0, n_0 * (naive_se / cluster_se) ** 2 * df_ratio**2)
    x = p * n_eff
    low = stats.beta.ppf((1 - confidence) / 2, x, n_eff - x + 1) if x > 0 else 0.0
    high = stats.beta.ppf(tail, x + 1, n_eff - x) if x < n_eff else 1.0
    return n_eff, low, high


@pytest.fixture
def korn_graubard_oracle():
    return korn_graubard_interval


def write_files(folder: Path, names=("base", "strong", "mixed")) -> tuple[str, list[str]]:
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in QIDS))
    paths = []
    for name in names:
        lines = []
        for q, rank in zip(QIDS, RANKS[name], strict=True):
            ranking = [f"x{j}" for j in range(5)]
            if rank is not None:
                ranking.insert(rank - 1, "rel")
            ranking = ranking[:5]
            lines += [f"{q} Q0 {d} {i + 1} {10 - i} {name}\n" for i, d in enumerate(ranking)]
        path = folder / f"{name}.trec"
        path.write_text("".join(lines))
        paths.append(str(path))
    return str(qrels), paths


def hand_values(name: str) -> dict[str, list[float]]:
    ranks = RANKS[name]
    return {
        "hit@1": [1.0 if r == 1 else 0.0 for r in ranks],
        "mrr": [0.0 if r is None else 1.0 / r for r in ranks],
    }


def sign_flip_p(a: list[float], b: list[float]) -> float:
    """Two-sided exact sign-flip p by enumerating every pattern of the non-zero differences."""
    diffs = [Fraction(y).limit_denominator(100) - Fraction(x).limit_denominator(100)
             for x, y in zip(a, b, strict=True)]  # fmt: skip
    nonzero = [d for d in diffs if d != 0]
    observed = abs(sum(nonzero))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, nonzero, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(nonzero))
    )
    return hits / 2 ** len(nonzero)


def mcnemar_p(a: list[float], b: list[float]) -> float:
    a_only = sum(x == 1 and y == 0 for x, y in zip(a, b, strict=True))
    b_only = sum(x == 0 and y == 1 for x, y in zip(a, b, strict=True))
    return stats.binomtest(b_only, a_only + b_only, 0.5).pvalue


@pytest.fixture
def ranked_runs():
    """Writers and hand oracles of the RANKS runs (hit@1 = rank 1, MRR = 1/rank)."""
    return SimpleNamespace(
        write_files=write_files,
        hand_values=hand_values,
        mcnemar_p=mcnemar_p,
        sign_flip_p=sign_flip_p,
        ranks=RANKS,
    )
