"""Where the noise comes from, for saved runs: clustered questions.

These functions take saved runs (already loaded) and return data; the statistics live in
:mod:`ragaudit.stats.clustered`, the rendering in :mod:`ragaudit.reports.noise`.  Judge repeats
are :mod:`ragaudit.diagnose.judge_noise`.

* :func:`question_clusters`: each question's cluster under ``--cluster-by source|tag|FIELD``;
* :func:`clustered_comparison`: the design effect of ``B - A`` per metric (its one clustered
  interval is ``compare``'s own row: the cluster sign-flip test inverted, beside its verdict);
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
from ragaudit.stats import pair_runs
from ragaudit.stats.cluster_betting import METHOD as CLUSTER_BETTING
from ragaudit.stats.cluster_betting import cluster_mean_interval
from ragaudit.stats.clustered import ClusteredResult, clustered_mean
from ragaudit.stats.intervals import IntervalResult
from ragaudit.stats.policy import is_unit, mean_interval
from ragaudit.stats.resampling import ConfidenceInterval

__all__ = [
    "ClusteredComparison",
    "ClusteredMetric",
    "clustered_comparison",
    "clustered_means",
    "clustered_metric",
    "clustering_headline",
    "clustering_summary",
    "describe_clustering",
    "few_clusters_caveat",
    "question_clusters",
    "run_metrics",
]

# Where each --cluster-by shortcut looks in a saved-run row (first present key wins).
_SHORTCUTS: dict[str, tuple[str, ...]] = {"source": ("gold_docs", "sources"), "tag": ("tags",)}


#: The methods line of every clustered table (and its JSON ``method``).
METHODS = (
    f"clustered: {CLUSTER_BETTING} for values in [0, 1] (differences in [-1, 1]), never "
    "narrower than the naive interval; CR1 t on G-1 df otherwise; naive: the interval the "
    "dashboard and compare (without --cluster-by) print (Clopper-Pearson exact or McNemar exact "
    "inverted for 0/1 values, betting for means, the sign-flip test inverted for differences); "
    "deff: CR1 / naive variance (Cameron & Miller 2015)"
)

#: The methods line of ``compare --cluster-by``'s clustered block (and its JSON ``method``):
#: one number, one interval, so the block prints no second interval for ``B - A`` (issue 32).
PAIRED_METHODS = (
    "the clustered interval of B - A is the comparison's own (the cluster sign-flip test "
    "inverted, beside its verdict); deff: CR1 / naive variance of the differences (Cameron & "
    "Miller 2015), a diagnostic the interval does not use"
)

#: The clustered interval of a value that is not in [0, 1] (latency, cost): CR1, t on G-1 df.
CR1_T = "CR1 t (G-1 df)"

#: A design effect above this counts as "questions that share a cluster are not independent".
DEFF_THRESHOLD = 1.1


@dataclass(frozen=True)
class ClusteredMetric:
    """One metric's clustered analysis (a mean, or a paired difference ``B - A``).

    Attributes
    ----------
    metric : str
    result : ClusteredResult
        CR1 standard errors, the number of clusters and the (estimated) design effect.
    naive : IntervalResult or None
        The interval that treats questions as independent: the one the dashboard (a mean,
        :func:`~ragaudit.stats.policy.mean_interval`) prints for the same number.  None for a
        paired difference (``compare --cluster-by``), whose one interval is compare's row.
    clustered : IntervalResult or None
        For values in [0, 1]: the cluster betting interval
        (:func:`~ragaudit.stats.cluster_betting.cluster_mean_interval`) widened to contain
        the naive one, so clustering never narrows an interval; otherwise CR1 ``t``.  None
        for a paired difference (its clustered interval is compare's row, which agrees with
        the verdict).
    """

    metric: str
    result: ClusteredResult
    naive: IntervalResult | None = None
    clustered: IntervalResult | None = None

    @property
    def design_effect(self) -> float | None:
        """CR1 / naive variance, or None when every value is equal (it cannot be measured)."""
        return self.result.design_effect if self.result.naive_standard_error > 0 else None

    @property
    def effective_n(self) -> float:
        """``n / max(deff, 1)`` (``G`` when the design effect cannot be measured)."""
        deff = self.design_effect
        return float(self.result.n_clusters) if deff is None else self.result.n / max(deff, 1.0)

    @property
    def correlated(self) -> bool:
        """Whether the design effect exceeds :data:`DEFF_THRESHOLD`."""
        deff = self.design_effect
        return deff is not None and deff > DEFF_THRESHOLD

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        r, naive, clustered = self.result, self.naive, self.clustered
        intervals = {}
        if naive is not None and clustered is not None:
            intervals = {
                "naive_ci": [naive.confidence_interval.low, naive.confidence_interval.high],
                "naive_method": naive.method,
                "clustered_ci": [
                    clustered.confidence_interval.low,
                    clustered.confidence_interval.high,
                ],
                "clustered_method": clustered.method,
            }
        return {
            "metric": self.metric,
            "statistic": r.statistic,
            "n": r.n,
            "n_clusters": r.n_clusters,
            **intervals,
            "naive_se": r.naive_standard_error,
            "cr1_se": r.standard_error,
            "design_effect": self.design_effect,
            "effective_n": self.effective_n,
        }


@dataclass(frozen=True)
class ClusteredComparison:
    """Clustered intervals for every compared metric.

    Attributes
    ----------
    by : str
        The ``--cluster-by`` value.
    rows : tuple of ClusteredMetric
    paired : bool
        Whether the statistic is a paired difference ``B - A``.
    """

    by: str
    rows: tuple[ClusteredMetric, ...]
    paired: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        return {
            "cluster_by": self.by,
            "method": PAIRED_METHODS if self.paired else METHODS,
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


def _hull(clustered: IntervalResult, naive: IntervalResult) -> IntervalResult:
    """``clustered`` widened to contain ``naive``: clustering never narrows an interval (the
    hull of a valid interval with any other is valid)."""
    c, v = clustered.confidence_interval, naive.confidence_interval
    ci = ConfidenceInterval(min(c.low, v.low), max(c.high, v.high))
    return IntervalResult(clustered.statistic, ci, clustered.confidence, clustered.method)


def _analyse(
    metric: str, values: tuple[np.ndarray, ...], labels: np.ndarray, *, confidence: float
) -> ClusteredMetric | None:
    """One metric's clustered analysis: the design effect, and for a mean its intervals (a
    paired difference's one clustered interval is compare's row)."""
    keep = np.all([np.isfinite(v) for v in values], axis=0)
    kept = [v[keep] for v in values]
    groups = labels[keep]
    if keep.sum() < 2 or len(np.unique(groups)) < 2:
        return None
    paired = len(kept) == 2
    y = kept[1] - kept[0] if paired else kept[0]
    result = clustered_mean(y, groups, confidence=confidence)
    if paired:
        return ClusteredMetric(metric, result)
    # the one interval policy: rates and scores in [0, 1] get exact/score/betting intervals,
    # other values (the policy's bootstrap) the CR1 cluster-robust t interval
    if all(is_unit(v) for v in kept):
        naive = mean_interval(y, confidence=confidence)
        clustered = cluster_mean_interval(y, groups, bounds=(0.0, 1.0), confidence=confidence)
        return ClusteredMetric(metric, result, naive, _hull(clustered, naive))
    naive = IntervalResult(result.statistic, result.naive_confidence_interval, confidence, "t")
    clustered = IntervalResult(result.statistic, result.confidence_interval, confidence, CR1_T)
    return ClusteredMetric(metric, result, naive, clustered)


def clustered_comparison(
    run_a: SavedRun,
    run_b: SavedRun,
    by: str,
    metrics: Sequence[str] | None = None,
    *,
    questions: str = "all",
    confidence: float = 0.95,
    allow_partial: bool = False,
) -> ClusteredComparison:
    """The design effect of ``B - A`` for each metric (see :class:`ClusteredMetric`).

    No interval: ``compare --cluster-by`` prints one clustered interval per number, the cluster
    sign-flip test inverted beside its verdict (:func:`ragaudit.stats.compare.compare_runs`).

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
            confidence=confidence,
        )  # fmt: skip
        if row is not None:
            rows.append(row)
    return ClusteredComparison(by, tuple(rows), paired=True)


