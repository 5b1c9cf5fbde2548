"""The per-question metric names of a saved run, declared once, with their value ranges.

Every name that can appear in a saved run's ``rows[*].metrics`` and that ragaudit itself
writes is declared here: its value range (checked when a run is loaded), how it is
aggregated over questions, and older spellings that are still read.  The metric registry
(:mod:`ragaudit.metrics.registry`) lists these next to the retrieval metrics, so
``ragaudit compare --metric`` and ``evaluate -m`` validate names from one place.  The table
lives in ``data`` because the loader range-checks with it and ``data`` sits below
``metrics`` in the layering.

Retrieval metrics appear under their family name with the literal cutoff ``@k`` (the run's
``config.k``), at document level (``recall@k``) and, with chunk labels, at chunk level
(``chunk_recall@k``).  A pipeline may also write an explicit cutoff (``ndcg@10``): the
family's range applies.  Names not declared here (a third party's ``rouge_l``) are accepted
and checked only for being a finite number, a boolean or null.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CHUNK_PREFIX",
    "JUDGES_OFFLINE",
    "JUDGES_OFFLINE_LLM",
    "JUDGE_METRICS",
    "LLM_JUDGE_METRICS",
    "METRIC_ALIASES",
    "OFFLINE_JUDGE_METRICS",
    "RETRIEVAL_FAMILIES",
    "SAVED_RUN_METRICS",
    "SavedRunMetric",
    "canonical_metric_name",
    "check_metric_value",
    "metric_rule",
]

Kind = Literal["binary", "unit", "nonnegative"]

#: ``config.judges`` of a run judged offline only, and of one the LLM judges re-judged.
JUDGES_OFFLINE = "offline"
JUDGES_OFFLINE_LLM = "offline+llm"

#: Prefix of chunk-level retrieval metrics.
CHUNK_PREFIX = "chunk_"

#: Retrieval metric families a saved run records at ``config.k`` (``hit@k`` ...).
RETRIEVAL_FAMILIES: tuple[str, ...] = ("hit", "recall", "precision", "mrr", "ndcg", "map")


@dataclass(frozen=True)
class SavedRunMetric:
    """The declaration of one per-question saved-run metric.

    Attributes
    ----------
    name : str
        As written in ``rows[*].metrics`` (``"recall@k"``, ``"correct"``).
    kind : {"binary", "unit", "nonnegative"}
        ``binary``: 0/1 or a boolean; ``unit``: a number in [0, 1]; ``nonnegative``: >= 0.
    description : str
        One line for tables and messages.
    aggregation : str
        How question values combine into the run's number: ``"mean"`` over the questions
        where the value is not null (macro average).
    """

    name: str
    kind: Kind
    description: str
    aggregation: str = "mean"

    @property
    def expected(self) -> str:
        """The range in words, for ``expected ..., found ...`` messages."""
        return _EXPECTED[self.kind]


_EXPECTED: dict[str, str] = {
    "binary": "0, 1, true, false or null",
    "unit": "a number between 0 and 1 or null",
    "nonnegative": "a number >= 0 or null",
}

_RETRIEVAL_DESCRIPTIONS: dict[str, str] = {
    "hit": "a gold document in the top k (0/1)",
    "recall": "share of the gold documents in the top k",
    "precision": "share of the top k that is a gold document",
    "mrr": "1 / rank of the first gold document in the top k",
    "ndcg": "nDCG of the top k",
    "map": "average precision of the top k",
}

#: Judge metrics: ``(name, kind, description)``; the LLM judges write the last six.
JUDGE_METRICS: tuple[tuple[str, Kind, str], ...] = (
    ("answered", "binary", "the model answered (did not abstain)"),
    ("correct", "binary", "answer correct; for an unanswerable question: it abstained"),
    ("keyword_hit", "unit", "share of the reference keywords in the answer"),
    ("evidence_in_context", "binary", "the context holds the reference's claims (offline judge)"),
    ("sufficiency", "binary", "the context suffices to answer (LLM judge)"),
    ("completeness", "unit", "share of the reference facts in the answer (LLM judge)"),
    ("faithfulness", "unit", "share of the answer's claims the context supports"),
    ("citation_accuracy", "unit", "share of citations that support their sentence (LLM judge)"),
    ("answer_relevance", "unit", "relevance of the answer, (score - 1) / 4 (LLM judge)"),
)

#: The per-question metrics the offline judges decide (``ragaudit run``), in file order.
OFFLINE_JUDGE_METRICS: tuple[str, ...] = (
    "answered",
    "correct",
    "keyword_hit",
    "evidence_in_context",
    "faithfulness",
)

#: The per-question metrics the LLM judges decide, in report order.
LLM_JUDGE_METRICS: tuple[str, ...] = (
    "sufficiency",
    "correct",
    "completeness",
    "faithfulness",
    "citation_accuracy",
    "answer_relevance",
)

#: Older spellings still read from saved runs (and accepted on the command line).
METRIC_ALIASES: dict[str, str] = {"citation_acc": "citation_accuracy"}


def _declare() -> dict[str, SavedRunMetric]:
    table: dict[str, SavedRunMetric] = {}
    for prefix, level in (("", "document"), (CHUNK_PREFIX, "chunk")):
        for family in RETRIEVAL_FAMILIES:
            kind: Kind = "binary" if family == "hit" else "unit"
            name = f"{prefix}{family}@k"
            table[name] = SavedRunMetric(
                name, kind, f"{_RETRIEVAL_DESCRIPTIONS[family]} ({level} level)"
            )
    for name, kind, description in JUDGE_METRICS:
        table[name] = SavedRunMetric(name, kind, description)
    return table


#: Every declared saved-run metric, by name, in report order.
SAVED_RUN_METRICS: dict[str, SavedRunMetric] = _declare()

#: Retrieval families that may carry an explicit cutoff in a saved run, and their ranges.
_FAMILY_KIND: dict[str, Kind] = {
    "hit": "binary", "success": "binary", "recall": "unit", "precision": "unit", "f1": "unit",
    "mrr": "unit", "map": "unit", "ndcg": "unit", "ndcg_exp": "unit", "dcg": "nonnegative",
    "r_precision": "unit", "context_precision": "unit",
}  # fmt: skip


def canonical_metric_name(name: str) -> str:
    """The current spelling of a saved-run metric name (old spellings are mapped).

    >>> canonical_metric_name("citation_acc"), canonical_metric_name("recall@k")
    ('citation_accuracy', 'recall@k')
    """
    return METRIC_ALIASES.get(name, name)


def metric_rule(name: str) -> SavedRunMetric | None:
    """The declaration that governs ``name``, or None for an undeclared (custom) metric.

    ``chunk_ndcg@10`` and ``ndcg@10`` follow the ``ndcg`` family's range.

    >>> metric_rule("recall@k").kind, metric_rule("chunk_ndcg@10").kind
    ('unit', 'unit')
    >>> metric_rule("rouge_l") is None
    True
    """
    name = canonical_metric_name(name)
    declared = SAVED_RUN_METRICS.get(name)
    if declared is not None:
        return declared
    base = name.removeprefix(CHUNK_PREFIX)
    family, sep, cutoff = base.partition("@")
    kind = _FAMILY_KIND.get(family)
    if kind is None or (sep and not (cutoff.isascii() and cutoff.isdigit())):
        return None
    return SavedRunMetric(name, kind, f"{family} (retrieval)")


def check_metric_value(name: str, value: Any) -> str | None:
    """Why ``value`` is not a valid value of metric ``name`` (None when it is valid).

    Every metric accepts null (*not applicable*); values must be finite; a declared metric
    must lie in its range.

    Examples
    --------
    >>> check_metric_value("recall@k", 7.5)
    'expected a number between 0 and 1 or null, found 7.5'
    >>> check_metric_value("correct", 3)
    'expected 0, 1, true, false or null, found 3'
    >>> check_metric_value("correct", True) is None, check_metric_value("rouge_l", 12.0) is None
    (True, True)
    """
    if value is None:
        return None
    rule = metric_rule(name)
    if isinstance(value, bool):
        if rule is None or rule.kind == "binary":
            return None
        return f"expected {rule.expected}, found {_show(value)}"
    if not isinstance(value, int | float):
        expected = "a number, a boolean or null" if rule is None else rule.expected
        return f"expected {expected}, found {_show(value)}"
    if not math.isfinite(value):
        return f"expected a finite number or null, found {value}"
    if rule is None:
        return None
    ok = {
        "binary": value in (0, 1),
        "unit": 0.0 <= value <= 1.0,
        "nonnegative": value >= 0.0,
    }[rule.kind]
    return None if ok else f"expected {rule.expected}, found {_show(value)}"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)[:60]
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return repr(value)[:60]
