"""``ragaudit.testing.assert_not_worse`` and ``ragaudit baseline update``.

Expected p-values from scipy's exact binomial test (McNemar's exact test on the discordant
questions); which questions got worse is known by construction.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from scipy import stats

from ragaudit.cli import main
from ragaudit.data import Qrels, Run
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.exceptions import InputError
from ragaudit.metrics import evaluate
from ragaudit.testing import assert_not_worse

N = 40


def runs(wrong: set[int], better: set[int] = frozenset()) -> tuple[PerQuestionMetrics, ...]:
    """A baseline right on questions 0..29; the candidate loses ``wrong`` and gains ``better``."""
    base = {f"q{i:02d}": {"correct": float(i < 30)} for i in range(N)}
    cand = {
        f"q{i:02d}": {"correct": float((i < 30 and i not in wrong) or i in better)}
        for i in range(N)
    }
    return PerQuestionMetrics("baseline", base), PerQuestionMetrics("candidate", cand)


def test_a_significant_regression_fails_with_the_table_and_the_ids():
    wrong = {3, 5, 8, 13, 21, 22, 25, 29}
    with pytest.raises(AssertionError) as info:
        assert_not_worse(*runs(wrong), metrics=["correct"], alpha=0.05)
    message = str(info.value)
    p = stats.binomtest(0, len(wrong), 0.5).pvalue  # 8 discordant, all against the candidate
    assert p < 0.05
    assert message.startswith(
        "candidate 'candidate' is significantly worse than baseline 'baseline' on correct"
    )
    ids = ", ".join(f"q{i:02d}" for i in sorted(wrong))
    assert f"worse on 8 question(s): {ids}" in message
    assert f"discordant: 8 right only in the baseline, 0 only in the candidate: {ids}" in message
    assert f"p {p:.3f}" in message
    assert "mean A  mean B" in message and "SIGNIFICANT" in message  # the comparison table


def test_a_failure_in_pytest_shows_the_users_line_not_the_helpers_source(tmp_path):
    # __tracebackhide__: pytest's report of a failing gate holds the calling test's line and
    # the message, and none of assert_not_worse's own lines
    test = tmp_path / "test_gate.py"
    test.write_text(
        textwrap.dedent("""
        from ragaudit.data.per_question import PerQuestionMetrics
        from ragaudit.testing import assert_not_worse

        def test_gate():
            base = PerQuestionMetrics("base", {f"q{i}": {"hit": 1.0} for i in range(10)})
            worse = PerQuestionMetrics("new", {f"q{i}": {"hit": float(i < 2)} for i in range(10)})
            assert_not_worse(base, worse, ["hit"])  # the user's line
    """)
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(test), "-p", "no:cacheprovider", "-q"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'assert_not_worse(base, worse, ["hit"])  # the user\'s line' in done.stdout
    assert "is significantly worse than baseline 'base' on hit" in done.stdout
    assert "check_fraction(alpha" not in done.stdout  # a line of the helper's body
    assert "failed = result.regressions" not in done.stdout


def test_a_drop_without_evidence_and_an_improvement_pass():
    # 5 lost questions: p = 2 * 0.5**5 = 0.0625 > 0.05
    assert stats.binomtest(0, 5, 0.5).pvalue > 0.05
    result = assert_not_worse(*runs({0, 1, 2, 3, 4}), metrics=["correct"])
    assert result.metrics[0].statistic == pytest.approx(-5 / N)
    gained = runs(set(), better=set(range(30, 40)))
    assert assert_not_worse(*gained).metrics[0].verdict == "SIGNIFICANT"  # better: passes


def test_alpha_sets_the_level():
    # 6 of 6 discordant against: p = 2 * 0.5**6 = 0.03125 fails at 0.05, passes at 0.01
    baseline, candidate = runs({0, 1, 2, 3, 4, 5})
    with pytest.raises(AssertionError):
        assert_not_worse(baseline, candidate, ["correct"], alpha=0.05)
    assert assert_not_worse(baseline, candidate, ["correct"], alpha=0.01).alpha == 0.01


def test_files_and_evaluations_are_accepted(tmp_path):
    baseline, candidate = runs(set(range(10)))
    a, b = tmp_path / "a.json", tmp_path / "b.jsonl"
    a.write_text(json.dumps(baseline.values))
    b.write_text("".join(json.dumps({"id": q, **v}) + "\n" for q, v in candidate.values.items()))
    with pytest.raises(AssertionError, match="worse on 10 question"):
        assert_not_worse(str(a), b, ["correct"])
    qrels = Qrels({f"q{i}": {"rel": 1} for i in range(12)})
    good = evaluate(qrels, Run({f"q{i}": ["rel"] for i in range(12)}), ["hit@1"])
    bad = evaluate(qrels, Run({f"q{i}": ["x", "rel"] for i in range(12)}), ["hit@1"])
    assert_not_worse(bad, good, ["hit@1"])
    with pytest.raises(AssertionError, match="q0, q1, q10, q11, q2"):
        assert_not_worse(good, bad, ["hit@1"])


def test_bad_arguments_are_input_errors():
    baseline, candidate = runs(set())
    with pytest.raises(InputError, match="alpha: expected a number strictly between 0 and 1"):
        assert_not_worse(baseline, candidate, alpha=1.5)
    with pytest.raises(InputError, match="unknown metric 'recal'"):
        assert_not_worse(baseline, candidate, ["recal"])
    with pytest.raises(InputError, match="found int"):
        assert_not_worse(3, candidate)  # type: ignore[arg-type]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_baseline_update_copies_validated_runs_atomically(tmp_path):
    baseline, candidate = runs({1, 2})
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(baseline.values))
    second.write_text(json.dumps(candidate.values))
    target = tmp_path / "ci" / "baseline.json"
    made = invoke("baseline", "update", str(first), "--to", str(target), "--format", "json")
    assert made.exit_code == 0, made.output
    assert target.read_bytes() == first.read_bytes()
    doc = json.loads(made.stdout)
    assert doc["previous"] is False and doc["means"]["correct"] == {"before": None, "now": 0.75}
    moved = invoke("baseline", "update", str(second), "--to", str(target))
    assert moved.exit_code == 0 and target.read_bytes() == second.read_bytes()
    assert moved.stdout.splitlines()[2].split() == ["correct", "0.750", f"{28 / 40:.3f}"]
    again = invoke("baseline", "update", str(second), "--to", str(target))
    assert "unchanged: the same bytes" in again.stdout
    assert [p.name for p in target.parent.iterdir()] == ["baseline.json"]  # no temp files left


def test_baseline_update_refuses_a_bad_run_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text('{"q1": {"correct": 1}}')
    bad = tmp_path / "bad.json"
    bad.write_text('{"q1": {"correct": 3}}')
    result = invoke("baseline", "update", str(bad), "--to", str(target))
    assert result.exit_code == 2
    assert result.stderr == (
        f"ragaudit: error: {bad}: correct: question 'q1': expected 0, 1, true, false or null, "
        "found 3\n"
    )
    assert target.read_text() == '{"q1": {"correct": 1}}'


def test_a_baseline_with_the_candidates_name_is_told_apart(tmp_path):
    # `baseline update` copies the candidate byte for byte, so both carry the same run name;
    # the comparison names them by the shortest path endings that differ.
    from ragaudit.stats import compare_runs
    from ragaudit.stats._inputs import PerQuestionMetrics

    values = {f"q{i}": {"hit": float(i % 2)} for i in range(10)}
    base = PerQuestionMetrics("candidate", values, path=str(tmp_path / "ci" / "baseline.json"))
    new = PerQuestionMetrics("candidate", values, path=str(tmp_path / "results" / "candidate.json"))
    result = compare_runs(base, new, ["hit"], n_resamples=10, n_permutations=10)
    assert (result.name_a, result.name_b) == ("baseline.json", "candidate.json")
