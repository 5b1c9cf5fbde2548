import json
import math

import pytest

from ragaudit._text import content_tokens, stem, tokenize
from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import FormatError, InputError
from ragaudit.pipeline.retrievers import (
    BM25Retriever,
    CallableRetriever,
    PrecomputedRetriever,
    Retriever,
    read_run_file,
)

CHUNKS = [
    Chunk("c1", "it", 0, "Laptops are replaced every 3 years."),
    Chunk("c2", "it", 1, "Laptop bags and laptop stands are ordered through IT."),
    Chunk("c3", "hr", 0, "Holiday requests go to your manager."),
    Chunk("c4", "hr", 1, "The canteen opens at noon."),
]


def lucene_bm25(query_terms, doc_terms, corpus_terms, k1=1.5, b=0.75):
    """The textbook Lucene BM25 (no k1+1 factor), written out by hand as the oracle."""
    n_docs = len(corpus_terms)
    avgdl = sum(len(d) for d in corpus_terms) / n_docs
    score = 0.0
    for term in set(query_terms):
        df = sum(term in d for d in corpus_terms)
        if df == 0:
            continue
        idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
        tf = doc_terms.count(term)
        score += idf * tf / (tf + k1 * (1 - b + b * len(doc_terms) / avgdl))
    return score


def test_analyser_rules():
    assert tokenize("24hours or 24 Hours, 1,200.5 EUR") == [
        "24",
        "hours",
        "or",
        "24",
        "hours",
        "1200.5",
        "eur",
    ]
    assert [stem(w) for w in ("policies", "passes", "bus", "analysis", "days", "booking")] == [
        "policy",
        "pass",
        "bus",
        "analysis",
        "day",
        "book",
    ]
    assert content_tokens("What is the policy on laptops?") == ["policy", "laptop"]


def test_bm25_scores_match_the_lucene_formula():
    retriever = BM25Retriever(CHUNKS)
    corpus_terms = [content_tokens(c.text) for c in CHUNKS]
    question = "How often are laptops replaced?"
    got = dict(retriever.retrieve(question, 10))
    for chunk, terms in zip(CHUNKS, corpus_terms, strict=True):
        expected = lucene_bm25(content_tokens(question), terms, corpus_terms)
        if expected > 0:
            assert got[chunk.chunk_id] == pytest.approx(expected, rel=1e-5)
        else:
            assert chunk.chunk_id not in got  # no shared term: not returned
    assert list(got) == ["c1", "c2"]


def test_bm25_depth_order_and_ties_are_deterministic():
    twins = [Chunk(f"t{i}", "d", i, "identical refund text") for i in range(4)]
    retriever = BM25Retriever(twins)
    assert [c for c, _ in retriever.retrieve("refund", 3)] == ["t0", "t1", "t2"]  # corpus order
    assert retriever.retrieve("zebra", 3) == []
    assert retriever.retrieve("what is it?", 3) == []  # only stopwords
    with pytest.raises(InputError, match="depth: expected an integer >= 1, found 0"):
        retriever.retrieve("refund", 0)
    assert isinstance(retriever, Retriever)


def test_callable_retriever_truncates_and_checks_pairs():
    r = CallableRetriever(lambda q: [("a", 3), ("b", 2.5), ("c", 1)])
    assert r.retrieve("q", 2) == [("a", 3.0), ("b", 2.5)]
    bad = CallableRetriever(lambda q: ["a"])
    with pytest.raises(
        InputError, match=r"retriever result \[0\]: expected a \(chunk_id, score\) pair"
    ):
        bad.retrieve("q", 2)


def test_read_trec_and_jsonl_runs(tmp_path):
    trec = tmp_path / "run.trec"
    trec.write_text("q1 Q0 c2 1 1.5 x\nq1 Q0 c1 2 2.5 x\nq2 Q0 hr 1 1.0 x\n")
    assert read_run_file(trec) == {"q1": [("c1", 2.5), ("c2", 1.5)], "q2": [("hr", 1.0)]}
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text(json.dumps({"qid": "q1", "chunk_id": "c3", "score": 0.5}) + "\n")
    assert read_run_file(jsonl) == {"q1": [("c3", 0.5)]}


def test_run_file_errors_name_file_line_and_field(tmp_path):
    trec = tmp_path / "bad.trec"
    trec.write_text("q1 Q0 c2 1 1.5 x\nq1 Q0 c1 2 high x\n")
    with pytest.raises(FormatError, match=r"bad\.trec:2: score: expected a number, found 'high'"):
        read_run_file(trec)
    trec.write_text("q1 c2 1.5\n")
    with pytest.raises(FormatError, match=r"bad\.trec:1: expected 6 whitespace-separated fields"):
        read_run_file(trec)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(
        '{"qid": "q1", "chunk_id": "c", "score": 1}\n{"qid": "q1", "chunk_id": 7.5, "score": 1}\n'
    )
    with pytest.raises(FormatError, match=r"bad\.jsonl:2: docid: expected a string, found 7\.5"):
        read_run_file(jsonl)


def test_precomputed_run_expands_documents_and_rejects_unknown_ids():
    r = PrecomputedRetriever(
        {"q1": [("c4", 3.0), ("it", 2.0)]}, {"Q?": "q1"}, CHUNKS, name="r.trec"
    )
    assert r.retrieve("Q?", 10) == [("c4", 3.0), ("c1", 2.0), ("c2", 2.0)]
    with pytest.raises(InputError, match=r"r\.trec: question 'q1': id 'zz' is neither a chunk id"):
        PrecomputedRetriever({"q1": [("zz", 1.0)]}, {"Q?": "q1"}, CHUNKS, name="r.trec")
