"""Several runs compared on one metric, Holm-adjusted: every pair (``ragaudit compare --all``)
or each run against the first (``ragaudit evaluate --run A --run B ...``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any

import numpy as np

from ragaudit._frames import records_frame
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.metrics.registry import resolve_saved_run_metrics
from ragaudit.stats._inputs import PerQuestionMetrics, as_per_question_metrics, unique_names
from ragaudit.stats.compare import MetricComparison, compare_runs
from ragaudit.stats.multiple import holm_bonferroni
from ragaudit.stats.resampling import check_confidence

__all__ = ["PAIRS", "PairwiseMatrix", "compare_all", "compare_all_metrics"]

#: Which pairs :func:`compare_all` compares: every pair, or each run against the first.
PAIRS = ("all", "first")

#: The keys of a pair's row in ``compare --all --format json`` (those of ``compare``'s rows).
_PAIR_KEYS = ("n", "diff", "ci_low", "ci_high", "p_value", "p_method", "ci_method", "verdict")


@dataclass(frozen=True)
class PairwiseMatrix:
    """Runs compared in pairs on one metric, with Holm-Bonferroni adjusted p-values.

    Attributes
    ----------
    metric : str
    runs : tuple of str
        Run names in directory (file name) order.
    means : tuple of float
        Each run's mean of the metric on its own non-null questions.
    pairs : tuple of (int, int, MetricComparison)
        ``(i, j, comparison)`` with ``diff = run j - run i``, for every ``i < j`` (or, when
        ``compared == "first"``, for ``i = 0`` only).
    adjusted_pvalues : tuple of float
        Holm-Bonferroni adjusted over ``pairs`` (the family), aligned with ``pairs``.
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
    compared: str = "all"
    #: judged@k of the saved runs compared on a retrieval metric
    #: (``ragaudit.diagnose.judged_beside.JudgedRuns``), set by ``compare_directory``; else None
    judged: Any = None

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
            "pairs_compared": self.compared,
            "runs": [
                {"name": name, "mean": mean}
                for name, mean in zip(self.runs, self.means, strict=True)
            ],
            "pairs": [
                {
                    "run_a": self.runs[i],
                    "run_b": self.runs[j],
                    **{key: row_dict[key] for key in _PAIR_KEYS},
                    "p_holm": adjusted,
                }
                for (i, j, row), adjusted in zip(self.pairs, self.adjusted_pvalues, strict=True)
                for row_dict in [row.to_dict()]
            ],
            "distinguishable": [list(pair) for pair in self.distinguishable],
            **({} if self.judged is None else {"judged": self.judged.to_dict()}),
        }

    def to_pandas(self) -> Any:
        """One row per pair of runs (diff = run_b - run_a, Holm-adjusted p); needs the
        ``pandas`` extra."""
        return records_frame(self.to_dict()["pairs"])


def compare_all(
    runs: Sequence[PerQuestionMetrics | SavedRun],
    metric: str,
    *,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    method: str = "auto",
    seed: int = 0,
    exact_max_n: int = 20,
    allow_partial: bool = False,
    pairs: str = "all",
) -> PairwiseMatrix:
    """Compare runs in pairs on one metric: every pair, or each run against the first.

    ``runs`` are loaded runs (``ragaudit compare --all DIR`` reads the directory with
    :func:`ragaudit.data.per_question_files.read_run_directory`; stats reads no files).

    Each pair is a :func:`compare_runs` on ``metric``; the pairwise permutation p-values are
    adjusted with :func:`~ragaudit.stats.holm_bonferroni` over the pairs compared, and a pair
    is *distinguishable* when its adjusted p-value is below ``alpha = 1 - confidence`` and its
    interval excludes 0.  ``pairs="all"`` compares every pair (:math:`m = r(r-1)/2` tests for
    *r* runs); ``pairs="first"`` each run against the first (:math:`m = r - 1`).

    Examples
    --------
    >>> runs = [PerQuestionMetrics(name, {f"q{i}": {"hit": float(i < k)} for i in range(30)})
    ...         for name, k in (("base", 10), ("same", 10), ("better", 25))]
    >>> matrix = compare_all(runs, "hit", n_resamples=200)
    >>> matrix.distinguishable
    [('base', 'better'), ('same', 'better')]
    >>> [(i, j) for i, j, _ in compare_all(runs, "hit", n_resamples=200, pairs="first").pairs]
    [(0, 1), (0, 2)]
    """
    if pairs not in PAIRS:
        raise InputError(f"pairs: expected one of {', '.join(PAIRS)}, found {pairs!r}")
    if isinstance(runs, str | PathLike):
        raise InputError(
            f"compare_all: expected a list of loaded runs, found the path {str(runs)!r}; read "
            "a directory with ragaudit.data.per_question_files.read_run_directory"
        )
    loaded = [as_per_question_metrics(run) for run in runs]
    if len(loaded) < 2:
        raise InputError(f"compare --all: expected at least 2 runs, found {len(loaded)}")
    names = unique_names(loaded)
    held = list(dict.fromkeys(m for run in loaded for m in run.metrics))
    metric = resolve_saved_run_metrics([metric], held)[0]
    compared: list[tuple[int, int, MetricComparison]] = []
    for i in range(1 if pairs == "first" else len(loaded)):
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
            compared.append((i, j, result.metrics[0]))
    adjusted = holm_bonferroni([row.pvalue for _, _, row in compared])
    means = []
    for run in loaded:
        values = [row.get(metric) for row in run.values.values()]
        finite = [v for v in values if v is not None]
        means.append(float(np.mean(finite)) if finite else float("nan"))
    return PairwiseMatrix(
        metric=metric,
        runs=tuple(names),
        means=tuple(means),
        pairs=tuple(compared),
        adjusted_pvalues=tuple(float(p) for p in adjusted),
        alpha=round(1.0 - check_confidence(confidence), 12),
        seed=seed,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        compared=pairs,
    )


def compare_all_metrics(
    runs: Sequence[PerQuestionMetrics | SavedRun],
    metrics: Sequence[str],
    *,
    pairs: str = "all",
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairwiseMatrix]:
    """:func:`compare_all` for each of ``metrics`` in turn, with the same pairs and seed: the
    table ``ragaudit evaluate --run A --run B ...`` prints (one Holm family per metric).

    Examples
    --------
    >>> runs = [PerQuestionMetrics(name, {f"q{i}": {"hit": float(i < k), "mrr": float(i < k)}
    ...                                   for i in range(30)})
    ...         for name, k in (("base", 10), ("better", 25))]
    >>> [m.metric for m in compare_all_metrics(runs, ["hit", "mrr"], pairs="first")]
    ['hit', 'mrr']
    """
    return [
        compare_all(runs, metric, pairs=pairs, confidence=confidence, seed=seed)
        for metric in metrics
    ]
