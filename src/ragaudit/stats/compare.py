"""Paired comparison of two evaluation runs, metric by metric ("is the improvement real?").

For every metric the questions are paired by id, ``null`` values are dropped pairwise, and
three things are reported: a confidence interval for ``mean(B) - mean(A)``, a two-sided
paired permutation p-value, and, for 0/1 metrics, the paired 2x2 table with McNemar's exact
test and the ids of the questions that differ.  Every row names the method behind its
interval and its p-value.

The verdict is the exact test alone (:func:`~ragaudit.stats.verdict`); the interval comes from
the one policy (:func:`~ragaudit.stats.policy.choose_interval`): Tango for 0/1 metrics, else
the verdict's sign-flip test inverted (:mod:`ragaudit.stats.signflip_interval`), which excludes
0 exactly when the verdict is SIGNIFICANT; with ``clusters`` the cluster sign-flip test
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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit._frames import records_frame
from ragaudit._present import Presentable, short_repr
from ragaudit._validate import check_int
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.metrics.registry import resolve_saved_run_metrics
from ragaudit.stats._group import (
    MONTE_CARLO,
    PERCENTILE,
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
from ragaudit.stats.mcnemar import McNemarResult, mcnemar_exact
from ragaudit.stats.mde import paired_mde
from ragaudit.stats.options import CI_METHODS
from ragaudit.stats.permutation import check_exact_max_n
from ragaudit.stats.policy import check_ci_method, choose_interval, is_binary, is_unit
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence, check_count
from ragaudit.stats.verdicts import verdict

__all__ = [
    "CI_METHODS",
    "Comparison",
    "MetricComparison",
    "SubsampleInterval",
    "compare_runs",
]


@dataclass(frozen=True, repr=False)
class MetricComparison:
    """One metric of a paired comparison.

    Attributes
    ----------
    metric : str
    n : int
        Questions with a non-null value in both runs.
    mean_a, mean_b : float
    statistic : float
        ``mean_b - mean_a`` (the mean per-question difference).
    confidence_interval : ConfidenceInterval
        Interval of ``statistic`` (see ``ci_method``).
    pvalue : float
        Two-sided paired permutation p-value.
    exact : bool
        Whether the p-value is exact.
    verdict : str
        ``"SIGNIFICANT"``, ``"borderline"``, ``"no evidence"`` or
        ``"too few differing questions"``.
    ci_method : str
        ``"Tango score"``, ``"bootstrap percentile"`` or ``"bootstrap BCa"``.
    p_method : str
        ``"exact (lattice)"``, ``"exact (enumeration)"``, ``"exact (distinct values)"`` or
        ``"Monte Carlo"``.
    n_differing : int
        Questions whose difference is not zero.
    excluded : int
        Common questions dropped because the metric was null in either run.
    mcnemar : McNemarResult or None
        The paired 2x2 table (0/1 metrics only).
    discordance : float or None
        0/1 metrics only: share of questions where the two runs differ.
    mde : float or None
        The minimum detectable effect of this comparison (80% power at alpha; None when nothing
        is detectable), under ``mde_assumption`` (:func:`~ragaudit.stats.mde.paired_mde`).
        Observed (post-hoc) power is not reported: it is a function of p (Hoenig & Heisey
        2001).
    mde_assumption : str
    subsamples : tuple of SubsampleInterval
        Intervals on the first 10, 20, ... questions (sorted by id) and on all of them.
    """

    metric: str
    n: int
    mean_a: float
    mean_b: float
    statistic: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    exact: bool
    verdict: str
    excluded: int = 0
    mcnemar: McNemarResult | None = None
    discordance: float | None = None
    mde: float | None = None
    mde_assumption: str = ""
    subsamples: tuple[SubsampleInterval, ...] = ()
    ci_method: str = PERCENTILE
    p_method: str = MONTE_CARLO
    n_differing: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (keys of the ``compare --format json`` output)."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": self.statistic,
            "ci_low": self.confidence_interval.low,
            "ci_high": self.confidence_interval.high,
            "ci_method": self.ci_method,
            "p_value": self.pvalue,
            "p_exact": self.exact,
            "p_method": self.p_method,
            "n_differing": self.n_differing,
            "verdict": self.verdict,
            "excluded_null": self.excluded,
            "mde": self.mde,
            "mde_assumption": self.mde_assumption,
        }
        if self.mcnemar is not None:
            out["mcnemar"] = {
                "a_only": self.mcnemar.a_only,
                "b_only": self.mcnemar.b_only,
                "both": self.mcnemar.both,
                "neither": self.mcnemar.neither,
                "p_value": self.mcnemar.pvalue,
                "discordant_ids": list(self.mcnemar.discordant_ids),
            }
            out["discordance"] = self.discordance
        out["subsamples"] = [
            {
                "n": s.n,
                "diff": s.statistic,
                "ci_low": s.confidence_interval.low,
                "ci_high": s.confidence_interval.high,
                "width": s.width,
            }
            for s in self.subsamples
        ]
        return out

    def line(self) -> str:
        """One line: ``metric diff [low, high] p verdict (n)``."""
        ci = self.confidence_interval
        return (
            f"{self.metric}: {self.statistic:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}] "
            f"p={self.pvalue:.3g} {self.verdict} (n={self.n})"
        )

    def __repr__(self) -> str:
        return f"MetricComparison({self.line()})"


@dataclass(frozen=True, repr=False)
class Comparison(Presentable):
    """A paired comparison of run B against run A (``diff = B - A``).

    ``print(comparison)`` shows one line per metric; ``to_report()`` is what ``ragaudit
    compare`` prints, ``to_dict()`` its JSON, ``to_pandas()`` a table, and a notebook shows
    it inline.
    """

    name_a: str
    name_b: str
    n_common: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    seed: int
    n_resamples: int
    n_permutations: int
    confidence: float
    ci_method: str
    exact_max_n: int
    metrics: tuple[MetricComparison, ...] = field(default=())
    questions: str = "all"
    clustered: bool = False
    #: ``ragaudit.diagnose.confounding.ConfigDifferences`` of two saved runs, else None (set by
    #: ``ragaudit.compare_runs``; typed ``Any`` because diagnose sits above stats)
    config_differences: Any = None

    @property
    def alpha(self) -> float:
        """``1 - confidence``: the significance level of the verdicts."""
        return round(1.0 - self.confidence, 12)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the ``compare --format json`` document)."""
        return {
            "run_a": self.name_a,
            "run_b": self.name_b,
            "seed": self.seed,
            "resamples": self.n_resamples,
            "permutations": self.n_permutations,
            "exact_permutation_max_n": self.exact_max_n,
            "confidence": self.confidence,
            "alpha": self.alpha,
            "ci": self.ci_method,
            "n_common": self.n_common,
            "questions": self.questions,
            "clustered": self.clustered,
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "metrics": [m.to_dict() for m in self.metrics],
            **(
                {}
                if self.config_differences is None
                else {"config_differences": self.config_differences.to_dict()}
            ),
        }

    def regressions(self, metrics: Sequence[str] | None = None) -> list[MetricComparison]:
        """Rows where run B is *significantly* worse than run A (the CI regression gate).

        Only a ``SIGNIFICANT`` verdict with ``B - A < 0`` counts: "no evidence" of a change is
        not a regression, and a borderline one does not fail a gate.  ``metrics`` (default:
        every compared metric) are spelled as for ``compare -m``; a metric that was not
        compared is an :class:`InputError` listing those that were.

        >>> a = PerQuestionMetrics("A", {f"q{i}": {"hit": 1.0} for i in range(8)})
        >>> b = PerQuestionMetrics("B", {f"q{i}": {"hit": float(i < 1)} for i in range(8)})
        >>> [row.metric for row in compare_runs(a, b).regressions(["hit"])]  # p = 2/2^7
        ['hit']
        """
        by_name = {row.metric: row for row in self.metrics}
        wanted = list(by_name) if metrics is None else list(metrics)
        gated = resolve_saved_run_metrics(wanted, list(by_name))
        missing = [g for g in gated if g not in by_name]
        if missing:
            raise InputError(
                f"{', '.join(missing)} not compared; compared metrics: "
                f"{', '.join(by_name) or 'none'}"
            )
        return [
            by_name[g]
            for g in gated
            if by_name[g].verdict == "SIGNIFICANT" and by_name[g].statistic < 0
        ]

    def to_pandas(self) -> Any:
        """One row per metric (index ``metric``): n, means, diff, interval, p, verdict.

        Needs the ``pandas`` extra.
        """
        flat = [
            {k: v for k, v in m.to_dict().items() if not isinstance(v, dict | list)}
            for m in self.metrics
        ]
        return records_frame(flat, index="metric")

    def __repr__(self) -> str:
        return short_repr(
            f"Comparison({self.name_b!r} - {self.name_a!r}, n_common={self.n_common}, "
            f"questions={self.questions!r}, seed={self.seed})",
            [m.line() for m in self.metrics],
            limit=12,
        )


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
    interval is Tango's score interval for 0/1 metrics
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
        ``auto``/``score``: Tango for 0/1 metrics, the sign-flip test inverted otherwise;
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
    ('Tango score', 'too few differing questions')
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
            )
    return [rows[m] for m in paired.metrics if m in rows]
