import json
import warnings

import numpy as np
import pytest
from scipy import stats

from ragaudit import compare_runs  # the public one: files too (stats itself reads none)
from ragaudit.data.per_question_files import read_per_question_metrics, read_run_directory
from ragaudit.exceptions import FormatError, InputError, RagauditWarning
from ragaudit.stats import PerQuestionMetrics, compare_all

DATA = __import__("pathlib").Path(__file__).parent.parent / "data" / "stats"
K3, K6 = DATA / "k3.json", DATA / "k6.json"


@pytest.fixture(scope="module")
def chapter():
    return {row.metric: row for row in compare_runs(K3, K6, n_resamples=2000).metrics}


def test_chapter_correct_row_and_paired_table(chapter):
    row = chapter["correct"]
    assert (row.n, row.mean_a, row.mean_b, row.statistic) == (42, 36 / 42, 36 / 42, 0.0)
    table = row.mcnemar
    assert (table.both, table.a_only, table.b_only, table.neither) == (35, 1, 1, 5)
    assert table.discordant_ids == ("q04", "q37")
    assert table.pvalue == 1.0 and row.pvalue == 1.0
    # 2 differing questions: even 2 of 2 for one run gives p = 0.5, so no verdict is possible
    assert row.verdict == "too few differing questions" and row.n_differing == 2
    assert row.p_method == "exact (lattice)" and row.ci_method == "McNemar exact inverted"
    assert row.discordance == 2 / 42 and row.mde is None  # 2 discordant: nothing detectable
    assert "observed discordance 0.048" in row.mde_assumption


def test_nulls_are_excluded_pairwise(chapter):
    row = chapter["citation_accuracy"]  # spelled citation_acc in the (older) fixture
    assert (row.n, row.excluded) == (38, 4)
    assert row.mean_a == 1.0 and row.statistic == pytest.approx(-1 / 38)
    assert row.mcnemar.discordant_ids == ("q11",)


def test_precision_drop_is_significant(chapter):
    row = chapter["precision@k"]
    assert row.verdict == "SIGNIFICANT"
    assert row.confidence_interval.high < 0 and row.pvalue < 0.001
    assert row.mcnemar is None and row.discordance is None


def _mean_diff(x, y, axis=-1):
    return np.mean(y - x, axis=axis)


@pytest.mark.parametrize("metric", ["ndcg@k", "precision@k"])
def test_rows_agree_with_scipy_on_the_aligned_values(metric):
    # The aligned values are read from the files here; the mean, the percentile CI and the
    # permutation p come from scipy (the same random streams are not required).
    a, b = (
        {r["id"]: r["metrics"][metric] for r in json.loads(path.read_text())["rows"]}
        for path in (K3, K6)
    )
    ids = sorted(a)
    first = np.array([a[q] for q in ids], dtype=float)
    second = np.array([b[q] for q in ids], dtype=float)
    row = compare_runs(K3, K6, [metric], n_resamples=20_000, method="bootstrap").metrics[0]
    assert row.n == len(ids) == 42
    assert row.statistic == pytest.approx(np.mean(second - first), abs=1e-12)
    boot = stats.bootstrap(
        (first, second),
        _mean_diff,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20_000,
        rng=3,
    ).confidence_interval
    assert row.confidence_interval.low == pytest.approx(boot.low, abs=0.003)
    assert row.confidence_interval.high == pytest.approx(boot.high, abs=0.003)
    perm = stats.permutation_test(
        (first, second),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        rng=3,
    )
    # both are Monte Carlo at n = 42; 0.02 is > 4 standard errors for any p
    assert row.pvalue == pytest.approx(perm.pvalue, abs=0.02)


def test_same_inputs_same_numbers_and_subsets_are_consistent():
    full = compare_runs(K3, K6, n_resamples=500, seed=7)
    again = compare_runs(K3, K6, n_resamples=500, seed=7)
    assert full == again
    alone = compare_runs(K3, K6, ["ndcg@k"], n_resamples=500, seed=7).metrics[0]
    assert alone == next(r for r in full.metrics if r.metric == "ndcg@k")
    # the seed moves a bootstrap interval; the default interval of ndcg@k draws nothing
    boot, other = (
        compare_runs(K3, K6, ["ndcg@k"], n_resamples=500, seed=s, method="bootstrap")
        for s in (7, 8)
    )
    assert other.metrics[0].confidence_interval != boot.metrics[0].confidence_interval
    moved = compare_runs(K3, K6, ["ndcg@k"], n_resamples=500, seed=8).metrics[0]
    assert moved.confidence_interval == alone.confidence_interval


def test_flat_json_and_jsonl_read_like_the_saved_run():
    saved = read_per_question_metrics(K6)
    assert read_per_question_metrics(DATA / "k6_flat.json").values == saved.values
    assert read_per_question_metrics(DATA / "k6_flat.jsonl").values == saved.values
    assert saved.name == "k6_cs800"


