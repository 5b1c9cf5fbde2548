"""Judges: verdicts on an answer (offline heuristics here; LLM judges live beside them)."""

from __future__ import annotations

from ragaudit.judges.offline import (
    all_keywords,
    answer_chunk_in_context,
    evidence_in_context,
    is_abstention,
    judge_offline,
    keyword_hit,
    numeric_match,
)

__all__ = [
    "all_keywords",
    "answer_chunk_in_context",
    "evidence_in_context",
    "is_abstention",
    "judge_offline",
    "keyword_hit",
    "numeric_match",
]
