"""Where the noise comes from, for saved runs: clustered questions.

These functions take saved runs (already loaded) and return data; the statistics live in
:mod:`ragaudit.stats.clustered`, the rendering in :mod:`ragaudit.reports.noise`.  Judge repeats
are :mod:`ragaudit.diagnose.judge_noise`.

* :func:`question_clusters`: each question's cluster under ``--cluster-by source|tag|FIELD``;
* :func:`clustered_comparison`: CR1 and cluster-bootstrap intervals of ``B - A`` per metric;
* :func:`clustered_metric`: the same for one run's mean (``funnel``, ``report``);
* :func:`clustering_summary`: the one-line verdict a report or the demo prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.stats._inputs import pair_runs
from ragaudit.stats.clustered import (
    ClusterBootstrapResult,
    ClusteredResult,
    cluster_bootstrap,
    clustered_mean,
    clustered_paired_difference,
    clustered_rate,
)

__all__ = [
    "ClusteredComparison",
    "ClusteredMetric",
    "clustered_comparison",
    "clustered_means",
    "clustered_metric",
    "clustering_headline",
    "clustering_summary",
    "describe_clustering",
    "question_clusters",
    "run_metrics",
]

# Where each --cluster-by shortcut looks in a saved-run row (first present key wins).
_SHORTCUTS: dict[str, tuple[str, ...]] = {"source": ("gold_docs", "sources"), "tag": ("tags",)}


@dataclass(frozen=True)
class ClusteredMetric:
    """One metric's clustered analysis (a mean, or a paired difference ``B - A``).

    Attributes
    ----------
    metric : str
    result : ClusteredResult
        CR1 interval with the naive one, the number of clusters and the design effect.
    bootstrap : ClusterBootstrapResult
        Cluster-bootstrap percentile interval.
    """

    metric: str
    result: ClusteredResult
    bootstrap: ClusterBootstrapResult

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        r, b = self.result, self.bootstrap
        return {
            "metric": self.metric,
            "statistic": r.statistic,
            "n": r.n,
            "n_clusters": r.n_clusters,
            "naive_se": r.naive_standard_error,
            "naive_ci": [r.naive_confidence_interval.low, r.naive_confidence_interval.high],
            "cr1_se": r.standard_error,
            "clustered_ci": [r.confidence_interval.low, r.confidence_interval.high],
            "interval_method": r.method,
            "effective_n": r.effective_n,
            "bootstrap_ci": [b.confidence_interval.low, b.confidence_interval.high],
            "design_effect": r.design_effect,
            "widening": r.widening,
            "widened": r.widened,
        }


@dataclass(frozen=True)
class ClusteredComparison:
    """Clustered intervals for every compared metric.

    Attributes
    ----------
    by : str
        The ``--cluster-by`` value.
    rows : tuple of ClusteredMetric
    n_resamples, seed : int
        Of the cluster bootstrap.
    paired : bool
        Whether the statistic is a paired difference ``B - A``.
    """

    by: str
    rows: tuple[ClusteredMetric, ...]
    n_resamples: int
    seed: int
    paired: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        return {
            "cluster_by": self.by,
            "method": (
                "CR1 (t, G-1 df) and cluster bootstrap (percentile)"
                if self.paired
                else "CR1 variance (Korn-Graubard beta interval for values in [0, 1], else t "
                "on G-1 df) and cluster bootstrap (percentile)"
            ),
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "metrics": [row.to_dict() for row in self.rows],
        }


def _row_label(row: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, list | tuple):
            value = value[0] if value else None
        if value is not None and value != "":
            return str(value)
    return None


def question_clusters(run: SavedRun, by: str) -> dict[str, str]:
    """Each question's cluster label.

    ``source`` is the question's first gold document (``gold_docs``), ``tag`` its first tag;
    any other value names a row field (its first element when it is a list).  A question
    without a value is its own cluster, so it adds no correlation.

    Examples
    --------
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [
    ...     {"id": "q1", "gold_docs": ["d1"], "retrieved": []},
    ...     {"id": "q2", "gold_docs": ["d1", "d2"], "retrieved": []},
    ...     {"id": "q3", "gold_docs": [], "retrieved": []}]})
    >>> question_clusters(run, "source")
    {'q1': 'd1', 'q2': 'd1', 'q3': '(none) q3'}
    """
    keys = _SHORTCUTS.get(by, (by,))
    labels = {row["id"]: _row_label(row, keys) for row in run.rows}
    if run.rows and all(label is None for label in labels.values()):
        fields = sorted({key for row in run.rows for key in row})
        raise InputError(
            f"--cluster-by {by}: no question of run {run.name!r} has a value for "
            f"{' or '.join(keys)}; use source, tag or one of the row fields: {', '.join(fields)}"
        )
    return {qid: label if label is not None else f"(none) {qid}" for qid, label in labels.items()}


def run_metrics(run: SavedRun, questions: str = "all") -> PerQuestionMetrics:
    """The run's per-question metrics, restricted to ``questions`` (all/answerable/...)."""
    return PerQuestionMetrics.from_saved_run(run).subset(questions)


