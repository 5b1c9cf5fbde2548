"""Chunk-level relevance labels: the file format, the Labeller protocol and the builders.

``heuristic`` (offline keywords), ``human`` (interactive) and ``llm``
(:mod:`ragaudit.labels.llm`, optional) labellers grade every chunk of a question's gold
document(s): 2 contains the answer, 1 related, 0 not relevant.  :mod:`ragaudit.labels.grading`
has a person grade a run's *answers* (correct or wrong) on a seeded random sample of its
questions, the human verdicts ``ragaudit calibrate`` reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.labels.build import BuildSummary, build_chunk_labels, make_labeller
    from ragaudit.labels.format import (
        Chunking,
        ChunkLabels,
        QuestionLabels,
        load_chunk_labels,
        save_chunk_labels,
    )
    from ragaudit.labels.grading import (
        GradingSession,
        GradingSummary,
        grade_answers,
        sample_order,
    )
    from ragaudit.labels.heuristic import HeuristicLabeller
    from ragaudit.labels.human import HumanLabeller, LabellingStopped
    from ragaudit.labels.protocol import GRADES, Labeller

_WHERE = {
    "BuildSummary": "build", "build_chunk_labels": "build", "make_labeller": "build",
    "Chunking": "format", "ChunkLabels": "format", "QuestionLabels": "format",
    "load_chunk_labels": "format", "save_chunk_labels": "format",
    "HeuristicLabeller": "heuristic", "HumanLabeller": "human", "LabellingStopped": "human",
    "GRADES": "protocol", "Labeller": "protocol",
    "GradingSession": "grading", "GradingSummary": "grading", "grade_answers": "grading",
    "sample_order": "grading",
}  # fmt: skip

__all__ = [
    "GRADES",
    "BuildSummary",
    "ChunkLabels",
    "Chunking",
    "GradingSession",
    "GradingSummary",
    "HeuristicLabeller",
    "HumanLabeller",
    "Labeller",
    "LabellingStopped",
    "QuestionLabels",
    "build_chunk_labels",
    "grade_answers",
    "load_chunk_labels",
    "make_labeller",
    "sample_order",
    "save_chunk_labels",
]

lazy_package(__name__, _WHERE)
