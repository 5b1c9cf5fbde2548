"""Evidence is found wherever it sits (issue 31): ``sources`` naming two documents that both
hold the answer are relevance labels, not a demand for evidence from each.

The fixture (tests/fixtures/redundant_sources/, written by hand) has a policy and an FAQ that
both state "3 days per week"; expected verdicts by reading it: a context from either document
is evidence, and only the question that sets ``evidence_from_each_source`` needs both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.data.golden import load_golden
from ragaudit.exceptions import FormatError
from ragaudit.judges.offline import judge_offline

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "redundant_sources"
TEXTS = {
    path.stem: path.read_text(encoding="utf-8")
    for path in sorted((FIXTURE / "corpus").glob("*.md"))
}


def _evidence(qid: str, docs: list[str]) -> bool | None:
    question = load_golden(FIXTURE / "golden.yaml").by_id()[qid]
    verdicts = judge_offline(
        answer="Three days a week.",
        answerable=question.answerable,
        reference_answer=question.answer,
        keywords=question.keywords,
        context_texts=[TEXTS[d] for d in docs],
        context_docs=docs,
        question=question.question,
        sources=question.sources,
        evidence_from_each_source=question.evidence_from_each_source,
    )
    return verdicts["evidence_in_context"]


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (["remote-work-policy"], True),
        (["employee-faq"], True),
        (["canteen", "employee-faq"], True),
        (["remote-work-policy", "employee-faq"], True),
        (["canteen"], False),
    ],
)
def test_either_source_is_evidence(docs: list[str], expected: bool) -> None:
    assert _evidence("r1", docs) is expected


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (["remote-work-policy"], False),
        (["employee-faq"], False),
        (["remote-work-policy", "employee-faq"], True),
    ],
)
def test_the_explicit_field_asks_for_each_source(docs: list[str], expected: bool) -> None:
    assert _evidence("r2", docs) is expected


def test_the_field_is_off_by_default_and_must_be_a_boolean(tmp_path: Path) -> None:
    assert load_golden(FIXTURE / "golden.yaml").by_id()["r1"].evidence_from_each_source is False
    bad = tmp_path / "golden.yaml"
    bad.write_text(
        "- id: r1\n  question: How many?\n  answer: 3 days.\n  sources: [a]\n"
        "  evidence_from_each_source: 'yes'\n",
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match=r"evidence_from_each_source.*expected a boolean"):
        load_golden(bad)


@pytest.mark.slow  # a whole pipeline run (BM25 index, reader, judges): about 3 s
def test_end_to_end_at_k1(tmp_path: Path) -> None:
    # One chunk per document, one chunk in the context: whichever of the two sources BM25
    # ranks first holds the answer, so r1 has its evidence; r2 asks for both and has not.
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.harness import run_pipeline

    saved = run_pipeline(
        RunConfig(FIXTURE / "corpus", FIXTURE / "golden.yaml", k=1, out_dir=tmp_path,
                  record_latency=False)
    )  # fmt: skip
    rows = {r["id"]: r for r in saved.rows}
    assert rows["r1"]["retrieved"][0]["doc_id"] in {"remote-work-policy", "employee-faq"}
    assert rows["r1"]["judges"]["evidence_in_context"] is True
    assert rows["r2"]["judges"]["evidence_in_context"] is False
