"""Coverage of the interval *switch*: the method is chosen from the observed values.

The dashboard (``_mean_row``) gives a mean whose observed values are all 0 or 1 the
Clopper-Pearson interval and any other mean of scores in [0, 1] the betting interval;
``compare`` gives a metric whose observed values are all 0/1 in both runs McNemar's exact test
inverted and other [0, 1] metrics the betting interval of the paired difference.  A
fractional metric whose population is *nearly* binary (recall@k with two gold documents:
most questions at 1 or 0, a few at 0.5) gives all-0/1 samples often, so the printed
interval is a data-dependent mixture of two methods whose coverage neither method's
guarantee covers.  These tests measure that mixture through the real dispatch code.

Speed: both intervals depend on the multiset of values only (Clopper-Pearson and McNemar's on
counts; the betting interval is a product over questions, see ``stats/bounded.py``), so the
datasets are drawn as multinomial counts over the population's values, and the dispatch
code runs once per distinct count vector; each dataset gets the interval of its counts
(``switch_coverage`` in ``benchmarks/coverage_stats.py``, the one copy of this simulation).

Bar: 500 datasets per scenario (2,000 before issue 32: the suite had grown to 10 CPU-minutes)
and coverage >= 0.95.  The measured coverage is 0.979-1.000 (lowest: the mean near 0.5 at
n = 20; ``benchmarks/coverage_stats.py``, "switch" rows, 10,000 datasets each).  At 0.979 the
chance of falling under 0.95 with 500 datasets is 3e-5 (binomial); a procedure whose true
coverage is 0.93 passes with probability 0.04 (2,000 datasets and a 0.94 bar gave 0.02).
"""

import numpy as np
import pytest
from benchmarks import coverage_stats as sim

from ragaudit.diagnose.dashboard import _mean_row

DATASETS = 500
BETTING = "betting (Waudby-Smith-Ramdas)"
EXACT = "McNemar exact inverted"
SIGNFLIP = ("sign-flip inversion", "sign-flip inversion widened to betting (too few differ)")


@pytest.mark.slow
@pytest.mark.parametrize("n", sim.SWITCH_SIZES)
@pytest.mark.parametrize("scenario", sim.SWITCH_MEANS)
def test_dashboard_switch_covers_nearly_binary_means(scenario, n):
    values, probs = sim.SWITCH_MEANS[scenario]
    rng = np.random.default_rng(20267 + n)
    c = sim.switch_coverage(
        rng, sim.switch_mean, values, probs, n, DATASETS, "Clopper-Pearson exact"
    )
    if n <= 50:  # both methods are exercised (all-0/1 samples are common at small n)
        assert set(c.methods) == {"Clopper-Pearson exact", BETTING}
    assert c.coverage >= 0.95, (c.coverage, c.below, c.above)


# n = 200 stays in the benchmark: there the 0/1 method is chosen in 0.2-1.7% of samples, so
# the switch is hardly exercised, and the dispatch ran once per distinct count vector (106 s of
# the suite's 12 CPU-minutes for one cell).
SWITCH_PAIR_SIZES = tuple(n for n in sim.SWITCH_SIZES if n < 200)


@pytest.mark.slow
@pytest.mark.parametrize("n", SWITCH_PAIR_SIZES)
@pytest.mark.parametrize("scenario", sim.SWITCH_PAIRS)
def test_compare_switch_covers_nearly_binary_differences(scenario, n):
    pairs, probs = sim.SWITCH_PAIRS[scenario]
    rng = np.random.default_rng(20268 + n)
    c = sim.switch_coverage(rng, sim.switch_paired, pairs, probs, n, DATASETS, EXACT)
    if n <= 50:  # the non-0/1 samples get the sign-flip inversion (plus betting if few differ)
        assert {EXACT} < set(c.methods) <= {EXACT, *SIGNFLIP}
    assert c.coverage >= 0.95, (c.coverage, c.below, c.above)


def test_the_switch_follows_the_observed_values():
    # The premise of the simulations above: the same metric gets either method by sample.
    binary = _mean_row("m", "m", [1.0] * 9 + [0.0], "src", "")
    fractional = _mean_row("m", "m", [1.0] * 9 + [0.5], "src", "")
    assert binary.interval == "Clopper-Pearson exact"
    assert fractional.interval == "betting (Waudby-Smith-Ramdas)"
