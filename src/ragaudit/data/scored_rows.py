"""One system's per-question rows read from another tool's scored results (promptfoo,
MLflow GenAI evaluation): what :mod:`ragaudit.pipeline.scored_import` turns into a saved run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ScoredSystem", "answered_metric"]


@dataclass(frozen=True)
class ScoredSystem:
    """The rows of one system of a results file.

    Attributes
    ----------
    label : str
        The system as the tool names it (a promptfoo provider and prompt, an MLflow run).
    slug : str
        What is appended to the run name when a file holds several systems.
    rows : list of dict
        Saved-run rows, one per question id, in file order; every row has every metric
        (``None`` where the tool recorded no value).
    metrics : tuple of str
        The metric names, in first-seen order.
    details : dict
        What the tool said about this system (kept in the saved run's config).
    """

    label: str
    slug: str
    rows: list[dict[str, Any]]
    metrics: tuple[str, ...]
    details: dict[str, Any] = field(default_factory=dict)


def answered_metric(answer: str | None, error: str | None) -> float:
    """``answered``: 1 when the tool recorded an output and no error, else 0.

    >>> answered_metric("42", None), answered_metric(None, "timeout"), answered_metric("", None)
    (1.0, 0.0, 0.0)
    """
    return 1.0 if answer and not error else 0.0
