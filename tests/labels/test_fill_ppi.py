"""A filled metric corrected by a person's grades on a sample (``evaluate --filled --human``).

Expected values: the point estimate from ppi-python (``ppi_mean_pointestimate`` with
``lam=1``), the interval composed by hand from ``compare``'s paired interval, nDCG by hand
(formulas below), and the coverage by a seeded simulation (``@slow``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError
from ragaudit.labels.fill_ppi import correct_filled, rectified_mean
from ragaudit.stats.policy import paired_interval

L2 = np.log2


def case(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    yhat = rng.uniform(0.2, 1.0, n)
    filled = rng.uniform(size=n) < 0.6
    error = np.where(filled & (rng.uniform(size=n) < 0.3), rng.normal(-0.15, 0.1, n), 0.0)
    y = np.clip(yhat + error, 0.0, 1.0)
    checked = filled & (rng.uniform(size=n) < 0.5)
    return yhat, filled, checked, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_point_estimate_equals_ppi_python(seed):
    ppi_py = pytest.importorskip("ppi_py")
    yhat, filled, checked, y = case(seed)
    stat, ci, rect, method = rectified_mean(yhat, filled, checked, y)
    # inside B: PPI with lambda 1, the labeller's values on every question of B as "unlabelled"
    theta_b = float(
        ppi_py.ppi_mean_pointestimate(y[checked], yhat[checked], yhat[filled], lam=1)[0]
    )
    n, n_b = yhat.size, filled.sum()
    expected = (yhat[~filled].sum() + n_b * theta_b) / n
    assert stat == pytest.approx(expected, abs=1e-12)
    assert rect == pytest.approx(np.mean(y[checked] - yhat[checked]), abs=1e-12)
    # the interval: the rectifier's paired interval, scaled by |B|/n, shifted by the mean
    r = paired_interval(yhat[checked], y[checked])
    base, share = yhat.mean(), n_b / n
    assert ci.low == pytest.approx(max(base + share * r.confidence_interval.low, 0), abs=1e-12)
    assert ci.high == pytest.approx(min(base + share * r.confidence_interval.high, 1), abs=1e-12)
    assert method == r.method and ci.low <= stat <= ci.high


def test_edge_cases():
    yhat = np.array([0.5, 0.7, 0.9])
    none = np.zeros(3, dtype=bool)
    stat, ci, _, method = rectified_mean(yhat, none, none, yhat)
    assert stat == ci.low == ci.high == pytest.approx(0.7)
    assert method == "exact (no filled items)"
    every = np.ones(3, dtype=bool)
    y = np.array([0.4, 0.7, 1.0])
    stat, ci, _, method = rectified_mean(yhat, every, every, y)
    assert stat == pytest.approx(0.7) and ci.low == ci.high == stat and method.startswith("exact")
    with pytest.raises(InputError, match="at least 2 questions, found 1 of the 3"):
        rectified_mean(yhat, every, np.array([True, False, False]), y)
    with pytest.raises(InputError, match="checked question must have filled items"):
        rectified_mean(yhat, none, every, y)


def small():
    original = Qrels({"q1": {"A": 1}, "q2": {"C": 1}, "q3": {"E": 1}, "q4": {"G": 1}})
    # the labeller: X relevant for q1 (wrong: the person says 0), Y not for q2 (right), Z
    # relevant for q3 (right); q4 has no filled item
    filled = Qrels({"q1": {"X": 1}, "q2": {"Y": 0}, "q3": {"Z": 1}})
    human = Qrels({"q1": {"X": 0}, "q2": {"Y": 0}, "unused": {"W": 1}})
    run = Run({"q1": ["X", "A"], "q2": ["Y", "C"], "q3": ["Z", "E"], "q4": ["G", "H"]},
              order="given")  # fmt: skip
    return original, filled, human, run


def test_correct_filled_by_hand():
    original, filled, human, run = small()
    (c,) = correct_filled(original, filled, human, run, ["ndcg@2"])
    # filled labels: q1 X, A relevant -> 1; q2 C at 2 -> 1/log2(3); q3 1; q4 1
    yhat = [1.0, 1 / L2(3), 1.0, 1.0]
    # the person: q1 only A at rank 2 -> 1/log2(3); q2 unchanged
    rect = ((1 / L2(3) - 1.0) + 0.0) / 2
    assert (c.n, c.n_filled, c.n_checked, c.n_partial) == (4, 3, 2, 0)
    assert c.filled == pytest.approx(np.mean(yhat))
    assert c.rectifier == pytest.approx(rect)
    assert c.statistic == pytest.approx(np.mean(yhat) + 3 / 4 * rect)
    assert c.confidence_interval.low <= c.statistic <= c.confidence_interval.high
    assert "2 of the 3 questions with filled items" in c.label


def test_evaluate_filled_human_cli(tmp_path):
    original, filled, human, run = small()
    for name, qrels in (("q", original), ("f", filled), ("h", human)):
        (tmp_path / f"{name}.txt").write_text(
            "".join(f"{q} 0 {d} {g}\n" for q in qrels for d, g in qrels[q].items())
        )
    (tmp_path / "r.txt").write_text(
        "".join(f"{q} Q0 {d} {i + 1} {9 - i} t\n" for q in run for i, d in enumerate(run[q]))
    )
    args = ["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"),
            "-m", "ndcg@2", "--filled", str(tmp_path / "f.txt")]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--human", str(tmp_path / "h.txt"), "--format",
                                       "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)["corrected"]["ndcg@2"]
    (expected,) = correct_filled(original, filled, human, run, ["ndcg@2"])
    assert got["corrected"] == pytest.approx(expected.statistic, abs=1e-12)
    assert (got["n_checked"], got["n_filled"]) == (2, 3)
    table = CliRunner().invoke(main, [*args, "--human", str(tmp_path / "h.txt")]).stdout
    assert "labeller error" in table and "PPI rectifier" in table
    alone = CliRunner().invoke(main, [*args[:-2], "--human", str(tmp_path / "h.txt")])
    assert alone.exit_code == 2 and "expected --filled FILE too" in alone.output


@pytest.mark.slow
def test_coverage_by_simulation():
    """Seeded: populations of questions with a labeller that is usually right, a random sample
    of the filled questions checked; the interval must cover the run's true mean.  150 draws
    per population (300 before issue 32); the bar is the binomial's 0.1% quantile at a true
    coverage of 0.95, 133 of 150: a correct interval fails with probability below 0.001."""
    from scipy import stats

    seed = 2024
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    for n, share_filled, error_rate, n_checked in (
        (60, 0.6, 0.1, 8), (60, 0.6, 0.3, 15), (200, 0.5, 0.05, 20), (200, 0.8, 0.2, 40),
    ):  # fmt: skip
        yhat = rng.uniform(0.3, 1.0, n)
        filled = rng.uniform(size=n) < share_filled
        # errors of one sign (a generous labeller): the hard case for a symmetric test
        wrong = filled & (rng.uniform(size=n) < error_rate)
        y = np.where(wrong, np.clip(yhat - rng.uniform(0.1, 0.5, n), 0, 1), yhat)
        truth = y.mean()
        candidates = np.flatnonzero(filled)
        hits, reps = 0, 150
        for _ in range(reps):
            checked = np.zeros(n, dtype=bool)
            checked[rng.choice(candidates, size=n_checked, replace=False)] = True
            _, ci, _, _ = rectified_mean(yhat, filled, checked, y)
            hits += ci.low <= truth <= ci.high
        bar = stats.binom.ppf(0.001, reps, 0.95)
        assert hits >= bar, (n, share_filled, error_rate, n_checked, hits / reps)