def _analyse(
    metric: str,
    values: tuple[np.ndarray, ...],
    labels: np.ndarray,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> ClusteredMetric | None:
    keep = np.all([np.isfinite(v) for v in values], axis=0)
    kept = [v[keep] for v in values]
    if keep.sum() < 2 or len(np.unique(labels[keep])) < 2:
        return None
    if len(kept) == 2:
        result = clustered_paired_difference(kept[0], kept[1], labels[keep], confidence=confidence)
        boot = cluster_bootstrap(
            kept[0], kept[1], clusters=labels[keep], confidence=confidence,
            n_resamples=n_resamples, rng=seed,
        )  # fmt: skip
    else:
        bounded = kept[0].min() >= 0 and kept[0].max() <= 1  # a rate or a score in [0, 1]
        interval = clustered_rate if bounded else clustered_mean
        result = interval(kept[0], labels[keep], confidence=confidence)
        boot = cluster_bootstrap(
            kept[0], clusters=labels[keep], confidence=confidence, n_resamples=n_resamples,
            rng=seed,
        )  # fmt: skip
    return ClusteredMetric(metric, result, boot)


def clustered_comparison(
    run_a: SavedRun,
    run_b: SavedRun,
    by: str,
    metrics: Sequence[str] | None = None,
    *,
    questions: str = "all",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    allow_partial: bool = False,
) -> ClusteredComparison:
    """CR1 and cluster-bootstrap intervals of ``B - A`` for each metric.

    Clusters come from run A (questions only in B use B's rows); values that are null in
    either run are excluded pairwise, as in ``compare``.  Metrics with fewer than two
    clusters among their scored questions are left out.
    """
    paired = pair_runs(
        run_metrics(run_a, questions),
        run_metrics(run_b, questions),
        metrics,
        allow_partial=allow_partial,
    )
    clusters = {**question_clusters(run_b, by), **question_clusters(run_a, by)}
    labels = np.array([clusters[qid] for qid in paired.ids])
    rows = []
    for metric in paired.metrics:
        row = _analyse(
            metric, (paired.a[metric], paired.b[metric]), labels,
            confidence=confidence, n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        if row is not None:
            rows.append(row)
    return ClusteredComparison(by, tuple(rows), n_resamples, seed, paired=True)


def clustered_metric(
    run: SavedRun,
    by: str,
    metric: str,
    *,
    questions: str = "all",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> ClusteredMetric | None:
    """CR1 and cluster-bootstrap intervals of one run's mean ``metric``.

    Returns None when fewer than two clusters have a scored question.  This is the function
    ``funnel`` and ``report`` call.

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 2}"], "retrieved": [],
    ...          "metrics": {"hit": i % 3 > 0}} for i in range(8)]
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> row = clustered_metric(run, "source", "hit", n_resamples=200)
    >>> row.result.n_clusters, row.result.statistic
    (4, 0.625)
    """
    values = run_metrics(run, questions).values
    if not any(metric in v for v in values.values()):
        raise InputError(f"metric {metric!r} is missing from run {run.name!r}")
    clusters = question_clusters(run, by)
    ids = sorted(values)
    column = np.array(
        [np.nan if values[q].get(metric) is None else values[q][metric] for q in ids], dtype=float
    )
    labels = np.array([clusters[q] for q in ids])
    return _analyse(
        metric, (column,), labels, confidence=confidence, n_resamples=n_resamples, seed=seed
    )


def clustered_means(
    run: SavedRun,
    by: str,
    metrics: Sequence[str] = ("hit@k", "ndcg@k", "answered", "correct"),
    *,
    questions: str = "answerable",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> ClusteredComparison:
    """Clustered intervals of one run's mean metrics (``funnel --cluster-by``, ``report``).

    Metrics the run does not have, or with fewer than two clusters, are left out.  Pair each
    row with :func:`clustering_summary` for the one-line verdict.

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 3}"], "retrieved": [],
    ...          "metrics": {"correct": i % 3 > 0}} for i in range(9)]
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> result = clustered_means(run, "source", n_resamples=100, questions="all")
    >>> [(row.metric, row.result.n_clusters) for row in result.rows]
    [('correct', 3)]
    """
    present = set(run_metrics(run, questions).metrics)
    rows = []
    for metric in metrics:
        if metric not in present:
            continue
        row = clustered_metric(
            run, by, metric, questions=questions, confidence=confidence,
            n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        if row is not None:
            rows.append(row)
    return ClusteredComparison(by, tuple(rows), n_resamples, seed, paired=False)


def clustering_summary(row: ClusteredMetric, by: str) -> str:
    """One line saying what clustering did to an interval (for reports and the demo).

    >>> from ragaudit.stats.clustered import cluster_bootstrap, clustered_mean
    >>> y, g = [1, 1, 1, 0, 0, 0, 1, 0], list("aaabbbcd")
    >>> row = ClusteredMetric("correct", clustered_mean(y, g), cluster_bootstrap(y, clusters=g))
    >>> print(clustering_summary(row, "source"))  # doctest: +NORMALIZE_WHITESPACE
    correct: clustering by source (4 clusters, design effect 2.92) widens the 95% interval by
    130%, more than 10%: questions that share a source are not independent.
    """
    r = row.result
    level = f"{100 * r.confidence:g}%"
    if r.naive_standard_error == 0 and r.effective_n is not None:
        return (
            f"{row.metric}: every question scored {r.statistic:g}, so the correlation within a "
            f"{by} cannot be measured; the clustered {level} interval assumes the worst case, "
            f"one independent draw per {by} ({r.n_clusters} instead of {r.n})."
        )
    head = (
        f"{row.metric}: clustering by {by} ({r.n_clusters} clusters, design effect "
        f"{r.design_effect:.2f})"
    )
    if r.widened:
        return (
            f"{head} widens the {level} interval by {100 * r.widening:.0f}%, more than 10%: "
            f"questions that share a {by} are not independent."
        )
    return f"{head} changes the {level} interval by {100 * r.widening:+.0f}% (within 10%)."


def clustering_headline(run: SavedRun, by: str = "source", *, seed: int = 0) -> str:
    """One line for the demo or a report: what clustering by ``by`` does to this run.

    Uses :func:`clustered_means` on the answerable questions (2000 cluster-bootstrap
    resamples, the given seed).

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 3}"], "answerable": True,
    ...          "retrieved": [], "metrics": {"correct": i // 3 % 2}} for i in range(12)]

    Whole sources right or wrong: deff = (4/3 * 4 * 1.5**2 / 144) / (3 / 11 / 12) = 3.67, so
    the 12 questions count as n* = 12 / 3.67 * (t(11) / t(3))**2 = 1.57; the beta interval on
    1.57, [0.005, 0.995], is 71% wider than Clopper-Pearson's on 12, [0.211, 0.789]:

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> print(clustering_headline(run))  # doctest: +NORMALIZE_WHITESPACE
    clustering by source (4 clusters): the 95% interval of correct is 71% wider (design
    effect 3.67) - more than 10%: questions that share a source are not independent
    """
    return describe_clustering(clustered_means(run, by, n_resamples=2000, seed=seed))


def describe_clustering(result: ClusteredComparison) -> str:
    """The one line of :func:`clustering_headline` for an already computed analysis of one run.

    Metrics whose every value is equal are left out of the list (their design effect cannot be
    measured); the verdict says "more than 10%" when any listed interval widened by that much.
    """
    by = result.by
    if not result.rows:
        return f"clustering by {by}: fewer than 2 clusters with scored questions, nothing to adjust"
    varied = [row for row in result.rows if row.result.naive_standard_error > 0]
    parts = [
        f"{row.metric} is {100 * abs(row.result.widening):.0f}% "
        f"{'wider' if row.result.widening >= 0 else 'narrower'} (design effect "
        f"{row.result.design_effect:.2f})"
        for row in varied
    ]
    n_clusters = max(row.result.n_clusters for row in result.rows)
    if not parts:
        return f"clustering by {by} ({n_clusters} clusters): every metric is constant"
    level = f"{100 * result.rows[0].result.confidence:g}%"
    verdict = (
        f"more than 10%: questions that share a {by} are not independent"
        if any(row.result.widened for row in varied)
        else "within 10%: the naive intervals stand"
    )
    return (
        f"clustering by {by} ({n_clusters} clusters): the {level} interval of "
        f"{', '.join(parts)} - {verdict}"
    )
