"""Paired comparison of two evaluation runs, metric by metric ("is the improvement real?").

For every metric the questions are paired by id, ``null`` values are dropped pairwise, and
three things are reported: a paired bootstrap confidence interval for ``mean(B) - mean(A)``,
a two-sided paired permutation p-value, and, for 0/1 metrics, the paired 2x2 table with
McNemar's exact test and the ids of the questions that differ.

Verdicts (``alpha = 1 - confidence``):

* ``SIGNIFICANT``: ``p < alpha`` **and** the interval excludes 0;
* ``borderline``: exactly one of those two holds, or ``alpha <= p < 2 * alpha``;
* ``no evidence``: otherwise.

Randomness: every group of metrics that share the same set of non-null questions shares one
bootstrap index matrix and one set of sign flips (their intervals are coherent), drawn from a
generator seeded with ``(seed, crc32 of the question set, purpose)``.  A metric's numbers
therefore do not depend on which other metrics are compared alongside it, and the same inputs
give byte-identical output.
"""

from __future__ import annotations

import os
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.stats._inputs import (
    PairedMetrics,
    PerQuestionMetrics,
    as_per_question_metrics,
    pair_runs,
    read_per_question_metrics,
)
from ragaudit.stats.mcnemar import McNemarResult, is_binary, mcnemar_exact
from ragaudit.stats.multiple import holm_bonferroni
from ragaudit.stats.power import mcnemar_power, observed_power
from ragaudit.stats.resampling import (
    MAX_EXACT,
    ConfidenceInterval,
    _bootstrap_means,
    _interval,
    _permutation_pvalues,
    _snap_constant,
    check_confidence,
    check_count,
    check_method,
)

__all__ = [
    "Comparison",
    "MetricComparison",
    "PairwiseMatrix",
    "SubsampleInterval",
    "compare_all",
    "compare_runs",
    "verdict",
]

SIGNIFICANT = "SIGNIFICANT"
BORDERLINE = "borderline"
NO_EVIDENCE = "no evidence"
_BOOTSTRAP, _PERMUTATION, _SUBSAMPLE = 0, 1, 2


def verdict(pvalue: float, low: float, high: float, alpha: float) -> str:
    """Classify a paired comparison (see the module docstring for the rule).

    Examples
    --------
    >>> verdict(0.001, 0.05, 0.2, 0.05), verdict(0.03, 0.0, 0.1, 0.05)
    ('SIGNIFICANT', 'borderline')
    >>> verdict(0.08, -0.01, 0.1, 0.05), verdict(0.247, 0.0, 0.083, 0.05)
    ('borderline', 'no evidence')
    """
    small_p = pvalue < alpha
    excludes_zero = low > 0 or high < 0
    if small_p and excludes_zero:
        return SIGNIFICANT
    if small_p or excludes_zero or pvalue < 2 * alpha:
        return BORDERLINE
    return NO_EVIDENCE


@dataclass(frozen=True)
class SubsampleInterval:
    """Bootstrap interval of the mean difference on the first ``n`` questions (by id)."""

    n: int
    statistic: float
    confidence_interval: ConfidenceInterval

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.confidence_interval.high - self.confidence_interval.low


