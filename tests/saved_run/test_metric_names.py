"""The registry owns every metric name a user can type: retrieval metrics and the metrics of
saved runs, with one set of spellings for `evaluate -m` and `compare -m/--metric`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.saved_run.metrics import SAVED_RUN_METRICS
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import (
    list_metrics,
    list_saved_run_metrics,
    parse_metric,
    resolve_saved_run_metrics,
    saved_run_metric_name,
)

DATA = Path(__file__).parent.parent / "data" / "stats"
K3, K6 = DATA / "k3.json", DATA / "k6.json"


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("recall@k", "recall@k"),
        ("R@k", "recall@k"),
        ("nDCG@k", "ndcg@k"),
        ("P@k", "precision@k"),
        ("success@k", "hit@k"),
        ("RR@k", "mrr@k"),
        ("chunk_R@k", "chunk_recall@k"),
        ("ndcg@10", "ndcg@10"),
        ("nDCG@10", "ndcg@10"),
        ("correct", "correct"),
        ("citation_acc", "citation_accuracy"),
    ],
)
def test_spellings_map_to_the_stored_name(typed, stored):
    assert saved_run_metric_name(typed) == stored


def test_every_declared_metric_resolves_to_itself():
    for metric in list_saved_run_metrics():
        assert saved_run_metric_name(metric.name) == metric.name
    assert len(SAVED_RUN_METRICS) == len(list_saved_run_metrics())


def test_retrieval_spellings_agree_with_parse_metric():
    # evaluate -m parses with parse_metric; compare resolves with the same alias table
    for info in list_metrics():
        for alias in (info.family, *info.aliases):
            name = alias if info.cutoff == "none" else f"{alias}@7"
            assert saved_run_metric_name(name) == parse_metric(name).name


@pytest.mark.parametrize("typed", ["ndcg@\u0663", "ndcg@+5", "recal@k", "ndcg@kk", "bleu"])
def test_bad_names_are_unknown_and_the_message_lists_valid_names(typed):
    assert saved_run_metric_name(typed) is None
    with pytest.raises(InputError, match=r"unknown metric .*valid metrics are: hit@k, recall@k"):
        resolve_saved_run_metrics([typed], ["recall@k"])


def test_a_pipelines_own_metric_is_accepted_when_the_runs_hold_it():
    assert resolve_saved_run_metrics(["rouge_l"], ["rouge_l"]) == ["rouge_l"]
    with pytest.raises(InputError, match=r"and in these runs: rouge_l$"):
        resolve_saved_run_metrics(["rouge"], ["recall@k", "rouge_l"])


def test_compare_accepts_the_spellings_of_evaluate():
    def compared(*flags):
        result = CliRunner().invoke(
            main, ["compare", str(K3), str(K6), "--resamples", "50", *flags, "--format", "json"]
        )
        assert result.exit_code == 0, result.output
        return result.output

    typed = compared("-m", "R@k", "--metric", "nDCG@k", "-m", "citation_acc")
    canonical = compared("-m", "recall@k", "-m", "ndcg@k", "-m", "citation_accuracy")
    assert typed == canonical


def test_compare_typo_lists_valid_names():
    result = CliRunner().invoke(main, ["compare", str(K3), str(K6), "-m", "recal@k"])
    assert result.exit_code == 2
    assert (
        "unknown metric 'recal@k'; did you mean 'recall@k'? valid metrics are: hit@k, recall@k"
        in result.output
    )
    assert "citation_accuracy" in result.output
