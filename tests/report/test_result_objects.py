"""Result objects in a notebook (issue 23 item 1): ``ragaudit.audit`` returns the audit the CLI
prints; every result object has a short repr, ``to_report()`` equal to the CLI's report,
``_repr_html_`` rendered by the one renderer, ``to_dict()`` and ``to_pandas()``.  Expected
values come from the CLI's own JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.exceptions import UnjudgedWarning
from ragaudit.reports.renderer import render, render_html_fragment

from .conftest import cli


@pytest.fixture(scope="module")
def audit(bench: dict[str, Path]) -> Any:
    return ragaudit.audit(
        [str(bench["k3"]), bench["k6"]], labels=bench["labels"], cluster_by="source"
    )


def test_audit_equals_the_report_commands_json(audit: Any, bench: dict[str, Path]) -> None:
    out = cli("report", str(bench["k3"]), str(bench["k6"]), "--labels", str(bench["labels"]),
              "--cluster-by", "source", "--format", "json", "--out", "-")  # fmt: skip
    assert audit.to_dict() == json.loads(out)


def test_audit_takes_one_path_as_one_run(bench: dict[str, Path]) -> None:
    one = ragaudit.audit(bench["k3"], n_resamples=10)
    assert [r.name for r in one.runs] == ["k3"] and one.pairs == ()


@pytest.mark.parametrize("bad", [None, 3, {"k3": "x"}])
def test_audit_names_the_argument_it_cannot_read(bad: Any) -> None:
    with pytest.raises(ragaudit.exceptions.InputError, match=r"runs(\[0\])?: expected"):
        ragaudit.audit([bad] if bad is None else bad)


def test_reprs_are_short_and_never_dump_arrays(audit: Any) -> None:
    objects = [audit, audit.pairs[0].comparison, audit.runs[0].funnel, audit.runs[0].bias]
    for obj in objects:
        text = repr(obj)
        assert len(text.splitlines()) <= 14, text
        assert len(text) < 1500, text
        assert "array(" not in text and "QuestionBias(" not in text
    assert repr(audit).startswith("Audit(runs=['k3', 'k6'], seed=0)")
    row = audit.pairs[0].comparison.metrics[0]
    assert repr(row).startswith(f"MetricComparison({row.metric}: {row.statistic:+.3f}")


def test_to_report_is_what_the_commands_print(audit: Any, bench: dict[str, Path]) -> None:
    funnel = audit.runs[0].funnel
    out = cli("funnel", str(bench["k3"]), "--labels", str(bench["labels"]), "--format", "json")
    printed = json.loads(out)
    # the command adds the run's judged@k (diagnose.unjudged.run_judged), as report does
    judged = printed.pop("judged")
    assert json.loads(render(funnel.to_report(), "json")) == printed
    assert judged == audit.runs[0].judged.to_dict()
    with pytest.warns(UnjudgedWarning):  # the demo's top k are partly unjudged (issue 24)
        comparison = ragaudit.compare_runs(bench["k3"], bench["k6"], ["correct", "recall@k"])
    out = cli("compare", str(bench["k3"]), str(bench["k6"]), "-m", "correct", "-m", "recall@k",
              "--format", "json")  # fmt: skip
    assert render(comparison.to_report(), "json") == out


def test_repr_html_is_the_renderers_fragment(audit: Any) -> None:
    for obj in (audit, audit.pairs[0].comparison, audit.runs[0].funnel, audit.runs[0].bias):
        html = obj._repr_html_()
        assert html == render_html_fragment(obj.to_report())
        assert html.startswith('<div class="ragaudit">') and "<style" not in html
        assert "<html" not in html and "<script" not in html


def test_evaluation_and_plan_present_themselves() -> None:
    ev = ragaudit.evaluate(
        ragaudit.Qrels({"q1": {"A": 1}, "q2": {"B": 1}}),
        ragaudit.Run({"q1": ["A", "C"], "q2": ["C", "B"]}),
        ["mrr", "hit@1"],
    )
    assert repr(ev).splitlines() == [
        "Evaluation(n_queries=2, unit='doc', average='macro')",
        "  mrr: 0.7500",  # (1 + 1/2) / 2
        "  hit@1: 0.5000",
    ]
    assert ev.to_report().data == ev.to_dict()
    plan = ragaudit.plan([50, 200], [0.1, 0.2])
    assert repr(plan).splitlines()[0] == "Plan(power=0.8, alpha=0.05, rows=4)"
    assert "<table" in plan._repr_html_()


def test_to_pandas_of_the_audit_is_the_dashboard(audit: Any) -> None:
    pytest.importorskip("pandas")
    frame = audit.to_pandas()
    assert list(frame["run"].unique()) == ["k3", "k6"]
    first = audit.to_dict()["runs"][0]["dashboard"][0]
    assert frame.iloc[0]["value"] == first["value"] and frame.iloc[0]["key"] == first["key"]


def test_audit_with_the_corpus_is_the_report_page(bench: dict[str, Path]) -> None:
    """ragaudit.audit(corpus=...) renders the very page `ragaudit report --corpus` writes."""
    page = cli("report", str(bench["k3"]), str(bench["k6"]), "--labels", str(bench["labels"]),
               "--corpus", str(bench["corpus"]), "--format", "html", "--out", "-")  # fmt: skip
    audit = ragaudit.audit(
        [bench["k3"], bench["k6"]], labels=bench["labels"], corpus=bench["corpus"]
    )
    assert render(audit.to_report(), "html") == page
    texts = [c.text for q in audit.runs[0].failures for c in q.chunks]
    assert texts and all(texts)  # the drill-down shows every retrieved chunk's text


def test_label_bias_takes_both_files(bench: dict[str, Path]) -> None:
    out = cli("labels", "bias", str(bench["k3"]), "--labels", str(bench["labels"]),
              "--format", "json")  # fmt: skip
    assert ragaudit.label_bias(bench["k3"], bench["labels"]).to_dict() == json.loads(out)


def test_a_saved_runs_ranking_and_labels_give_its_own_recall(bench: dict[str, Path]) -> None:
    """evaluate (trec_eval-exact) of to_run(unit="doc", k) against to_qrels() reproduces the
    run's stored recall@k question by question."""
    saved = ragaudit.load_saved_run(bench["k3"])
    with pytest.warns(ragaudit.exceptions.RagauditWarning, match="have no labels"):
        ev = ragaudit.evaluate(saved.to_qrels(), saved.to_run(unit="doc", k=3), ["recall@3"])
    stored = {q.id: q.metric("recall@k") for q in saved.questions if q.answerable}
    assert dict(zip(ev.query_ids, ev.per_query["recall@3"].tolist(), strict=True)) == stored
