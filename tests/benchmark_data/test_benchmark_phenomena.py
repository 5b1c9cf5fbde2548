"""The benchmark's reason to exist: with the reference offline pipeline (BM25 over 800-character
chunks, extractive reader, keyword judge), document-level retrieval is near perfect while
end-to-end correctness is clearly lower, and the gap is spread over the funnel's three later
stages (README.md in the benchmark folder records the measured numbers).

The funnel stage of each question is computed here from first principles, independently of
``ragaudit.diagnose``: gold document in the top k, then every keyword somewhere in the context,
then an answer rather than a refusal, then every keyword in the answer.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
import yaml

from ragaudit.judges.offline import all_keywords, evidence_in_context
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.generators import ExtractiveReader
from ragaudit.pipeline.retrievers import BM25Retriever

BENCHMARK = Path(str(files("ragaudit.benchmark")))


@pytest.fixture(scope="module")
def funnel() -> dict[int, dict[str, str]]:
    """``{k: {question id: stage}}`` for k = 3 and 6 over the answerable questions."""
    chunks = chunk_documents(load_corpus(BENCHMARK / "corpus"), 800, 100, "fixed")
    by_id = {c.chunk_id: c for c in chunks}
    retriever = BM25Retriever(chunks)
    reader = ExtractiveReader.fit(chunks)
    golden = yaml.safe_load((BENCHMARK / "golden.yaml").read_text(encoding="utf-8"))
    stages: dict[int, dict[str, str]] = {}
    for k in (3, 6):
        stages[k] = {}
        for entry in golden:
            if not entry["answerable"]:
                continue
            context = [by_id[cid] for cid, _ in retriever.retrieve(entry["question"], k)]
            generation = reader.generate(entry["question"], context)
            if not any(c.doc_id in entry["sources"] for c in context):
                stage = "1-document"
            elif not evidence_in_context([c.text for c in context], entry["keywords"]):
                stage = "2-evidence"
            elif generation.abstained:
                stage = "3-refusal"
            elif not all_keywords(generation.answer, entry["keywords"]):
                stage = "4-wrong"
            else:
                stage = "ok"
            stages[k][entry["id"]] = stage
    return stages


def _count(stages: dict[str, str], stage: str) -> int:
    return sum(s == stage for s in stages.values())


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 6])
def test_document_retrieval_is_near_perfect(funnel, k):
    n = len(funnel[k])
    assert (n - _count(funnel[k], "1-document")) / n >= 0.95


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 6])
def test_end_to_end_correctness_is_clearly_below_retrieval(funnel, k):
    correct = _count(funnel[k], "ok") / len(funnel[k])
    assert 0.70 <= correct <= 0.90


@pytest.mark.slow
def test_every_later_stage_of_the_funnel_loses_questions_at_k3(funnel):
    stages = funnel[3]
    assert 2 <= _count(stages, "2-evidence") <= 5
    assert 2 <= _count(stages, "3-refusal") <= 5
    assert 3 <= _count(stages, "4-wrong") <= 6


@pytest.mark.slow
def test_designed_cases_fail_where_they_were_designed_to(funnel):
    stages = funnel[3]
    # The kilometre rate lives in an appendix chunk; the question's words live in section 6.
    assert stages["q06"] == "2-evidence"
    # "minimum password length" vs "at least 14 characters long": evidence present, refused.
    assert stages["q21"] == "3-refusal"
    # The older leave policy repeats the question's words; the newer FAQ holds the answer.
    assert stages["q15"] == "4-wrong"
    # "notice period during probation" out-scores "Probation lasts six months".
    assert stages["q49"] == "4-wrong"
