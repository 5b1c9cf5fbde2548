"""Coverage of the interval *switch*: the method is chosen from the observed values.

The dashboard (``_mean_row``) gives a mean whose observed values are all 0 or 1 the
Clopper-Pearson interval and any other mean of scores in [0, 1] the betting interval;
``compare`` gives a metric whose observed values are all 0/1 in both runs Tango's score
interval and other [0, 1] metrics the betting interval of the paired difference.  A
fractional metric whose population is *nearly* binary (recall@k with two gold documents:
most questions at 1 or 0, a few at 0.5) gives all-0/1 samples often, so the printed
interval is a data-dependent mixture of two methods whose coverage neither method's
guarantee covers.  These tests measure that mixture through the real dispatch code.

Speed: both intervals depend on the multiset of values only (Clopper-Pearson and Tango on
counts; the betting interval is a product over questions, see ``stats/bounded.py``), so the
datasets are drawn as multinomial counts over the population's values, and the dispatch
code runs once per distinct count vector; each dataset gets the interval of its counts.

Bar: 2,000 datasets per scenario.  The measured coverage is 0.979-1.000 (lowest: the mean
near 0.5 at n = 20; ``benchmarks/coverage_stats.py``, "switch" rows, 10,000 datasets each),
and 0.980-1.000 with these seeds; at a true coverage of 0.95 the
Monte Carlo standard error is sqrt(0.95 x 0.05 / 2000) = 0.0049, so a procedure whose true
coverage is 0.95 fails the 0.94 bar with probability about 0.02 and one at 0.93 passes it with
probability about 0.02.
"""

import numpy as np
import pytest

from ragaudit.reports.html_dashboard import _mean_row
from ragaudit.stats import PerQuestionMetrics, compare_runs

DATASETS = 2000
SIZES = (10, 20, 50, 200)

# one question's score: (values, probabilities)
MEANS = {
    "near 1 (97% at 1, 2% at 0.5, 1% at 0)": ([1.0, 0.5, 0.0], [0.97, 0.02, 0.01]),
    "near 0.5 (48% at 1, 48% at 0, 4% at 0.5)": ([1.0, 0.0, 0.5], [0.48, 0.48, 0.04]),
    "near 0 (95% at 0, 5% at 0.5)": ([0.0, 0.5], [0.95, 0.05]),
}

# one question's (a, b) pair: (pairs, probabilities)
PAIRS = {
    # 93% unchanged; B fixes 3%, breaks 1%, half-fixes 3% (one of two gold docs found)
    "few changes, half-step gains": (
        [(1.0, 1.0), (0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (0.5, 1.0)],
        [0.5, 0.43, 0.03, 0.01, 0.03],
    ),
    # recall near 1 in both runs; B loses one question in 100 fully, two in 100 by half
    "near 1, rare full and half losses": (
        [(1.0, 1.0), (1.0, 0.0), (1.0, 0.5)],
        [0.97, 0.01, 0.02],
    ),
}


def _counts(seed, probs, n):
    """Distinct count vectors of ``DATASETS`` multinomial draws and how many datasets had each."""
    counts = np.random.default_rng(seed).multinomial(n, probs, size=DATASETS)
    return np.unique(counts, axis=0, return_counts=True)


def _mean_coverage(values, probs, n, seed):
    """(coverage, share missed below, share missed above, methods) of ``_mean_row``."""
    truth = float(np.dot(values, probs))
    unique, weight = _counts(seed, probs, n)
    covered = below = above = 0
    methods = set()
    for counts, w in zip(unique, weight, strict=True):
        row = _mean_row("m", "m", np.repeat(values, counts).tolist(), "src", "")
        methods.add(row.interval)
        below += w * (row.ci_high < truth - 1e-12)
        above += w * (row.ci_low > truth + 1e-12)
        covered += w * (row.ci_low <= truth + 1e-12 and truth - 1e-12 <= row.ci_high)
    return covered / DATASETS, below / DATASETS, above / DATASETS, methods


def _paired_coverage(pairs, probs, n, seed):
    """(coverage, share missed below, share missed above, methods) of ``compare_runs``."""
    pairs = np.asarray(pairs)
    truth = float(np.dot(pairs[:, 1] - pairs[:, 0], probs))
    unique, weight = _counts(seed, probs, n)
    ids = [f"q{i:03d}" for i in range(n)]
    covered = below = above = 0
    methods = set()
    for counts, w in zip(unique, weight, strict=True):
        drawn = np.repeat(pairs, counts, axis=0)
        runs = [
            PerQuestionMetrics(name, {q: {"m": float(v)} for q, v in zip(ids, col, strict=True)})
            for name, col in (("A", drawn[:, 0]), ("B", drawn[:, 1]))
        ]
        # the interval does not use the resamples or permutations: keep them minimal
        row = compare_runs(*runs, n_resamples=1, n_permutations=1, subsample_sizes=()).metrics[0]
        low, high = row.confidence_interval.low, row.confidence_interval.high
        methods.add(row.ci_method)
        below += w * (high < truth - 1e-12)
        above += w * (low > truth + 1e-12)
        covered += w * (low <= truth + 1e-12 and truth - 1e-12 <= high)
    return covered / DATASETS, below / DATASETS, above / DATASETS, methods


@pytest.mark.slow
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("scenario", MEANS)
def test_dashboard_switch_covers_nearly_binary_means(scenario, n):
    values, probs = MEANS[scenario]
    cov, below, above, methods = _mean_coverage(values, probs, n, 20267 + n)
    if n <= 50:  # both methods are exercised (all-0/1 samples are common at small n)
        assert methods == {"Clopper-Pearson exact", "betting (Waudby-Smith-Ramdas)"}
    assert cov >= 0.94, (cov, below, above)


@pytest.mark.slow
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("scenario", PAIRS)
def test_compare_switch_covers_nearly_binary_differences(scenario, n):
    pairs, probs = PAIRS[scenario]
    cov, below, above, methods = _paired_coverage(pairs, probs, n, 20268 + n)
    if n <= 50:
        assert methods == {"Tango score", "betting (Waudby-Smith-Ramdas)"}
    assert cov >= 0.94, (cov, below, above)


def test_the_switch_follows_the_observed_values():
    # The premise of the simulations above: the same metric gets either method by sample.
    binary = _mean_row("m", "m", [1.0] * 9 + [0.0], "src", "")
    fractional = _mean_row("m", "m", [1.0] * 9 + [0.5], "src", "")
    assert binary.interval == "Clopper-Pearson exact"
    assert fractional.interval == "betting (Waudby-Smith-Ramdas)"
