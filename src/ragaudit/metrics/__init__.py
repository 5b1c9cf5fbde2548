"""Retrieval metrics: a registry of names, vectorised kernels, and :func:`evaluate`."""

from __future__ import annotations

from ragaudit.metrics.evaluate import Evaluation, evaluate
from ragaudit.metrics.registry import MetricInfo, MetricSpec, list_metrics, parse_metric
from ragaudit.metrics.stream import evaluate_stream

__all__ = [
    "Evaluation",
    "MetricInfo",
    "MetricSpec",
    "evaluate",
    "evaluate_stream",
    "list_metrics",
    "parse_metric",
]
