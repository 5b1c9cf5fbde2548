"""DenseRetriever and QdrantRetriever, run for real with a toy encoder (no model download).

The oracle is cosine similarity written out in numpy here, from the toy encoder's raw counts:
``cos(q, c) = <q, c> / (|q| |c|)``.  Qdrant runs in its in-process ``:memory:`` mode.
"""

import re
import sys
import zlib

import numpy as np
import pytest

from ragaudit.data.chunks import Chunk, chunk_id
from ragaudit.exceptions import InputError, MissingExtraError
from ragaudit.pipeline.retrievers import DenseRetriever, QdrantRetriever, Retriever

DIM = 256


def hashed_counts(texts):
    """Bag of words hashed into DIM buckets with crc32 (stable across runs, unlike hash())."""
    matrix = np.zeros((len(texts), DIM))
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            matrix[row, zlib.crc32(word.encode()) % DIM] += 1.0
    return matrix


class HashedBagOfWords:
    """A deterministic encoder object: L2-normalised hashed word counts."""

    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        counts = hashed_counts(texts)
        norms = np.linalg.norm(counts, axis=1, keepdims=True)
        return counts / np.where(norms > 0, norms, 1.0)


# Ids of both kinds: the uuid5 ids ragaudit's chunker makes, and free-form ids a library user
# may pass (Qdrant itself only accepts integers or UUIDs as point ids).
TEXTS = [
    ("leave", "Annual leave is twenty five days per year for every employee."),
    ("leave", "Unused leave days expire at the end of March next year."),
    ("it", "Laptops are replaced every three years by the IT desk."),
    ("it", "Lost laptops must be reported to the IT desk within one day."),
    ("expenses", "Travel expenses are refunded within thirty days of the claim."),
    ("canteen", "The canteen opens at noon and closes at two."),
]
CHUNKS = [
    Chunk(chunk_id(doc, i, text) if i % 2 == 0 else f"{doc}#{i}", doc, i, text)
    for i, (doc, text) in enumerate(TEXTS)
]
QUESTIONS = [
    "How many leave days do I get per year?",
    "Who replaces lost laptops?",
    "When are travel expenses refunded?",
    "When does the canteen open?",
]


def numpy_cosine_ranking(question):
    """(ids, scores) best first, from the raw counts; ties by corpus order (stable sort)."""
    chunk_vectors = hashed_counts([c.text for c in CHUNKS])
    query = hashed_counts([question])[0]
    scores = chunk_vectors @ query / (np.linalg.norm(chunk_vectors, axis=1) * np.linalg.norm(query))
    order = np.argsort(-scores, kind="stable")
    return [CHUNKS[i].chunk_id for i in order], scores[order]


def assert_cosine_ranking_up_to_ties(got, question, tolerance):
    """``got`` is the cosine ranking of ``question``; equal scores may come in any order.

    Every chunk appears once, each score is the numpy cosine of that chunk, and scores do not
    increase: together this pins the ranking down except among exactly tied chunks.
    """
    expected_ids, expected_scores = numpy_cosine_ranking(question)
    expected_by_id = dict(zip(expected_ids, expected_scores, strict=True))
    got_ids = [cid for cid, _ in got]
    assert sorted(got_ids) == sorted(expected_ids)
    for cid, score in got:
        assert score == pytest.approx(expected_by_id[cid], abs=tolerance), cid
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)
    # ids with clearly different scores must come in the numpy order
    distinct = [
        cid
        for cid in expected_ids
        if np.sum(np.abs(expected_scores - expected_by_id[cid]) < 1e-9) == 1
    ]
    assert [cid for cid in got_ids if cid in distinct] == distinct


def test_the_test_data_ranks_many_chunks_apart():
    # The cosine check is only informative if most chunks have distinct, positive scores.
    distinct_positive = 0
    for question in QUESTIONS:
        _, scores = numpy_cosine_ranking(question)
        positive = scores[scores > 0]
        distinct_positive += len(np.unique(positive.round(6)))
    assert distinct_positive >= 12


@pytest.mark.parametrize("question", QUESTIONS)
def test_dense_ranks_by_cosine_like_numpy(question):
    retriever = DenseRetriever(CHUNKS, encoder=HashedBagOfWords())
    expected_ids, expected_scores = numpy_cosine_ranking(question)
    got = retriever.retrieve(question, len(CHUNKS))
    assert [cid for cid, _ in got] == expected_ids
    assert [s for _, s in got] == pytest.approx(expected_scores.tolist(), abs=1e-6)
    assert isinstance(retriever, Retriever)


def test_dense_normalises_raw_encoder_output_and_accepts_a_plain_function():
    # hashed_counts is not normalised: cosine must still come out, so scores match exactly.
    from_function = DenseRetriever(CHUNKS, encoder=hashed_counts)
    from_object = DenseRetriever(CHUNKS, encoder=HashedBagOfWords())
    for question in QUESTIONS:
        assert from_function.retrieve(question, 6) == from_object.retrieve(question, 6)
        top_id, top_score = from_function.retrieve(question, 1)[0]
        expected_ids, expected_scores = numpy_cosine_ranking(question)
        assert top_id == expected_ids[0]
        assert top_score == pytest.approx(expected_scores[0], abs=1e-6)
        assert 0 < top_score <= 1


