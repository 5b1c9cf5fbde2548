"""Builders on a hand-made corpus: heuristic grades, reuse, rebuild, limits, bad labellers."""

from __future__ import annotations

from typing import Any

import pytest

from ragaudit.data.golden import load_golden
from ragaudit.exceptions import InputError
from ragaudit.labels.build import build_chunk_labels, make_labeller
from ragaudit.labels.format import Chunking
from ragaudit.labels.heuristic import HeuristicLabeller
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus

CHUNKING = Chunking("markdown", 500, 0, "sha")


def load(corpus):
    folder, golden_path = corpus
    chunks = chunk_documents(load_corpus(folder), 500, 0, "markdown")
    # by construction every markdown section is one chunk
    assert [(c.doc_id, c.index) for c in chunks] == [
        ("leave", 0), ("leave", 1), ("leave", 2), ("travel", 0), ("travel", 1),
    ]  # fmt: skip
    ids = {(c.doc_id, c.index): c.chunk_id for c in chunks}
    return list(load_golden(golden_path)), chunks, ids


def test_heuristic_grades_on_a_hand_made_corpus(corpus):
    golden, chunks, ids = load(corpus)
    summary = build_chunk_labels(golden, chunks, HeuristicLabeller(), CHUNKING)
    qs = summary.labels.questions
    assert list(qs) == ["q1", "q2", "q3", "q5"]  # q4 is unanswerable
    # q1: "twenty days" only in the annual-leave section
    assert (qs["q1"].answer_chunks, qs["q1"].supporting_chunks) == ([ids["leave", 0]], [])
    assert qs["q1"].n_candidate_chunks == 3
    # q2: both keywords in the carry-over section
    assert qs["q2"].answer_chunks == [ids["leave", 1]]
    # q3: "14 days" and "Waypoint" but never "economy": related, not an answer
    assert (qs["q3"].answer_chunks, qs["q3"].supporting_chunks) == ([], [ids["travel", 0]])
    # q5: two gold documents -> 3 + 2 candidates, the hotel section holds the answer
    assert qs["q5"].n_candidate_chunks == 5
    assert qs["q5"].doc_sources == ["leave", "travel"]
    assert qs["q5"].answer_chunks == [ids["travel", 1]]
    assert summary.labelled == ("q1", "q2", "q3", "q5")
    assert summary.no_answer_chunk == ("q3",)
    assert summary.labels.to_qrels().to_dict()["q3"] == {ids["travel", 0]: 1}


def test_existing_labels_are_reused_unless_rebuild(corpus):
    golden, chunks, _ = load(corpus)
    first = build_chunk_labels(golden, chunks, HeuristicLabeller(), CHUNKING, limit=2)
    assert first.labelled == ("q1", "q2")
    calls = []

    class Counting(HeuristicLabeller):
        def label(self, question, reference_answer, keywords, candidates):
            calls.append(question)
            return super().label(question, reference_answer, keywords, candidates)

    second = build_chunk_labels(golden, chunks, Counting(), CHUNKING, existing=first.labels)
    assert second.reused == ("q1", "q2")
    assert second.labelled == ("q3", "q5")
    assert len(calls) == 2
    third = build_chunk_labels(
        golden, chunks, Counting(), CHUNKING, existing=second.labels, rebuild=True
    )
    assert third.labelled == ("q1", "q2", "q3", "q5") and third.reused == ()


def test_existing_labels_for_another_chunking_are_kept(corpus):
    golden, chunks, _ = load(corpus)
    first = build_chunk_labels(golden, chunks, HeuristicLabeller(), CHUNKING)
    other = Chunking("markdown", 400, 0, "sha")
    kept = r"these labels are kept: label this chunking into a new file with --out chunk_labels"
    with pytest.raises(InputError, match=r"made for chunker=markdown, chunk_size=500.*" + kept):
        build_chunk_labels(golden, chunks, HeuristicLabeller(), other, existing=first.labels)


def test_save_is_called_after_every_question(corpus):
    golden, chunks, _ = load(corpus)
    saved_counts = []
    build_chunk_labels(
        golden,
        chunks,
        HeuristicLabeller(),
        CHUNKING,
        save=lambda labels: saved_counts.append(len(labels.complete_questions())),
    )
    assert saved_counts == [1, 2, 3, 4]


def test_invalid_grades_from_a_labeller_are_rejected(corpus):
    golden, chunks, _ = load(corpus)

    class Bad:
        name = "bad"

        def label(self, question, reference_answer, keywords, candidates):
            return {candidates[0].chunk_id: 3}

    with pytest.raises(
        InputError,
        match=r"labeller 'bad', question q1, chunk .*: expected "
        r"grade 0, 1 or 2, found 3",
    ):
        build_chunk_labels(golden, chunks, Bad(), CHUNKING)

    class Stranger:
        name = "stranger"

        def label(self, question, reference_answer, keywords, candidates):
            return {"not-a-candidate": 2}

    with pytest.raises(InputError, match="'not-a-candidate' is not one of the candidates"):
        build_chunk_labels(golden, chunks, Stranger(), CHUNKING)


def test_unknown_source_document_is_an_error(corpus):
    _, chunks, _ = load(corpus)
    golden = [{"id": "qx", "question": "?", "answer": "a", "sources": ["nope"]}]
    with pytest.raises(InputError, match="question qx: source 'nope' is not a document"):
        build_chunk_labels(golden, chunks, HeuristicLabeller(), CHUNKING)


def test_make_labeller_names():
    assert make_labeller("heuristic").name == "heuristic"
    assert make_labeller("human").name == "human"
    with pytest.raises(InputError, match="expected heuristic, llm or human, found 'robot'"):
        make_labeller("robot")


class _FailsOn:
    """Labels like the heuristic labeller but gives up (JudgeError) on one question."""

    name = "heuristic"

    def __init__(self, question_text: str) -> None:
        self.question_text = question_text
        self.inner = HeuristicLabeller()

    def label(
        self, question: str, reference_answer: str, keywords: Any, candidates: Any
    ) -> dict[str, int]:
        from ragaudit.exceptions import JudgeError

        if question == self.question_text:
            raise JudgeError("LLM labeller: no valid labels: chunk 9 is out of range")
        return self.inner.label(question, reference_answer, keywords, candidates)


def test_a_question_without_valid_labels_stays_incomplete_and_the_rest_go_on(
    corpus: Any,
) -> None:
    golden, chunks, _ = load(corpus)
    failing = next(q for q in golden if q.id == "q2")
    saves: list[Any] = []
    summary = build_chunk_labels(golden, chunks, _FailsOn(failing.question), CHUNKING,
                                 save=lambda labels: saves.append(labels))  # fmt: skip
    assert list(summary.failed) == ["q2"] and "out of range" in summary.failed["q2"]
    assert summary.labelled == ("q1", "q3", "q5")
    entry = summary.labels.questions["q2"]
    assert entry.complete is False and entry.answer_chunks == []
    assert "q2" not in summary.labels.to_qrels()
    assert len(saves) == 4  # saved after every question, the failed one included
    # the next build reuses the complete questions and retries only q2
    again = build_chunk_labels(golden, chunks, HeuristicLabeller(), CHUNKING,
                               existing=summary.labels)  # fmt: skip
    assert again.reused == ("q1", "q3", "q5") and again.labelled == ("q2",)
    assert again.labels.questions["q2"].complete and not again.failed
