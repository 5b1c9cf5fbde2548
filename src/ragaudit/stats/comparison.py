"""The result of a paired comparison: :class:`Comparison`, one :class:`MetricComparison` per
metric (computed by :func:`ragaudit.stats.compare.compare_runs`).

Frozen records with scipy's names (``statistic``, ``pvalue``, ``confidence_interval``), a
concise ``repr``, ``to_dict()`` (the ``compare --format json`` document), ``to_pandas()`` and,
through :class:`~ragaudit._present.Presentable`, ``to_report()`` and a notebook view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit._frames import records_frame
from ragaudit._present import Presentable, short_repr
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import (
    did_you_mean,
    resolve_saved_run_metrics,
    saved_run_metric_name,
)
from ragaudit.stats._group import MONTE_CARLO, PERCENTILE, SubsampleInterval
from ragaudit.stats.mcnemar import McNemarResult
from ragaudit.stats.resampling import ConfidenceInterval
from ragaudit.stats.verdicts import skew_note

__all__ = ["Comparison", "MetricComparison", "check_gates"]


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
        ``"McNemar exact inverted"``, ``"bootstrap percentile"`` or ``"bootstrap BCa"``.
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
    skewness : float or None
        Skewness of the non-zero differences of a fractional row without clusters
        (:func:`~ragaudit.stats.compare.skewness`); None for 0/1 rows (McNemar's test needs no
        symmetry), clustered rows and fewer than 3 differing questions.
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
    skewness: float | None = None

    @property
    def skew_warning(self) -> str | None:
        """The footnote of a small, skewed row (:func:`~ragaudit.stats.verdicts.skew_note`)."""
        return skew_note(self.metric, self.n, self.skewness)

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
            "skewness": self.skewness,
            "skew_warning": self.skew_warning,
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
    #: The analyses shown beside the comparison, by JSON key: ``clustered``
    #: (``ragaudit.diagnose.noise.ClusteredComparison``) and ``judge_noise``
    #: (``ragaudit.diagnose.judge_noise.JudgeNoiseComparison``), set by ``ragaudit.compare_runs``
    #: with ``cluster_by`` / ``judge_repeats``; empty otherwise
    noise: Mapping[str, Any] = field(default_factory=dict)
    #: judged@k of two saved runs (``ragaudit.diagnose.judged_beside.JudgedRuns``: each run's
    #: and the pair's, with the warnings), set by ``ragaudit.compare_runs``; else None
    judged: Any = None

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
            **{key: part.to_dict() for key, part in self.noise.items()},
            **({} if self.judged is None else {"judged": self.judged.to_dict()}),
        }

    def regressions(self, metrics: Sequence[str] | None = None) -> list[MetricComparison]:
        """Rows where run B is *significantly* worse than run A (the CI regression gate).

        Only a ``SIGNIFICANT`` verdict with ``B - A < 0`` counts: "no evidence" of a change is
        not a regression, and a borderline one does not fail a gate.  ``metrics`` (default:
        every compared metric) are spelled as for ``compare -m``; a metric that was not
        compared is an :class:`InputError` listing those that were.

        >>> from ragaudit.data.per_question import PerQuestionMetrics
        >>> from ragaudit.stats.compare import compare_runs
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


def check_gates(
    gates: Sequence[str], compared: Sequence[str] | None, held: Sequence[str] | None = None
) -> None:
    """Refuse a regression gate that names no compared metric, before any comparison is made.

    ``compared`` are the ``-m`` names (None: every metric both runs hold, then ``held``, the
    runs' metric names once read, decides; before that only ``-m`` can be checked).  A gate
    matches a metric under any spelling :func:`~ragaudit.metrics.saved_run_metric_name`
    accepts; the message suggests the closest compared name.

    >>> check_gates(["nDCG@k"], ["ndcg@k", "correct"])
    >>> check_gates(["correctness"], ["ndcg@k", "correct"])
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: --fail-if-worse: 'correctness' is not a compared metric; \
did you mean 'correct'? compared: ndcg@k, correct
    >>> check_gates(["correctness"], None)          # every metric: known once the runs are read
    >>> check_gates(["correctness"], None, ["hit@k", "correct"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: --fail-if-worse: 'correctness' is not a compared ...
    """
    if not gates:
        return
    if compared is None:
        if held is None:
            return
        compared = list(held)
    names = list(dict.fromkeys(compared))

    def spelled(name: str) -> str:
        return name if name in names else (saved_run_metric_name(name) or name)

    canonical = {spelled(name) for name in names}
    for gate in gates:
        if spelled(gate) not in canonical:
            raise InputError(
                f"--fail-if-worse: {gate!r} is not a compared metric; "
                f"{did_you_mean(gate, names)}compared: {', '.join(names) or 'none'}"
            )