def test_dense_depth_and_ties():
    retriever = DenseRetriever(CHUNKS, encoder=HashedBagOfWords())
    question = QUESTIONS[1]
    full = retriever.retrieve(question, len(CHUNKS))
    assert retriever.retrieve(question, 2) == full[:2]
    assert retriever.retrieve(question, 100) == full  # depth beyond the corpus: every chunk
    for bad in (0, -1, True, 2.0):
        with pytest.raises(InputError, match="depth: expected an integer >= 1"):
            retriever.retrieve(question, bad)
    twins = [Chunk(f"t{i}", "d", i, "identical refund text") for i in range(4)]
    twin_retriever = DenseRetriever(twins, encoder=hashed_counts)
    assert [cid for cid, _ in twin_retriever.retrieve("refund", 3)] == ["t0", "t1", "t2"]
    # a question with no words is the zero vector: score 0 everywhere, corpus order, no NaN
    assert twin_retriever.retrieve("???", 2) == [("t0", 0.0), ("t1", 0.0)]


def test_dense_embeds_the_chunks_once():
    encoder = HashedBagOfWords()
    retriever = DenseRetriever(CHUNKS, encoder=encoder)
    assert encoder.calls == 1  # all chunks in one batch
    retriever.retrieve(QUESTIONS[0], 3)
    assert encoder.calls == 2
    assert retriever.dimension == DIM


def test_dense_rejects_bad_arguments_and_bad_encoder_output():
    with pytest.raises(InputError, match=r"exactly one of model .* and encoder, found neither"):
        DenseRetriever(CHUNKS)
    with pytest.raises(InputError, match=r"exactly one of model .* and encoder, found both"):
        DenseRetriever(CHUNKS, "/models/minilm", encoder=hashed_counts)
    with pytest.raises(InputError, match="expected at least one chunk, found none"):
        DenseRetriever([], encoder=hashed_counts)
    with pytest.raises(InputError, match="encoder: expected an object with encode"):
        DenseRetriever(CHUNKS, encoder=42)
    with pytest.raises(
        InputError, match=r"expected an array of shape \(6, dim\), found shape \(6,\)"
    ):
        DenseRetriever(CHUNKS, encoder=lambda texts: np.ones(len(texts)))
    with pytest.raises(InputError, match="expected finite numbers, found NaN or infinity"):
        DenseRetriever(CHUNKS, encoder=lambda texts: np.full((len(texts), 3), np.nan))

    def grows(texts):  # a different vector length for the question than for the chunks
        return np.ones((len(texts), 2 if len(texts) > 1 else 3))

    retriever = DenseRetriever(CHUNKS, encoder=grows)
    with pytest.raises(InputError, match=r"expected vectors of length 2 .*, found 3"):
        retriever.retrieve("q", 1)


@pytest.fixture
def qdrant_retriever():
    pytest.importorskip("qdrant_client")
    return QdrantRetriever(CHUNKS, encoder=HashedBagOfWords())


@pytest.mark.parametrize("question", QUESTIONS)
def test_qdrant_in_memory_matches_numpy_cosine(qdrant_retriever, question):
    got = qdrant_retriever.retrieve(question, len(CHUNKS))
    # free-form and uuid ids come back as given; exact ties (e.g. score 0) in Qdrant's order
    assert_cosine_ranking_up_to_ties(got, question, tolerance=1e-5)


def test_qdrant_agrees_with_dense_and_handles_depth(qdrant_retriever):
    dense = DenseRetriever(CHUNKS, encoder=HashedBagOfWords())
    for question in QUESTIONS:
        from_qdrant = qdrant_retriever.retrieve(question, 3)
        from_dense = dense.retrieve(question, 3)
        assert len(from_qdrant) == 3
        # same scores position by position (ids may differ only among exactly tied chunks)
        assert [s for _, s in from_qdrant] == pytest.approx([s for _, s in from_dense], abs=1e-5)
    # no ties among the first question's top 2 (0.402, 0.277): the ids must match too
    assert [c for c, _ in qdrant_retriever.retrieve(QUESTIONS[0], 2)] == [
        c for c, _ in dense.retrieve(QUESTIONS[0], 2)
    ]
    assert len(qdrant_retriever.retrieve(QUESTIONS[0], 100)) == len(CHUNKS)
    assert len(qdrant_retriever.retrieve(QUESTIONS[0], 1)) == 1
    with pytest.raises(InputError, match="depth: expected an integer >= 1, found 0"):
        qdrant_retriever.retrieve(QUESTIONS[0], 0)
    assert isinstance(qdrant_retriever, Retriever)


def test_qdrant_keeps_duplicate_texts_apart():
    pytest.importorskip("qdrant_client")
    twins = [Chunk(f"doc/{i}", "d", i, "identical refund text") for i in range(3)]
    got = QdrantRetriever(twins, encoder=hashed_counts).retrieve("refund text", 5)
    assert sorted(cid for cid, _ in got) == ["doc/0", "doc/1", "doc/2"]
    expected = 2 / np.sqrt(2 * 3)  # question (refund, text) against (identical, refund, text)
    assert [s for _, s in got] == pytest.approx([expected] * 3, abs=1e-5)


def test_missing_extras_name_the_extra_to_install(monkeypatch):
    # A None entry in sys.modules makes the import fail as if the package were not installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'ragaudit\[dense\]'"):
        DenseRetriever(CHUNKS, "/models/minilm")
    # an explicit encoder needs no sentence-transformers
    assert DenseRetriever(CHUNKS, encoder=hashed_counts).retrieve(QUESTIONS[0], 1)
    if "qdrant_client" not in sys.modules:
        pytest.importorskip("qdrant_client")
    # Qdrant installed, but a model path still needs the dense extra
    with pytest.raises(MissingExtraError, match=r"pip install 'ragaudit\[dense\]'"):
        QdrantRetriever(CHUNKS, "/models/minilm")
    monkeypatch.setitem(sys.modules, "qdrant_client", None)
    with pytest.raises(MissingExtraError, match=r"the Qdrant retriever needs .*ragaudit\[qdrant\]"):
        QdrantRetriever(CHUNKS, encoder=hashed_counts)
