import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from ragaudit.cli import main

DATA = __import__("pathlib").Path(__file__).parent.parent / "data" / "stats"
K3, K6 = str(DATA / "k3.json"), str(DATA / "k6.json")


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_compare_table_prints_the_chapter_layout_and_seed(mcnemar_oracle):
    result = run("compare", K3, K6, "--resamples", "2000", "--seed", "5", "--full")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "seed 5" in out
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert header.split() == [
        "metric",
        "n",
        "mean",
        "A",
        "mean",
        "B",
        "B",
        "-",
        "A",
        "95%",
        "CI",
        "CI",
        "method",
        "p",
        "p",
        "method",
        "verdict",
    ]
    low, high = mcnemar_oracle(35, 1, 1, 5)  # the paired 2x2 table of `correct`
    correct = next(line for line in out.splitlines() if line.startswith("correct "))
    assert correct.split() == [
        "correct",
        "42",
        "0.857",
        "0.857",
        "+0.000",
        f"[{low:+.3f},",
        f"{high:+.3f}]",
        "exact",
        "1.000",  # McNemar exact: 2 discordant, 1 each way
        "exact",
        "too",
        "few",
        "differing",
        "questions",
    ]
    assert "questions that differ: q04, q37" in out
    assert "McNemar exact two-sided p = 1.000" in out


def test_compare_is_byte_identical_between_runs():
    first = run("compare", K3, K6, "--resamples", "1000", "--format", "json")
    second = run("compare", K3, K6, "--resamples", "1000", "--format", "json")
    assert first.exit_code == 0 and first.output == second.output


def test_compare_json_has_the_documented_keys():
    result = run(
        "compare",
        K3,
        K6,
        "--resamples",
        "500",
        "--metric",
        "correct",
        "--metric",
        "ndcg@k",
        "--format",
        "json",
        "--ci",
        "bca",
    )
    doc = json.loads(result.output)
    assert {"seed", "resamples", "confidence", "metrics"} <= set(doc)
    assert doc["seed"] == 0 and doc["resamples"] == 500 and doc["ci"] == "bca"
    correct, ndcg = doc["metrics"]
    assert {
        "metric",
        "n",
        "mean_a",
        "mean_b",
        "diff",
        "ci_low",
        "ci_high",
        "p_value",
        "verdict",
    } <= set(correct)
    assert correct["mcnemar"] == {
        "a_only": 1,
        "b_only": 1,
        "both": 35,
        "neither": 5,
        "p_value": 1.0,
        "discordant_ids": ["q04", "q37"],
    }
    assert "mcnemar" not in ndcg


def _fixture_means(metric):
    """Means over the questions where both runs define ``metric``, read straight from the files."""
    key = {"citation_accuracy": "citation_acc"}.get(metric, metric)  # the file's old name
    a, b = (
        {r["id"]: r["metrics"][key] for r in json.loads(Path(f).read_text())["rows"]}
        for f in (K3, K6)
    )
    common = [q for q in a if a[q] is not None and b[q] is not None]
    mean_a = sum(float(a[q]) for q in common) / len(common)
    mean_b = sum(float(b[q]) for q in common) / len(common)
    return len(common), mean_a, mean_b


def test_compare_markdown():
    result = run("compare", K3, K6, "--resamples", "500", "--format", "markdown")
    assert result.exit_code == 0
    assert (
        "| metric | n | mean A | mean B | B - A | 95% CI | CI method | p | p method | verdict |"
        in result.output
    )
    rows = {
        line.split(" | ")[0].lstrip("| "): line.split(" | ")
        for line in result.output.splitlines()
        if line.startswith("| ") and not line.startswith(("| metric", "| :---"))
    }
    # the fixture spells the old name citation_acc: it is read as citation_accuracy
    assert list(rows) == ["recall@k", "ndcg@k", "precision@k", "correct", "citation_accuracy"]
    for metric, cells in rows.items():
        n, mean_a, mean_b = _fixture_means(metric)
        assert cells[1:5] == [str(n), f"{mean_a:.3f}", f"{mean_b:.3f}", f"{mean_b - mean_a:+.3f}"]
    assert rows["citation_accuracy"][1] == "38"  # 4 questions have citation_acc = null
    assert rows["precision@k"][-1] == "SIGNIFICANT |"


def test_compare_all_matrix():
    result = run(
        "compare",
        "--all",
        str(DATA / "runs"),
        "--metric",
        "ndcg@5",
        "--resamples",
        "500",
        "--permutations",
        "1000",
    )
    assert result.exit_code == 0, result.output
    assert (
        "distinguishable (Holm-adjusted p < 0.05 and CI excludes 0): bm25 vs hybrid; "
        "bm25_rerank vs hybrid" in result.output
    )
    doc = json.loads(
        run(
            "compare",
            "--all",
            str(DATA / "runs"),
            "--metric",
            "ndcg@5",
            "--resamples",
            "200",
            "--format",
            "json",
        ).output
    )
    assert len(doc["pairs"]) == 3 and doc["seed"] == 0