@dataclass(frozen=True)
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
        Paired bootstrap interval of ``statistic``.
    pvalue : float
        Two-sided paired permutation p-value.
    exact : bool
        Whether the p-value enumerated every sign pattern.
    verdict : str
        ``"SIGNIFICANT"``, ``"borderline"`` or ``"no evidence"``.
    excluded : int
        Common questions dropped because the metric was null in either run.
    mcnemar : McNemarResult or None
        The paired 2x2 table (0/1 metrics only).
    discordance, observed_effect, power : float or None
        0/1 metrics only: share of questions where the systems differ, ``|diff|``, and the
        exact power McNemar's test had to detect an effect of that size at that discordance.
    power_at_discordance : float or None
        0/1 metrics only: the exact power to detect the largest effect this discordance
        allows (every discordant question favouring one system, delta = discordance).  When
        even this is low, no result of the comparison could have been significant.
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
    observed_effect: float | None = None
    power: float | None = None
    power_at_discordance: float | None = None
    subsamples: tuple[SubsampleInterval, ...] = ()

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
            "p_value": self.pvalue,
            "p_exact": self.exact,
            "verdict": self.verdict,
            "excluded_null": self.excluded,
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
            out["power"] = {
                "discordance": self.discordance,
                "effect": self.observed_effect,
                "power": self.power,
                "power_at_discordance": self.power_at_discordance,
            }
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


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of run B against run A (``diff = B - A``)."""

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
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "metrics": [m.to_dict() for m in self.metrics],
        }


def _group_rng(seed: int, mask: np.ndarray, purpose: int, extra: int = 0) -> np.random.Generator:
    key = zlib.crc32(np.packbits(mask).tobytes() + mask.size.to_bytes(8, "little"))
    return np.random.default_rng([seed, key, purpose, extra])


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed: expected an integer >= 0, found {seed!r}")
    return int(seed)


RunLike = PerQuestionMetrics | SavedRun | str | os.PathLike[str]


def _load(run: RunLike) -> PerQuestionMetrics:
    return as_per_question_metrics(run)


def compare_runs(
    run_a: RunLike,
    run_b: RunLike,
    metrics: Sequence[str] | None = None,
    *,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    method: str = "percentile",
    seed: int = 0,
    exact_max_n: int = 20,
    allow_partial: bool = False,
    subsample_sizes: Sequence[int] = (10, 20),
    questions: str = "all",
) -> Comparison:
    r"""Compare run B with run A question by question, for every metric.

    For metric *j* with non-null paired values on questions :math:`i \in S_j`,
    :math:`d_i = b_i - a_i`, the statistic is :math:`\bar d = \frac1{|S_j|}\sum d_i`; the
    interval is a paired bootstrap (:func:`~ragaudit.stats.paired_bootstrap`), the p-value a
    paired sign-flip permutation test (:func:`~ragaudit.stats.paired_permutation_test`),
    exact up to ``exact_max_n`` questions.  0/1 metrics add McNemar's exact test and the
    exact power of that test for the observed effect at the observed discordance.

    Parameters
    ----------
    run_a, run_b : SavedRun, PerQuestionMetrics or path
        Saved runs (loaded or as files) or per-question metric files (see
        :func:`~ragaudit.data.per_question.read_per_question_metrics`).
    metrics : sequence of str, optional
        Default: every metric present in both runs.
    n_resamples, n_permutations : int, default 10000
    confidence : float in (0, 1), default 0.95
    method : {"percentile", "bca"}, default "percentile"
    seed : int >= 0, default 0
    exact_max_n : int, default 20
    allow_partial : bool, default False
        Allow comparing runs that share fewer than half of their questions.
    questions : {"all", "answerable", "unanswerable"}, default "all"
        Which questions of saved runs to compare (e.g. the answerable ones, as the funnel).
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
    >>> row.n, row.statistic, row.mcnemar.b_only, row.pvalue, row.verdict   # 2 * 0.5**4
    (8, 0.5, 4, 0.125, 'borderline')
    """
    n_resamples = check_count(n_resamples, "resamples")
    n_permutations = check_count(n_permutations, "permutations")
    confidence = check_confidence(confidence)
    ci_method = check_method(method)
    seed = _check_seed(seed)
    if isinstance(exact_max_n, bool) or not 0 <= exact_max_n <= MAX_EXACT:
        raise InputError(
            f"exact_max_n: expected an integer between 0 and {MAX_EXACT}, found {exact_max_n!r}"
        )
    sizes = sorted({check_count(s, "subsample size") for s in subsample_sizes})
    first, second = _load(run_a).subset(questions), _load(run_b).subset(questions)
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
    method = check_method(ci_method)
    for members in groups.values():
        mask = masks[members[0]]
        a_values = np.column_stack([paired.a[m][mask] for m in members])
        b_values = np.column_stack([paired.b[m][mask] for m in members])
        diffs = b_values - a_values
        theta_b = _bootstrap_means(diffs, n_resamples, _group_rng(seed, mask, _BOOTSTRAP))
        low, high = _snap_constant(diffs, *_interval(theta_b, diffs, confidence, method))
        pvalues, _, exact = _permutation_pvalues(
            diffs, n_permutations, _group_rng(seed, mask, _PERMUTATION), exact_max_n
        )
        subsamples = _subsample_intervals(
            diffs, sizes, n_resamples, confidence, method, seed, mask, (low, high)
        )
        for column, metric in enumerate(members):
            statistic = float(diffs[:, column].mean())
            pvalue = float(min(1.0, pvalues[column]))
            interval = ConfidenceInterval(float(low[column]), float(high[column]))
            binary = None
            discordance = effect = power = power_max = None
            if is_binary(a_values[:, column]) and is_binary(b_values[:, column]):
                binary = mcnemar_exact(a_values[:, column], b_values[:, column], ids[mask])
                discordance, effect, power = observed_power(binary, alpha=alpha)
                power_max = mcnemar_power(binary.n, discordance, discordance, alpha=alpha)
            rows[metric] = MetricComparison(
                metric=metric,
                n=int(mask.sum()),
                mean_a=float(a_values[:, column].mean()),
                mean_b=float(b_values[:, column].mean()),
                statistic=statistic,
                confidence_interval=interval,
                pvalue=pvalue,
                exact=exact,
                verdict=verdict(pvalue, interval.low, interval.high, alpha),
                excluded=int(mask.size - mask.sum()),
                mcnemar=binary,
                discordance=discordance,
                observed_effect=effect,
                power=power,
                power_at_discordance=power_max,
                subsamples=tuple(s[column] for s in subsamples),
            )
    return [rows[m] for m in paired.metrics if m in rows]


def _subsample_intervals(
    diffs: np.ndarray,
    sizes: Sequence[int],
    n_resamples: int,
    confidence: float,
    method: Any,
    seed: int,
    mask: np.ndarray,
    full_interval: tuple[np.ndarray, np.ndarray],
) -> list[list[SubsampleInterval]]:
    """Per size (ascending, then all questions): one interval per column of ``diffs``."""
    n = diffs.shape[0]
    out: list[list[SubsampleInterval]] = []
    for size in [s for s in sizes if s < n] + [n]:
        part = diffs[:size]  # the first `size` questions in id order: deterministic, no draw
        if size == n:
            low, high = full_interval  # the main interval, already computed
        else:
            rng = _group_rng(seed, mask, _SUBSAMPLE, size)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RagauditWarning)  # BCa fallbacks on tiny sets
                theta_b = _bootstrap_means(part, n_resamples, rng)
                low, high = _snap_constant(part, *_interval(theta_b, part, confidence, method))
        out.append(
            [
                SubsampleInterval(
                    size,
                    float(part[:, j].mean()),
                    ConfidenceInterval(float(low[j]), float(high[j])),
                )
                for j in range(diffs.shape[1])
            ]
        )
    return out


@dataclass(frozen=True)
class PairwiseMatrix:
    """Every pair of runs compared on one metric, with Holm-Bonferroni adjusted p-values.

    Attributes
    ----------
    metric : str
    runs : tuple of str
        Run names in directory (file name) order.
    means : tuple of float
        Each run's mean of the metric on its own non-null questions.
    pairs : tuple of (int, int, MetricComparison)
        ``(i, j, comparison)`` with ``diff = run j - run i``, for every ``i < j``.
    adjusted_pvalues : tuple of float
        Holm-Bonferroni adjusted, aligned with ``pairs``.
    alpha : float
    seed, n_resamples, n_permutations : int
    confidence : float
    """

    metric: str
    runs: tuple[str, ...]
    means: tuple[float, ...]
    pairs: tuple[tuple[int, int, MetricComparison], ...]
    adjusted_pvalues: tuple[float, ...]
    alpha: float
    seed: int
    n_resamples: int
    n_permutations: int
    confidence: float

    @property
    def distinguishable(self) -> list[tuple[str, str]]:
        """Pairs whose Holm-adjusted p-value is below alpha and whose interval excludes 0."""
        return [
            (self.runs[i], self.runs[j])
            for (i, j, row), adjusted in zip(self.pairs, self.adjusted_pvalues, strict=True)
            if adjusted < self.alpha
            and (row.confidence_interval.low > 0 or row.confidence_interval.high < 0)
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the ``compare --all --format json`` document)."""
        return {
            "metric": self.metric,
            "seed": self.seed,
            "resamples": self.n_resamples,
            "permutations": self.n_permutations,
            "confidence": self.confidence,
            "alpha": self.alpha,
            "runs": [
                {"name": name, "mean": mean}
                for name, mean in zip(self.runs, self.means, strict=True)
            ],
            "pairs": [
                {
                    "run_a": self.runs[i],
                    "run_b": self.runs[j],
                    "n": row.n,
                    "diff": row.statistic,
                    "ci_low": row.confidence_interval.low,
                    "ci_high": row.confidence_interval.high,
                    "p_value": row.pvalue,
                    "p_holm": adjusted,
                }
                for (i, j, row), adjusted in zip(self.pairs, self.adjusted_pvalues, strict=True)
            ],
            "distinguishable": [list(pair) for pair in self.distinguishable],
        }