def test_subsample_intervals_shrink_roughly_like_one_over_sqrt_n():
    a = PerQuestionMetrics("a", {f"q{i:03d}": {"m": 0.0} for i in range(160)})
    rng = np.random.default_rng(1)
    b = PerQuestionMetrics(
        "b", {f"q{i:03d}": {"m": float(v)} for i, v in enumerate(rng.normal(0.1, 0.3, 160))}
    )
    row = compare_runs(a, b, subsample_sizes=(10, 40)).metrics[0]
    widths = {s.n: s.width for s in row.subsamples}
    assert list(widths) == [10, 40, 160]
    # Quadrupling n halves the width (up to sampling noise of the subsample's spread).
    assert widths[10] / widths[40] == pytest.approx(2, rel=0.35)
    assert widths[40] / widths[160] == pytest.approx(2, rel=0.35)
    first_ten = [b.values[f"q{i:03d}"]["m"] for i in range(10)]
    assert row.subsamples[0].statistic == pytest.approx(np.mean(first_ten))


def _runs(values_a, values_b):
    return (
        PerQuestionMetrics("A", {q: {"m": v} for q, v in values_a.items()}),
        PerQuestionMetrics("B", {q: {"m": v} for q, v in values_b.items()}),
    )


def test_questions_in_one_run_only_are_named_and_excluded():
    a, b = _runs({"q1": 1.0, "q2": 0.5, "q3": 0.2}, {"q1": 1.0, "q2": 0.4, "q9": 0.0})
    with pytest.warns(RagauditWarning) as record:
        result = compare_runs(a, b)
    assert [str(w.message) for w in record] == [
        "1 question(s) only in run 'A' are excluded: q3",
        "1 question(s) only in run 'B' are excluded: q9",
    ]
    assert result.only_b == ("q9",) and result.metrics[0].n == 2


def test_less_than_half_overlap_needs_allow_partial():
    a, b = _runs({f"q{i}": 1.0 for i in range(10)}, {f"q{i}": 1.0 for i in range(6, 16)})
    with pytest.raises(InputError, match=r"share only 4 of 10 questions .*--allow-partial"):
        compare_runs(a, b)
    with pytest.warns(RagauditWarning):
        assert compare_runs(a, b, allow_partial=True).n_common == 4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: compare_runs(*_runs({"q1": 1.0}, {"q2": 1.0})),
            r"runs 'A' and 'B' have no question id in common",
        ),
        (
            lambda: compare_runs(K3, K6, ["mrr"]),
            r"metric 'mrr' is missing from run 'k3_cs800' .*k3.json\); it has: recall@k",
        ),
        (
            lambda: compare_runs(K3, K6, confidence=1.2),
            r"confidence: expected a number strictly between 0 and 1, found 1.2",
        ),
        (
            lambda: compare_runs(K3, K6, n_resamples=0),
            r"resamples: expected an integer >= 1, found 0",
        ),
        (
            lambda: compare_runs(K3, K6, n_permutations=0),
            r"permutations: expected an integer >= 1, found 0",
        ),
        (lambda: compare_runs(K3, K6, seed=-1), r"seed: expected an integer >= 0, found -1"),
    ],
)
def test_bad_comparisons_are_one_line_errors(call, message):
    with pytest.raises(InputError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        (
            '{"q1": {"m": NaN}}',
            ".json",
            r"bad.json: m: question 'q1': expected a finite number or null, found nan",
        ),
        (
            '{"q1": {"m": "high"}}',
            ".json",
            r"bad.json: m: question 'q1': expected a number, boolean or null, found 'high'",
        ),
        (
            '{"id": "q1", "m": 1}\n{"id": "q7", "m": Infinity}\n',
            ".jsonl",
            r"bad.jsonl:2: m: question 'q7': expected a finite number or null",
        ),
        (
            '{"id": "q1", "m": 1}\n{"m": 1}\n',
            ".jsonl",
            r"bad.jsonl:2: id: expected an object with an 'id' key",
        ),
        (
            '{"id": "q1", "m": 1}\n{"id": "q1", "m": 0}\n',
            ".jsonl",
            r"bad.jsonl:2: id: question 'q1' appears more than once",
        ),
        ("[1, 2]", ".json", r"bad.json: expected a saved run, a \{question_id"),
        ('{"q1": ', ".json", r"bad.json:1: invalid JSON"),
    ],
)
def test_bad_files_name_file_line_question_and_field(tmp_path, content, suffix, message):
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    with pytest.raises(FormatError, match=message):
        read_per_question_metrics(path)


def test_metric_null_everywhere_is_skipped_with_a_warning():
    a = PerQuestionMetrics("A", {"q1": {"m": 1.0, "x": None}, "q2": {"m": 0.0, "x": None}})
    b = PerQuestionMetrics("B", {"q1": {"m": 1.0, "x": 1.0}, "q2": {"m": 1.0, "x": 0.0}})
    with pytest.warns(RagauditWarning, match="metric 'x' is null for every common question"):
        result = compare_runs(a, b)
    assert [row.metric for row in result.metrics] == ["m"]