def test_plan_table_and_json():
    table = run("plan")
    assert table.exit_code == 0
    rows = {
        line.split()[0]: line.split()[1:]
        for line in table.output.splitlines()
        if line.strip() and line.split()[0].isdigit()
    }
    assert rows["20"] == ["-", "-", "-"] and rows["1000"][0] == "0.03"
    doc = json.loads(run("plan", "--n", "42", "--disagree", "0.1,0.2", "--format", "json").output)
    assert doc == [{"n": 42, "disagree": 0.1, "mde": None}, {"n": 42, "disagree": 0.2, "mde": 0.2}]


def test_agreement_command():
    result = run(
        "agreement", str(DATA / "labels_a.qrels"), str(DATA / "labels_b.jsonl"), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["n_items"] == 30 and doc["only_a"] == 1
    # Reference: the two files parsed here by hand, kappa from sklearn on the shared items.
    lines_a = (DATA / "labels_a.qrels").read_text().split("\n")
    grades_a = {(q, c): int(g) for q, _, c, g in (line.split() for line in lines_a if line)}
    lines_b = (DATA / "labels_b.jsonl").read_text().splitlines()
    grades_b = {(r["qid"], r["chunk_id"]): r["grade"] for r in map(json.loads, lines_b)}
    shared = sorted(grades_a.keys() & grades_b.keys())
    a, b = [grades_a[k] for k in shared], [grades_b[k] for k in shared]
    assert doc["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    quadratic = cohen_kappa_score(a, b, weights="quadratic")
    assert doc["weighted_kappa_quadratic"] == pytest.approx(quadratic, abs=1e-12)
    agreed = sum(x == y for x, y in zip(a, b, strict=True))
    assert len(shared) == 30 and doc["raw_agreement"] == pytest.approx(agreed / len(shared))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", K3], "compare: expected two runs RUN_A RUN_B, found 1"),
        (
            ["compare", K3, K6, "--confidence", "1.5"],
            "confidence: expected a number strictly between 0 and 1",
        ),
        (["compare", K3, K6, "--resamples", "0"], "resamples: expected an integer >= 1"),
        (
            ["compare", K3, K6, "--metric", "nope"],
            "unknown metric 'nope'; valid metrics are: hit@k, recall@k",
        ),
        (
            ["compare", K3, str(DATA / "nope.json")],
            "nope.json: expected an existing file, found nothing at this path",
        ),
        (["compare", "--all", str(DATA / "runs")], "expected exactly one --metric, found 0"),
        (["plan", "--n", "0"], "n: expected a number of questions >= 1, found 0"),
        (["plan", "--disagree", "1.5"], "disagree: expected a number in (0, 1]"),
        (["plan", "--n", "ten"], "--n: expected comma-separated ints, found 'ten'"),
        (
            ["agreement", str(DATA / "labels_a.qrels"), str(DATA / "k3.json")],
            "expected a run or labels (TREC or JSON), found a ragaudit saved run",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("ragaudit: error")]
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in result.output


def _write_per_question(path, values):
    path.write_text(json.dumps({f"q{i:02d}": {"correct": v} for i, v in enumerate(values)}))
    return str(path)


def test_fail_if_worse_gates_only_a_significant_drop(tmp_path):
    # 30 questions: A right on all; B wrong on 10 of them -> McNemar/permutation p = 2 * 0.5**10
    # (about 0.002) and every bootstrap resample has a negative mean: a significant drop.
    a = _write_per_question(tmp_path / "a.json", [1] * 30)
    b_bad = _write_per_question(tmp_path / "b_bad.json", [0] * 10 + [1] * 20)
    # B wrong on just 1 question: p = 1.0, no evidence of a change, the gate must pass.
    b_same = _write_per_question(tmp_path / "b_same.json", [0] + [1] * 29)
    failed = run("compare", a, b_bad, "--fail-if-worse", "correct")
    assert failed.exit_code == 1
    assert "gate failed: correct is worse in B by -0.333" in failed.output
    assert run("compare", a, b_same, "--fail-if-worse", "correct").exit_code == 0
    # an improvement never fails the gate
    assert run("compare", b_bad, a, "--fail-if-worse", "correct").exit_code == 0
    unknown = run("compare", a, b_same, "--fail-if-worse", "ndcg@5")
    assert (
        unknown.exit_code == 2
        and "'ndcg@5' is not a compared metric; compared: correct" in unknown.output
    )
    both = run("compare", "--all", str(tmp_path), "--metric", "correct", "--fail-if-worse", "x")
    assert both.exit_code == 2 and "needs two runs, not --all" in both.output


def test_multirun_rows_of_runs_with_the_same_file_name_can_be_told_apart(tmp_path):
    # Regression: `evaluate --run a/r.txt --run b/r.txt` labelled both rows "r.txt".
    import shutil

    trec = "tests/data/metrics/run.txt"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(trec, tmp_path / folder / "r.txt")
    base = ["evaluate", "--qrels", "tests/data/metrics/qrels.txt", "-m", "hit@3", "--format",
            "json"]  # fmt: skip

    def labels(*runs):
        result = run(*base, *(a for r in runs for a in ("--run", str(r))))
        assert result.exit_code == 0, result.output
        return [row["name"] for row in json.loads(result.stdout)["runs"]]

    assert labels(tmp_path / "a" / "r.txt", tmp_path / "b" / "r.txt") == ["a/r.txt", "b/r.txt"]
    assert labels(trec, trec) == ["run#1", "run#2"]