def clustered_metric(
    run: SavedRun,
    by: str,
    metric: str,
    *,
    questions: str = "all",
    confidence: float = 0.95,
) -> ClusteredMetric | None:
    """Naive and clustered intervals of one run's mean ``metric`` (see :class:`ClusteredMetric`).

    Returns None when fewer than two clusters have a scored question.  This is the function
    ``funnel`` and ``report`` call.

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 2}"], "retrieved": [],
    ...          "metrics": {"hit": i % 3 > 0}} for i in range(8)]
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> row = clustered_metric(run, "source", "hit")
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
    return _analyse(metric, (column,), labels, confidence=confidence)


def clustered_means(
    run: SavedRun,
    by: str,
    metrics: Sequence[str] = ("hit@k", "ndcg@k", "answered", "correct"),
    *,
    questions: str = "answerable",
    confidence: float = 0.95,
) -> ClusteredComparison:
    """Clustered intervals of one run's mean metrics (``funnel --cluster-by``, ``report``).

    Metrics the run does not have, or with fewer than two clusters, are left out.  Pair each
    row with :func:`clustering_summary` for the one-line verdict.

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 3}"], "retrieved": [],
    ...          "metrics": {"correct": i % 3 > 0}} for i in range(9)]
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> result = clustered_means(run, "source", questions="all")
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
        )  # fmt: skip
        if row is not None:
            rows.append(row)
    return ClusteredComparison(by, tuple(rows), paired=False)