def compare_all(
    runs: str | os.PathLike[str] | Sequence[PerQuestionMetrics | SavedRun],
    metric: str,
    *,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    method: str = "percentile",
    seed: int = 0,
    exact_max_n: int = 20,
    allow_partial: bool = False,
) -> PairwiseMatrix:
    """Compare every pair of runs (a directory of ``*.json``/``*.jsonl`` files) on one metric.

    Each pair is a :func:`compare_runs` on ``metric``; the pairwise permutation p-values are
    adjusted with :func:`~ragaudit.stats.holm_bonferroni`, and a pair is *distinguishable*
    when its adjusted p-value is below ``alpha = 1 - confidence`` and its interval excludes 0.

    Examples
    --------
    >>> runs = [PerQuestionMetrics(name, {f"q{i}": {"hit": float(i < k)} for i in range(30)})
    ...         for name, k in (("base", 10), ("same", 10), ("better", 25))]
    >>> matrix = compare_all(runs, "hit", n_resamples=200)
    >>> matrix.distinguishable
    [('base', 'better'), ('same', 'better')]
    """
    loaded = (
        _load_directory(runs)
        if isinstance(runs, str | os.PathLike)
        else [as_per_question_metrics(run) for run in runs]
    )
    if len(loaded) < 2:
        raise InputError(f"compare --all: expected at least 2 runs, found {len(loaded)}")
    names = _unique_names(loaded)
    pairs: list[tuple[int, int, MetricComparison]] = []
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            result = compare_runs(
                loaded[i],
                loaded[j],
                [metric],
                n_resamples=n_resamples,
                n_permutations=n_permutations,
                confidence=confidence,
                method=method,
                seed=seed,
                exact_max_n=exact_max_n,
                allow_partial=allow_partial,
                subsample_sizes=(),
            )
            if not result.metrics:
                raise InputError(
                    f"metric {metric!r} is null everywhere for runs {names[i]!r} and {names[j]!r}"
                )
            pairs.append((i, j, result.metrics[0]))
    adjusted = holm_bonferroni([row.pvalue for _, _, row in pairs])
    means = []
    for run in loaded:
        values = [row.get(metric) for row in run.values.values()]
        finite = [v for v in values if v is not None]
        means.append(float(np.mean(finite)) if finite else float("nan"))
    return PairwiseMatrix(
        metric=metric,
        runs=tuple(names),
        means=tuple(means),
        pairs=tuple(pairs),
        adjusted_pvalues=tuple(float(p) for p in adjusted),
        alpha=round(1.0 - check_confidence(confidence), 12),
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
    )


def _load_directory(directory: str | os.PathLike[str]) -> list[PerQuestionMetrics]:
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"{folder}: expected a directory of saved runs, found no directory")
    files = sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl")
    )
    if len(files) < 2:
        raise InputError(
            f"{folder}: expected at least 2 saved runs (*.json or *.jsonl), found {len(files)}"
        )
    return [read_per_question_metrics(p) for p in files]


def _unique_names(runs: Sequence[PerQuestionMetrics]) -> list[str]:
    names = [run.name for run in runs]
    if len(set(names)) == len(names):
        return names
    return [Path(run.path).name if run.path else f"{run.name}#{i}" for i, run in enumerate(runs)]
