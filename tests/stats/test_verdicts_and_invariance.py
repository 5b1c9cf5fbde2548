"""A row depends on its own metric only; verdicts never contradict themselves; one p rule."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.stats import PerQuestionMetrics, compare_runs, format_pvalue, verdict
from ragaudit.stats.verdicts import min_differing

DATA = __import__("pathlib").Path(__file__).parent.parent / "data" / "stats"
K3, K6 = str(DATA / "k3.json"), str(DATA / "k6.json")


def _runs(seed, n=150):
    rng = np.random.default_rng(seed)
    metrics = {
        "thirds": lambda: rng.integers(0, 4, n) / 3,
        "uniform": lambda: rng.random(n),
        "binary": lambda: (rng.random(n) < 0.7).astype(float),
        "recall@3": lambda: rng.choice([0, 1 / 3, 0.5, 2 / 3, 1], n),
        "ndcg": lambda: np.round(rng.random(n) ** 0.5, 4),
        "skewed": lambda: rng.exponential(0.2, n),
        "hit": lambda: (rng.random(n) < 0.9).astype(float),
    }
    columns = {name: (make(), make()) for name, make in metrics.items()}
    ids = [f"q{i:03d}" for i in range(n)]

    def run(side, name):
        return PerQuestionMetrics(
            name, {q: {m: float(columns[m][side][i]) for m in columns} for i, q in enumerate(ids)}
        )

    return run(0, "A"), run(1, "B"), list(metrics)


@pytest.mark.parametrize("method", ["auto", "bca", "percentile"])
@pytest.mark.parametrize("seed", range(3))
def test_shuffling_or_dropping_metrics_never_changes_a_row(method, seed):
    a, b, names = _runs(seed)
    options = {"n_resamples": 2000, "n_permutations": 2000, "method": method, "seed": 7}
    full = {row.metric: row.to_dict() for row in compare_runs(a, b, names, **options).metrics}
    shuffled = list(np.random.default_rng(seed).permutation(names))
    again = {row.metric: row.to_dict() for row in compare_runs(a, b, shuffled, **options).metrics}
    assert again == full
    for name in names:
        alone = compare_runs(a, b, [name], **options).metrics[0].to_dict()
        assert alone == full[name], name
    pair = compare_runs(a, b, ["recall@3", "uniform"], **options).metrics
    assert [row.to_dict() for row in pair] == [full["recall@3"], full["uniform"]]


def test_cli_rows_are_the_same_alone_and_in_the_full_table():
    def table_rows(*extra):
        result = CliRunner().invoke(
            main, ["compare", K3, K6, "--resamples", "1000", "--ci", "bca", *extra]
        )
        assert result.exit_code == 0, result.output
        return {
            line.split()[0]: line
            for line in result.output.splitlines()
            if line.split() and line.split()[0] in ("recall@k", "ndcg@k", "precision@k")
        }

    full = table_rows()
    for metric in ("recall@k", "ndcg@k", "precision@k"):
        alone = table_rows("--metric", metric)
        assert alone[metric].split() == full[metric].split()


def _constant_runs(a_values, b_values):
    ids = [f"q{i}" for i in range(len(a_values))]
    return (
        PerQuestionMetrics("A", {q: {"m": float(v)} for q, v in zip(ids, a_values, strict=True)}),
        PerQuestionMetrics("B", {q: {"m": float(v)} for q, v in zip(ids, b_values, strict=True)}),
    )


@pytest.mark.parametrize(
    "a_values,b_values",
    [([0], [1]), ([0, 0], [1, 1]), ([0.2], [0.9]), ([1, 0], [1, 1])],
)
def test_one_or_two_questions_give_a_defined_explained_verdict(a_values, b_values):
    row = compare_runs(*_constant_runs(a_values, b_values), n_resamples=200).metrics[0]
    # all differing questions favour B: p = 2 / 2**m, which cannot be below 0.05 for m <= 2
    m = sum(x != y for x, y in zip(a_values, b_values, strict=True))
    assert row.pvalue == pytest.approx(2 / 2**m)
    assert row.verdict == "too few differing questions" and row.n_differing == m


def test_the_verdict_rule_under_the_table_explains_too_few():
    result = CliRunner().invoke(main, ["compare", K3, K6, "--resamples", "500", "--full"])
    assert "too few differing questions = fewer than 6 questions differ" in result.output
    assert "p >= 2^(1-5) = 0.0625" in result.output


def test_the_verdict_is_the_exact_test():
    assert verdict(0.01, 0.05, n_differing=20) == "SIGNIFICANT"
    assert verdict(0.0499, 0.05, n_differing=20) == "SIGNIFICANT"
    assert verdict(0.05, 0.05, n_differing=20) == "borderline"  # p < alpha, strictly
    assert verdict(0.0999, 0.05, n_differing=20) == "borderline"
    assert verdict(0.2, 0.05, n_differing=20) == "no evidence"
    assert verdict(0.01, 0.05, n_differing=5) == "too few differing questions"


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.05, 0.01, 0.001])
def test_min_differing_is_the_first_count_that_can_reach_alpha(alpha):
    m = min_differing(alpha)
    assert 2.0 ** (1 - m) < alpha <= 2.0 ** (2 - m)


def test_a_binary_comparison_with_enough_discordance_is_significant_with_mcnemar_p():
    # 4 A-only vs 13 B-only among 40 (the flip-flopping case): exact p = 0.049.
    a = [1] * 4 + [0] * 13 + [1] * 23
    b = [0] * 4 + [1] * 13 + [1] * 23
    rows = [compare_runs(*_constant_runs(a, b), seed=s).metrics[0] for s in range(4)]
    assert {row.verdict for row in rows} == {"SIGNIFICANT"}
    for row in rows:
        assert row.pvalue == pytest.approx(row.mcnemar.pvalue, rel=1e-12)
        assert row.p_method == "exact (lattice)"
    assert rows[0].confidence_interval.low > 0


@pytest.mark.parametrize(
    "p,text", [(0.0, "<0.001"), (0.000999, "<0.001"), (0.001, "0.001"), (0.0496, "0.050")]
)
def test_one_display_rule_for_p(p, text):
    assert format_pvalue(p) == text


def test_the_paired_view_prints_small_p_like_the_table(tmp_path):
    a = [0] * 30 + [1] * 10
    b = [1] * 30 + [1] * 10
    ids = [f"q{i:02d}" for i in range(40)]
    for name, values in (("a.json", a), ("b.json", b)):
        (tmp_path / name).write_text(
            json.dumps({q: {"correct": v} for q, v in zip(ids, values, strict=True)})
        )
    out = CliRunner().invoke(
        main, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--full"]
    )
    out = out.output
    assert "McNemar exact two-sided p = <0.001" in out
    assert "p = 0.000" not in out


def test_ci_choice_applies_where_it_can_and_says_so_where_it_cannot():
    out = CliRunner().invoke(main, ["compare", K3, K6, "--ci", "wilson"])
    assert out.exit_code == 2
    assert "'wilson' is an interval for a single rate" in out.output
    doc = json.loads(
        CliRunner()
        .invoke(main, ["compare", K3, K6, "--ci", "bootstrap", "--format", "json"])
        .output
    )
    assert {row["ci_method"] for row in doc["metrics"]} == {"bootstrap percentile"}
    doc = json.loads(CliRunner().invoke(main, ["compare", K3, K6, "--format", "json"]).output)
    methods = {row["metric"]: row["ci_method"] for row in doc["metrics"]}
    assert methods["correct"] == "McNemar exact inverted"
    assert methods["ndcg@k"] == "sign-flip inversion widened to betting (too few differ)"
    assert methods["precision@k"] == "sign-flip inversion"
    doc = json.loads(
        CliRunner().invoke(main, ["compare", K3, K6, "--ci", "betting", "--format", "json"]).output
    )
    methods = {row["metric"]: row["ci_method"] for row in doc["metrics"]}
    assert methods["correct"] == "McNemar exact inverted"
    assert methods["ndcg@k"] == methods["precision@k"] == "betting (Waudby-Smith-Ramdas)"
    p_methods = {row["metric"]: row["p_method"] for row in doc["metrics"]}
    assert p_methods["correct"] == "exact (lattice)"  # 0/1: McNemar's exact test
    assert all(method.startswith("exact") for method in p_methods.values())