def clustering_summary(row: ClusteredMetric, by: str, *, paired: bool = False) -> str:
    """One line saying what clustering means for one number (for reports and the demo).

    The verdict follows the estimated design effect (CR1 / naive variance): above
    :data:`DEFF_THRESHOLD` the questions of one cluster are not independent; below 1 they vary
    *less* together than independent questions would, and the design effect is counted as 1
    (clustering never narrows an interval).

    >>> from ragaudit.stats.cluster_betting import cluster_mean_interval
    >>> from ragaudit.stats.policy import mean_interval
    >>> from ragaudit.stats.clustered import clustered_mean
    >>> y, g = [1, 1, 1, 0, 0, 0, 1, 0], list("aaabbbcd")
    >>> row = ClusteredMetric("correct", clustered_mean(y, g), mean_interval(y),
    ...                       cluster_mean_interval(y, g))
    >>> print(clustering_summary(row, "source"))  # doctest: +NORMALIZE_WHITESPACE
    correct: design effect 2.92 (4 clusters by source): the 8 questions carry the information
    of about 2.7 independent ones; questions that share a source are not independent.

    A paired row (``B - A``) whose differences are all equal says so, not "every question scored":

    >>> d = [0.0] * 6
    >>> row = ClusteredMetric("hit@k", clustered_mean(d, g[:6]), mean_interval(d),
    ...                       cluster_mean_interval(d, g[:6]))
    >>> clustering_summary(row, "source", paired=True).split(",")[0]
    'hit@k: B - A is +0 on every question'
    """
    r = row.result
    deff = row.design_effect
    if deff is None:
        # a paired row's values are the differences B - A, not the scores (issue 21)
        same = (
            f"B - A is {r.statistic:+g} on every question"
            if paired
            else (f"every question scored {r.statistic:g}")
        )
        return (
            f"{row.metric}: {same}, so the correlation within a "
            f"{by} cannot be measured; the clustered interval assumes the worst case, one "
            f"independent draw per {by} ({r.n_clusters} instead of {r.n})."
        )
    head = f"{row.metric}: design effect {deff:.2f} ({r.n_clusters} clusters by {by})"
    if deff > DEFF_THRESHOLD:
        return (
            f"{head}: the {r.n} questions carry the information of about "
            f"{row.effective_n:.2g} independent ones; questions that share a {by} are not "
            "independent."
        )
    if deff < 1:
        return (
            f"{head}, below 1: no sign that questions of one {by} succeed or fail together, "
            "and a design effect below 1 is counted as 1 (clustering never narrows an "
            f"interval); the clustered interval is wider only because it assumes nothing "
            f"about the correlation ({r.n_clusters} draws)."
        )
    return f"{head}: within 10% of independent questions."


