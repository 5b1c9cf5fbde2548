"""Intervals and verdicts of repeated runs (issue 34): the question is the unit.

The oracle of ``compare`` is a brute-force enumeration of all 2^n sign patterns of the
per-question mean differences, written here; the oracle of the run's mean interval is
:func:`ragaudit.stats.repeats.repeated_mean_interval` of the matrix written by hand, and
Korn-Graubard over the valued cells (:func:`ragaudit.stats.clustered.clustered_rate`) when
some cells are missing.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.saved_run import SavedRun
from ragaudit.stats.clustered import clustered_rate
from ragaudit.stats.compare import compare_runs
from ragaudit.stats.intervals import proportion_interval
from ragaudit.stats.policy import mean_interval
from ragaudit.stats.repeated_runs import run_mean_interval
from ragaudit.stats.repeats import repeated_mean_interval

# correct, question by question (rows) and repeat by repeat (columns)
A = [[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 0]]
B = [[1, 1, 1], [1, 1, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [1, 1, 1], [1, 1, 0]]


def _run(name: str, matrix, order=None) -> SavedRun:
    order = range(len(matrix)) if order is None else order
    rows = []
    for i in order:
        values = [None if np.isnan(v) else bool(v) for v in np.asarray(matrix[i], float)]
        rows.append({"id": f"q{i}", "retrieved": [], "metrics": {"correct": values[0]},
                     "repeats": [{"seed": r, "metrics": {"correct": v}}
                                 for r, v in enumerate(values[1:], 1)]})  # fmt: skip
    config = {"k": 1, "repeats": len(matrix[0])}
    return SavedRun.from_dict({"name": name, "config": config, "rows": rows})


def _brute_force_p(differences: np.ndarray) -> float:
    """Two-sided exact sign-flip p: the share of the 2^n patterns whose |sum| is at least
    the observed one (a relative tolerance for the float sums)."""
    observed = abs(differences.sum())
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(differences)):
        total += 1
        hits += abs(np.dot(signs, differences)) >= observed * (1 - 1e-9) - 1e-12
    return hits / total


def test_compare_of_repeated_runs_is_the_sign_flip_test_on_question_means(tmp_path):
    a, b = _run("A", A), _run("B", B, order=[3, 1, 6, 0, 5, 2, 4])  # B's rows shuffled
    by_hand = np.mean(B, axis=1) - np.mean(A, axis=1)  # paired by question id
    row = compare_runs(a, b, ["correct"]).metrics[0]
    assert row.n == 7 and row.statistic == pytest.approx(by_hand.mean())
    assert row.mean_a == pytest.approx(np.mean(A)) and row.mean_b == pytest.approx(np.mean(B))
    assert row.exact and row.pvalue == pytest.approx(_brute_force_p(by_hand))
    assert row.pvalue == pytest.approx(0.0625)  # 4 positive differences, 1 of 16 more extreme
    # the (question, repeat) pairs as 21 independent draws would have another p
    pooled = np.ravel(B) - np.ravel(A)
    assert _brute_force_p(pooled[pooled != 0]) != pytest.approx(row.pvalue)
    # the CLI reads the files and prints the same test
    for run, path in ((a, tmp_path / "a.json"), (b, tmp_path / "b.json")):
        from ragaudit.data.records import write_saved_run

        write_saved_run(path, run)
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.json"),
                                       str(tmp_path / "b.json"), "-m", "correct",
                                       "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["metrics"][0]
    assert shown["p_value"] == pytest.approx(row.pvalue) and shown["p_exact"]
    assert shown["diff"] == pytest.approx(by_hand.mean())


def test_a_missing_repeat_leaves_its_question_mean_over_the_others():
    a = np.array(A, float)
    b = np.array(B, float)
    b[2, 1] = np.nan  # one undecided verdict
    row = compare_runs(_run("A", a), _run("B", b), ["correct"]).metrics[0]
    means_b = np.nanmean(b, axis=1)
    assert row.mean_b == pytest.approx(means_b.mean())
    assert row.pvalue == pytest.approx(_brute_force_p(means_b - a.mean(axis=1)))


def test_the_mean_interval_of_a_repeated_run_clusters_by_question():
    run = _run("A", A)
    got = run_mean_interval(run, "correct")
    expected = repeated_mean_interval(A)
    assert got == expected and got.method == "Korn-Graubard beta, questions as clusters"
    # never (question, repeat) as independent: not the 21-draw Clopper-Pearson interval
    pooled = proportion_interval(int(np.sum(A)), np.size(A)).confidence_interval
    assert got.confidence_interval != pooled
    one = run.repeat(0)
    assert run_mean_interval(one, "correct") == mean_interval(np.array(A)[:, 0])


def test_the_mean_interval_with_missing_cells_is_korn_graubard_over_the_valued_ones():
    matrix = np.array(A, float)
    matrix[1, 2] = matrix[4, 0] = np.nan
    got = run_mean_interval(_run("A", matrix), "correct")
    rows, repeats = np.nonzero(~np.isnan(matrix))
    expected = clustered_rate(matrix[rows, repeats], rows).confidence_interval
    assert got.confidence_interval == expected
    assert got.statistic == pytest.approx(np.nanmean(matrix))
