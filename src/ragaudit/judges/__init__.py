"""Judges: verdicts on an answer (offline heuristics here; LLM judges live beside them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.judges.offline import (
        all_keywords,
        answer_chunk_in_context,
        evidence_in_context,
        is_abstention,
        judge_offline,
        keyword_hit,
        numeric_match,
    )

_WHERE = {
    "all_keywords": "offline", "answer_chunk_in_context": "offline",
    "evidence_in_context": "offline", "is_abstention": "offline", "judge_offline": "offline",
    "keyword_hit": "offline", "numeric_match": "offline",
}  # fmt: skip

__all__ = [
    "all_keywords",
    "answer_chunk_in_context",
    "evidence_in_context",
    "is_abstention",
    "judge_offline",
    "keyword_hit",
    "numeric_match",
]

lazy_package(__name__, _WHERE)
