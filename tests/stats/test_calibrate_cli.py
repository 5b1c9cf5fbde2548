"""ragaudit calibrate: agreement from sklearn, intervals from ppi-python, errors as one line."""

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from ppi_py import ppi_mean_ci
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.proportion import proportion_confint

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import RagauditWarning


def _setup(tmp_path, n=60, labelled=25, suffix=".jsonl"):
    rng = np.random.default_rng(8)
    truth = (rng.random(n) < 0.6).astype(int)
    judge = np.where(rng.random(n) < 0.85, truth, 1 - truth)
    rows = [
        {
            "id": f"q{i:02d}",
            "question": "?",
            "answerable": True,
            "retrieved": [],
            "metrics": {"correct": bool(judge[i])},
        }
        for i in range(n)
    ]
    run = tmp_path / "run.json"
    write_saved_run(run, _run_model("run", rows))
    human = tmp_path / f"human{suffix}"
    if suffix == ".jsonl":
        human.write_text(
            "".join(
                json.dumps({"id": f"q{i:02d}", "correct": bool(truth[i])}) + "\n"
                for i in range(labelled)
            )
        )
    else:
        human.write_text(
            "".join(f"q{i:02d}: {str(bool(truth[i])).lower()}\n" for i in range(labelled))
        )
    return run, human, truth, judge


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml"])
def test_calibrate_matches_sklearn_and_ppi_python(tmp_path, suffix):
    run, human, truth, judge = _setup(tmp_path, suffix=suffix)
    result = _invoke("calibrate", run, "--human", human, "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    y, yhat, rest = truth[:25], judge[:25], judge[25:]
    (tn, fp), (fn, tp) = confusion_matrix(y, yhat, labels=[0, 1])
    assert out["confusion"] == {
        "human1_judge1": tp, "human1_judge0": fn, "human0_judge1": fp, "human0_judge0": tn,
    }  # fmt: skip
    assert out["kappa"] == pytest.approx(cohen_kappa_score(y, yhat), abs=1e-12)
    assert out["tpr"] == pytest.approx(tp / (tp + fn)) and out["fpr"] == pytest.approx(
        fp / (fp + tn)
    )
    low, high = ppi_mean_ci(y.astype(float), yhat.astype(float), rest.astype(float), alpha=0.05)
    assert out["ppi"]["ci"] == pytest.approx([float(low[0]), float(high[0])], abs=1e-9)
    low, high = proportion_confint(int(y.sum()), y.size, alpha=0.05, method="beta")
    assert out["human_only"]["ci"] == pytest.approx([low, high], abs=1e-9)
    assert out["ppi_small_sample"]["lambda"] == 1.0
    small = out["ppi_small_sample"]["ci"]
    assert 0 <= small[0] <= out["ppi_small_sample"]["estimate"] <= small[1] <= 1
    assert out["judge_only"]["estimate"] == pytest.approx(judge.mean())
    assert "assumes the judge is always right" in out["judge_only"]["label"]


def test_calibrate_table_labels_each_interval(tmp_path):
    run, human, _, _ = _setup(tmp_path)
    result = _invoke("calibrate", run, "--human", human)
    assert result.exit_code == 0, result.output
    for text in ("PPI++ (calibrated)", "PPI, small-sample limits", "human labels only",
                 "judge only", "Cohen's kappa", "caution: with 25 human labels"):  # fmt: skip
        assert text in result.output


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ('{"id": "q01", "correct": "maybe"}\n', ".jsonl",
         "human.jsonl:1: correct: expected true/false, 1/0 or 'correct'/'wrong', found 'maybe'"),
        ('{"id": "q01"}\n', ".jsonl", "human.jsonl:1: correct: expected a verdict"),
        ("q01: true\nq02: 7\n", ".yaml", "human.yaml:2: q02: expected true/false"),
        ("- q01\n", ".yaml", "expected a mapping of question id -> verdict"),
    ],
)  # fmt: skip
def test_bad_human_files_are_one_line_errors(tmp_path, content, suffix, message):
    run, _, _, _ = _setup(tmp_path)
    human = tmp_path / f"human{suffix}"
    human.write_text(content)
    result = _invoke("calibrate", run, "--human", human)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_unknown_question_ids_warn_then_fail(tmp_path):
    run, _, _, _ = _setup(tmp_path)
    human = tmp_path / "human.yaml"
    human.write_text("q98: true\nq99: false\n")
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagauditWarning)  # the CLI prints it on stderr
        result = _invoke("calibrate", run, "--human", human)
    assert result.exit_code == 2
    assert "ragaudit: warning: 2 human-labelled question(s) have no judged" in result.output
    assert "expected human verdicts on at least 2 judged questions" in result.output


def _run_model(name, rows):
    return SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows})
