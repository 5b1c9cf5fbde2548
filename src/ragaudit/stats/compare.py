"""Paired comparison of two evaluation runs, metric by metric ("is the improvement real?").

For every metric the questions are paired by id, ``null`` values are dropped pairwise, and
three things are reported: a confidence interval for ``mean(B) - mean(A)``, a two-sided
paired permutation p-value, and, for 0/1 metrics, the paired 2x2 table with McNemar's exact
test and the ids of the questions that differ.  Every row names the method behind its
interval and its p-value.

The verdict is the exact test alone (:func:`~ragaudit.stats.verdict`); the interval comes from
the one policy (:func:`~ragaudit.stats.policy.choose_interval`): McNemar's exact test
inverted for 0/1 metrics, else the verdict's sign-flip test inverted
(:mod:`ragaudit.stats.signflip_interval`); both exclude 0 exactly when the verdict is
SIGNIFICANT; with ``clusters`` the cluster sign-flip test
(:mod:`ragaudit.stats.cluster_signflip`).  Each row also carries its MDE and what it assumes
(:func:`~ragaudit.stats.mde.paired_mde`).

Randomness: every group of metrics that share the same set of non-null questions shares one
bootstrap index matrix and one set of sign flips, drawn from a generator seeded with
``(seed, crc32 of the question set, purpose)``, and each metric is then computed on its own
column.  A metric's numbers therefore do not depend on which other metrics are compared
alongside it, and the same inputs give byte-identical output.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from ragaudit._validate import check_int
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import RagauditWarning
from ragaudit.stats._group import (
    SubsampleInterval,
    group_clustered,
    group_intervals,
    group_pvalues,
    group_signflip,
)
from ragaudit.stats._inputs import (
    PairedMetrics,
    PerQuestionMetrics,
    as_per_question_metrics,
    pair_runs,
)
from ragaudit.stats.comparison import Comparison, MetricComparison
from ragaudit.stats.mcnemar import mcnemar_exact
from ragaudit.stats.mde import paired_mde
from ragaudit.stats.options import CI_METHODS
from ragaudit.stats.permutation import check_exact_max_n
from ragaudit.stats.policy import check_ci_method, choose_interval, is_binary, is_unit
from ragaudit.stats.resampling import check_confidence, check_count
from ragaudit.stats.verdicts import verdict

__all__ = [
    "CI_METHODS",
    "Comparison",
    "MetricComparison",
    "SubsampleInterval",
    "compare_runs",
    "skewness",
]


def skewness(differences: Sequence[float] | np.ndarray) -> float | None:
    r"""Sample skewness of the non-zero differences (those the sign-flip test sees).

    .. math:: g_1 = \frac{\frac1m \sum (d_i - \bar d)^3}{\left(\frac1m \sum (d_i -
              \bar d)^2\right)^{3/2}}

    over the ``m`` non-zero differences; None with fewer than 3 or when they are all equal.

    >>> round(skewness([0.05] * 8 + [-0.2] * 2), 2)
    -1.5
    >>> skewness([0.0, 0.1, 0.1]) is None
    True
    """
    d = np.asarray(differences, dtype=float)
    d = d[(d != 0) & ~np.isnan(d)]
    if d.size < 3:
        return None
    centred = d - d.mean()
    spread = float(np.mean(centred**2))
    if spread <= 1e-300:
        return None
    return float(np.mean(centred**3) / spread**1.5)


def _check_seed(seed: int) -> int:
    return check_int(seed, "seed", minimum=0)


#: What :func:`compare_runs` accepts as a run: a loaded saved run or per-question values (stats
#: reads no files: :func:`ragaudit.compare_runs` also takes paths).
RunLike = PerQuestionMetrics | SavedRun


def compare_runs(
    run_a: RunLike,
    run_b: RunLike,
    metrics: Sequence[str] | None = None,
    *,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    method: str = "auto",
    seed: int = 0,
    exact_max_n: int = 20,
    allow_partial: bool = False,
    subsample_sizes: Sequence[int] = (10, 20),
    questions: str = "all",
    clusters: Mapping[str, Hashable] | None = None,
) -> Comparison:
    r"""Compare run B with run A question by question, for every metric.

    For metric *j* with non-null paired values on questions :math:`i \in S_j`,
    :math:`d_i = b_i - a_i`, the statistic is :math:`\bar d = \frac1{|S_j|}\sum d_i`; the
    interval inverts McNemar's exact test for 0/1 metrics
    (:func:`~ragaudit.stats.paired_difference_interval`) and the sign-flip test inverted
    otherwise (:mod:`ragaudit.stats.signflip_interval`); the p-value a paired sign-flip
    permutation test (:func:`~ragaudit.stats.paired_permutation_test`), exact whenever
    affordable, and the verdict that test alone.  0/1
    metrics add McNemar's exact test.  Every row carries its minimum detectable effect and
    what that assumes (:func:`~ragaudit.stats.mde.paired_mde`).

    Parameters
    ----------
    run_a, run_b : SavedRun or PerQuestionMetrics
        Loaded runs.  Files are read above stats: the public :func:`ragaudit.compare_runs`
        takes paths too (read by
        :func:`~ragaudit.data.per_question_files.read_per_question_metrics`).
    metrics : sequence of str, optional
        Default: every metric present in both runs.
    n_resamples, n_permutations : int, default 10000
    confidence : float in (0, 1), default 0.95
    method : {"auto", "score", "betting", "bootstrap", "percentile", "bca"}, default "auto"
        ``auto``/``score``: McNemar's exact test inverted for 0/1 metrics, the sign-flip test
        inverted otherwise;
        ``betting``: the betting interval for non-0/1 scores in [0, 1] (never a gate);
        ``bootstrap``/``percentile``/``bca``: that bootstrap interval for every metric.
    seed : int >= 0, default 0
    exact_max_n : int, default 20
        Enumerate every sign pattern up to this many non-zero differences.
    allow_partial : bool, default False
        Allow comparing runs that share fewer than half of their questions.
    questions : {"all", "answerable", "unanswerable"}, default "all"
        Which questions of saved runs to compare (e.g. the answerable ones, as the funnel).
    clusters : mapping of question id to cluster label, optional
        With clusters (``compare --cluster-by``) every metric's verdict is the cluster sign-flip
        test and its interval that test inverted, united with CR2 on Bell-McCaffrey df
        (:func:`~ragaudit.stats.cluster_signflip.cluster_signflip`); too few differing counts
        clusters.  A question without a label is its own cluster.
    subsample_sizes : sequence of int, default (10, 20)
        Sizes of the deterministic subsamples (the first ``n`` questions by id) whose
        interval widths show the :math:`1/\sqrt n` shrinkage; the full set is always added.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> a = PerQuestionMetrics("A", {f"q{i}": {"hit": float(i % 2)} for i in range(8)})
    >>> b = PerQuestionMetrics("B", {f"q{i}": {"hit": 1.0} for i in range(8)})
    >>> row = compare_runs(a, b, seed=1).metrics[0]
    >>> row.n, row.statistic, row.mcnemar.b_only, row.pvalue, row.p_method  # 2 * 0.5**4
    (8, 0.5, 4, 0.125, 'exact (lattice)')
    >>> row.ci_method, row.verdict   # 4 differing questions cannot reach p < 0.05
    ('McNemar exact inverted', 'too few differing questions')
    """
    n_resamples = check_count(n_resamples, "resamples")
    n_permutations = check_count(n_permutations, "permutations")
    confidence = check_confidence(confidence)
    ci_method = check_ci_method(method)
    seed = _check_seed(seed)
    exact_max_n = check_exact_max_n(exact_max_n)
    sizes = sorted({check_count(s, "subsample size") for s in subsample_sizes})
    first = as_per_question_metrics(run_a).subset(questions)
    second = as_per_question_metrics(run_b).subset(questions)
    paired = pair_runs(first, second, metrics, allow_partial=allow_partial)
    alpha = 1.0 - confidence
    results = _compare_paired(
        paired,
        n_resamples,
        n_permutations,
        confidence,
        ci_method,
        seed,
        exact_max_n,
        alpha,
        sizes,
        clusters,
    )
    return Comparison(
        name_a=paired.name_a,
        name_b=paired.name_b,
        n_common=len(paired.ids),
        only_a=paired.only_a,
        only_b=paired.only_b,
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        ci_method=ci_method,
        exact_max_n=exact_max_n,
        metrics=tuple(results),
        questions=questions,
        clustered=clusters is not None,
    )


def _compare_paired(
    paired: PairedMetrics,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    ci_method: str,
    seed: int,
    exact_max_n: int,
    alpha: float,
    sizes: Sequence[int],
    clusters: Mapping[str, Hashable] | None = None,
) -> list[MetricComparison]:
    ids = np.array(paired.ids, dtype=object)
    masks: dict[str, np.ndarray] = {}
    for metric in paired.metrics:
        mask = ~np.isnan(paired.a[metric]) & ~np.isnan(paired.b[metric])
        if not mask.any():
            warnings.warn(
                f"metric {metric!r} is null for every common question in one run or the "
                "other; skipped",
                RagauditWarning,
                stacklevel=3,
            )
            continue
        masks[metric] = mask
    groups: dict[bytes, list[str]] = {}
    for metric, mask in masks.items():
        groups.setdefault(mask.tobytes(), []).append(metric)

    rows: dict[str, MetricComparison] = {}
    for members in groups.values():
        mask = masks[members[0]]
        a_values = np.column_stack([paired.a[m][mask] for m in members])
        b_values = np.column_stack([paired.b[m][mask] for m in members])
        diffs = b_values - a_values
        binary = [
            is_binary(a_values[:, j]) and is_binary(b_values[:, j]) for j in range(len(members))
        ]
        chosen = [
            choose_interval(a_values[:, j], b_values[:, j], method=ci_method)
            for j in range(len(members))
        ]
        unit = [is_unit(a_values[:, j]) and is_unit(b_values[:, j]) for j in range(len(members))]
        scored = [j for j, m in enumerate(chosen) if m == "score"]
        bounded = [j for j, m in enumerate(chosen) if m == "betting"]
        inverted = [j for j, m in enumerate(chosen) if m == "signflip"]
        booted = [j for j, m in enumerate(chosen) if m == "bootstrap"]
        intervals = group_intervals(
            diffs, scored, bounded, booted, n_resamples, confidence, ci_method, seed, mask, sizes
        )
        plain = [j for j in range(len(members)) if j not in inverted]
        found = group_pvalues(diffs[:, plain], n_permutations, exact_max_n, seed, mask)
        pvalues = dict(zip(plain, found, strict=True))
        for j, (subs, name, p_value) in group_signflip(
            diffs, inverted, [unit[j] for j in inverted], n_permutations, exact_max_n,
            confidence, seed, mask, sizes,
        ).items():  # fmt: skip
            intervals[j], pvalues[j] = (subs, name), p_value
        cluster_counts: dict[int, int] = {}
        if clusters is not None:  # whole clusters flip together, for every metric
            labels = np.array([str(clusters.get(q, f"(none) {q}")) for q in ids[mask]])
            for j, (subs, name, p_value, count) in group_clustered(
                diffs, unit, labels, n_permutations, confidence, seed, mask
            ).items():
                intervals[j], pvalues[j], cluster_counts[j] = (subs, name), p_value, count
        for column, metric in enumerate(members):
            pvalue, p_method, exact = pvalues[column]
            subsamples, interval_method = intervals[column]
            interval = subsamples[-1].confidence_interval
            table = None
            discordance = None
            if binary[column]:
                table = mcnemar_exact(a_values[:, column], b_values[:, column], ids[mask])
                discordance = (table.a_only + table.b_only) / table.n
            mde = paired_mde(a_values[:, column], b_values[:, column], alpha=alpha)
            differing = int(np.count_nonzero(diffs[:, column]))
            rows[metric] = MetricComparison(
                metric=metric,
                n=int(mask.sum()),
                mean_a=float(np.ascontiguousarray(a_values[:, column]).mean()),
                mean_b=float(np.ascontiguousarray(b_values[:, column]).mean()),
                statistic=subsamples[-1].statistic,
                confidence_interval=interval,
                pvalue=pvalue,
                exact=exact,
                verdict=verdict(pvalue, alpha, cluster_counts.get(column, differing)),
                excluded=int(mask.size - mask.sum()),
                mcnemar=table,
                discordance=discordance,
                mde=mde.mde,
                mde_assumption=mde.assumption
                + (" (ignores the clusters)" if clusters is not None else ""),
                subsamples=subsamples,
                ci_method=interval_method,
                p_method=p_method,
                n_differing=differing,
                skewness=(
                    None
                    if binary[column] or clusters is not None
                    else skewness(diffs[:, column])
                ),
            )
    return [rows[m] for m in paired.metrics if m in rows]