def test_compare_all_builds_every_pair_with_holm():
    result = compare_all(
        read_run_directory(DATA / "runs"), "ndcg@5", n_resamples=1000, n_permutations=2000
    )
    assert result.runs == ("bm25", "bm25_rerank", "hybrid")
    assert [(i, j) for i, j, _ in result.pairs] == [(0, 1), (0, 2), (1, 2)]
    raw = np.array([row.pvalue for _, _, row in result.pairs])
    order = np.argsort(raw)
    expected = np.minimum(1, np.maximum.accumulate((3 - np.arange(3)) * raw[order]))
    assert np.array(result.adjusted_pvalues)[order] == pytest.approx(expected)
    assert result.distinguishable == [("bm25", "hybrid"), ("bm25_rerank", "hybrid")]
    doc = json.loads(json.dumps(result.to_dict()))
    assert doc["pairs"][0]["run_a"] == "bm25" and "p_holm" in doc["pairs"][0]


def test_compare_all_errors(tmp_path):
    with pytest.raises(InputError, match="expected at least 2 saved runs"):
        read_run_directory(tmp_path)
    with pytest.raises(InputError, match="expected a directory of saved runs"):
        read_run_directory(tmp_path / "nope")
    with pytest.raises(InputError, match="expected a list of loaded runs, found the path"):
        compare_all(tmp_path, "m")


def test_stats_reads_no_files_and_says_where_files_are_read():
    from ragaudit.stats import compare_runs as compare_loaded

    with pytest.raises(InputError, match=r"ragaudit\.stats reads no files; pass paths to"):
        compare_loaded(K3, K6)
    loaded = compare_loaded(read_per_question_metrics(K3), read_per_question_metrics(K6))
    from_paths = compare_runs(K3, K6).to_dict()
    # the library also reads the two saved runs' configs (stats has paired values only)
    assert from_paths.pop("config_differences")["design_variables"] == ["k"]
    assert loaded.to_dict() == from_paths


def test_no_stray_warnings_on_clean_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare_runs(K3, K6, n_resamples=200, method="bca")


def test_the_mde_of_a_binary_row_is_mcnemars_at_the_observed_discordance():
    # 10 of 60 questions differ (7 favour B): the MDE is the exact McNemar one at d = 1/6, and
    # observed (post-hoc) power is not reported (Hoenig & Heisey 2001)
    from ragaudit.stats import minimum_detectable_effect

    ids = [f"q{i:02d}" for i in range(60)]
    a = {q: {"correct": float(i < 30)} for i, q in enumerate(ids)}
    b = {q: {"correct": float(i < 27 or 30 <= i < 37)} for i, q in enumerate(ids)}
    row = compare_runs(PerQuestionMetrics("A", a), PerQuestionMetrics("B", b)).metrics[0]
    assert row.discordance == pytest.approx(10 / 60)
    assert row.mde == minimum_detectable_effect(60, 10 / 60) is not None
    assert "power" not in row.to_dict() and row.to_dict()["mde"] == row.mde


def test_questions_subset_keeps_only_the_answerable_rows_of_saved_runs(tmp_path):
    def saved(name, correct):
        rows = [
            {"id": f"q{i}", "answerable": i < 4, "retrieved": [], "metrics": {"correct": c}}
            for i, c in enumerate(correct)
        ]
        path = tmp_path / f"{name}.json"
        header = {"format": "ragaudit.run", "format_version": 1, "name": name}
        path.write_text(json.dumps({**header, "config": {"k": 1}, "rows": rows}))
        return path

    # q0-q3 answerable, q4-q5 unanswerable (correct = refused).  By hand: over all six
    # questions A = 4/6 and B = 5/6; over the answerable four A = 2/4, B = 3/4.
    a = saved("a", [1, 0, 1, 0, 1, 1])
    b = saved("b", [1, 1, 1, 0, 1, 1])
    everything = compare_runs(a, b, ["correct"], seed=0).metrics[0]
    assert (everything.n, everything.mean_a, everything.mean_b) == (6, 4 / 6, 5 / 6)
    answerable = compare_runs(a, b, ["correct"], seed=0, questions="answerable").metrics[0]
    assert (answerable.n, answerable.mean_a, answerable.mean_b) == (4, 0.5, 0.75)
    unanswerable = compare_runs(a, b, ["correct"], seed=0, questions="unanswerable").metrics[0]
    assert (unanswerable.n, unanswerable.mean_a, unanswerable.mean_b) == (2, 1.0, 1.0)
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"q0": {"correct": 1}}))
    with pytest.raises(InputError, match="only saved runs record which questions are answerable"):
        compare_runs(flat, flat, questions="answerable")
    with pytest.raises(InputError, match="questions: expected one of all, answerable"):
        compare_runs(a, b, questions="some")
