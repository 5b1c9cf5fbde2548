"""Judges: verdicts on an answer (offline rules on the reference answer; LLM judges beside them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.judges.faithfulness import faithfulness, sentence_support
    from ragaudit.judges.offline import (
        all_keywords,
        answer_chunk_in_context,
        evidence_in_context,
        is_abstention,
        judge_offline,
        keyword_hit,
        numeric_match,
    )
    from ragaudit.judges.polarity import answer_polarity
    from ragaudit.judges.reference import answer_states, context_holds, reference_claims

_WHERE = {
    "all_keywords": "offline", "answer_chunk_in_context": "offline",
    "evidence_in_context": "offline", "is_abstention": "offline", "judge_offline": "offline",
    "keyword_hit": "offline", "numeric_match": "offline", "faithfulness": "faithfulness",
    "sentence_support": "faithfulness", "answer_polarity": "polarity",
    "answer_states": "reference", "context_holds": "reference", "reference_claims": "reference",
}  # fmt: skip

__all__ = [
    "all_keywords",
    "answer_chunk_in_context",
    "answer_polarity",
    "answer_states",
    "context_holds",
    "evidence_in_context",
    "faithfulness",
    "is_abstention",
    "judge_offline",
    "keyword_hit",
    "numeric_match",
    "reference_claims",
    "sentence_support",
]

lazy_package(__name__, _WHERE)
