"""Retrieval metrics: a registry of names, vectorised kernels, and :func:`evaluate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.metrics.evaluate import Evaluation, evaluate
    from ragaudit.metrics.judged import JudgedCoverage, judged_coverage, judged_gap
    from ragaudit.metrics.registry import MetricInfo, MetricSpec, list_metrics, parse_metric
    from ragaudit.metrics.stream import evaluate_stream

_WHERE = {
    "Evaluation": "evaluate", "evaluate": "evaluate", "MetricInfo": "registry",
    "MetricSpec": "registry", "list_metrics": "registry", "parse_metric": "registry",
    "evaluate_stream": "stream", "JudgedCoverage": "judged", "judged_coverage": "judged",
    "judged_gap": "judged",
}  # fmt: skip

__all__ = [
    "Evaluation",
    "JudgedCoverage",
    "MetricInfo",
    "MetricSpec",
    "evaluate",
    "evaluate_stream",
    "judged_coverage",
    "judged_gap",
    "list_metrics",
    "parse_metric",
]

lazy_package(__name__, _WHERE)