def clustering_headline(run: SavedRun, by: str = "source") -> str:
    """One line for the demo or a report: what clustering by ``by`` does to this run.

    Uses :func:`clustered_means` on the answerable questions.

    Examples
    --------
    >>> rows = [{"id": f"q{i}", "gold_docs": [f"d{i // 3}"], "answerable": True,
    ...          "retrieved": [], "metrics": {"correct": i // 3 % 2}} for i in range(12)]

    Whole sources right or wrong: deff = (4/3 * 4 * 1.5**2 / 144) / (3 / 11 / 12) = 3.67, so
    the 12 questions count as 12 / 3.67 = 3.3 independent ones:

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> print(clustering_headline(run))  # doctest: +NORMALIZE_WHITESPACE
    clustering by source (4 clusters): design effect of correct 3.67 (3.3 independent
    questions of 12) - above 1.1: questions that share a source are not independent; only 4
    clusters: a design effect estimated from fewer than about 20-50 clusters is rough (Cameron
    & Miller 2015, section VI)
    """
    return describe_clustering(clustered_means(run, by))


#: Fewer clusters than this make an estimated design effect rough (Cameron & Miller 2015, VI).
FEW_CLUSTERS = 20


def few_clusters_caveat(n_clusters: int) -> str | None:
    """The one caveat every design-effect line carries when there are few clusters.

    ``compare``/``funnel``/``report --cluster-by`` print it under their clustered tables, and
    the one-line summaries of the funnel, the report and the demo
    (:func:`describe_clustering`) end with it.

    >>> few_clusters_caveat(14).split(":")[0]
    'only 14 clusters'
    >>> few_clusters_caveat(30) is None
    True
    """
    if n_clusters >= FEW_CLUSTERS:
        return None
    return (
        f"only {n_clusters} clusters: a design effect estimated from fewer than about 20-50 "
        "clusters is rough (Cameron & Miller 2015, section VI)"
    )


def describe_clustering(result: ClusteredComparison) -> str:
    """The one line of :func:`clustering_headline` for an already computed analysis of one run.

    Metrics whose every value is equal are left out of the list (their design effect cannot be
    measured); a design effect below 1 is named as such and counted as 1.  The verdict says
    "above 1.1" when any listed design effect is.
    """
    by = result.by
    if not result.rows:
        return f"clustering by {by}: fewer than 2 clusters with scored questions, nothing to adjust"
    varied = [(row, deff) for row in result.rows if (deff := row.design_effect) is not None]
    parts = []
    for row, deff in varied:
        if deff < 1:
            parts.append(f"{row.metric} {deff:.2f} (below 1, counted as 1)")
        else:
            parts.append(
                f"{row.metric} {deff:.2f} ({row.effective_n:.2g} independent questions of "
                f"{row.result.n})"
            )
    n_clusters = max(row.result.n_clusters for row in result.rows)
    if not parts:
        return f"clustering by {by} ({n_clusters} clusters): every metric is constant"
    verdict = (
        f"above {DEFF_THRESHOLD:g}: questions that share a {by} are not independent"
        if any(row.correlated for row, _ in varied)
        else f"none above {DEFF_THRESHOLD:g}: no sign that questions of one {by} fail together"
    )
    caveat = few_clusters_caveat(n_clusters)
    return (
        f"clustering by {by} ({n_clusters} clusters): design effect of {', '.join(parts)} - "
        f"{verdict}" + ("" if caveat is None else f"; {caveat}")
    )
