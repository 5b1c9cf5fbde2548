"""Per-group kernels of :func:`~ragaudit.stats.compare_runs`: intervals and p-values.

A *group* is the set of metrics that are non-null on the same questions.  Its metrics share
one bootstrap index matrix and one set of random sign flips, drawn from a generator seeded
with ``(seed, crc32 of the question set, purpose)``; each metric (column) is then computed on
its own, so a metric's numbers never depend on the other metrics of the group.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragaudit.exceptions import RagauditWarning
from ragaudit.stats.bounded import METHOD as BETTING
from ragaudit.stats.bounded import bounded_mean_bounds
from ragaudit.stats.cluster_signflip import cluster_signflip
from ragaudit.stats.intervals import mcnemar_exact_bounds
from ragaudit.stats.permutation import (
    EXACT_VALUES,
    MONTE_CARLO,
    exact_pvalue,
    monte_carlo_pvalues,
)
from ragaudit.stats.resampling import (
    CIMethod,
    ConfidenceInterval,
    _interval,
    _snap_constant,
    bootstrap_means,
)
from ragaudit.stats.signflip_interval import FEW_METHOD as SIGNFLIP_FEW
from ragaudit.stats.signflip_interval import METHOD as SIGNFLIP
from ragaudit.stats.signflip_interval import exact_affordable, flip_sums, inverted_interval

__all__ = [
    "BCA",
    "BETTING",
    "PERCENTILE",
    "SCORE",
    "SIGNFLIP",
    "SIGNFLIP_FEW",
    "SubsampleInterval",
    "group_clustered",
    "group_intervals",
    "group_pvalues",
    "group_signflip",
]

_BOOTSTRAP, _PERMUTATION, _SUBSAMPLE = 0, 1, 2
SCORE, PERCENTILE, BCA = "McNemar exact inverted", "bootstrap percentile", "bootstrap BCa"


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


def _group_rng(seed: int, mask: np.ndarray, purpose: int, extra: int = 0) -> np.random.Generator:
    key = zlib.crc32(np.packbits(mask).tobytes() + mask.size.to_bytes(8, "little"))
    return np.random.default_rng([seed, key, purpose, extra])


def group_pvalues(
    diffs: np.ndarray, n_permutations: int, exact_max_n: int, seed: int, mask: np.ndarray
) -> list[tuple[float, str, bool]]:
    """``(p, method, exact)`` per column: exact where affordable, else shared sign flips."""
    out: list[tuple[float, str, bool] | None] = []
    for j in range(diffs.shape[1]):
        exact = exact_pvalue(np.ascontiguousarray(diffs[:, j]), exact_max_n)
        out.append(None if exact is None else (float(exact[0]), exact[1], True))
    random = [j for j, value in enumerate(out) if value is None]
    if random:
        rng = _group_rng(seed, mask, _PERMUTATION)
        mc = monte_carlo_pvalues(diffs[:, random], n_permutations, rng)
        for j, p in zip(random, mc, strict=True):
            out[j] = (float(min(1.0, p)), MONTE_CARLO, False)
    return [value for value in out if value is not None]


def _column_intervals(
    part: np.ndarray, size: int, low: np.ndarray, high: np.ndarray
) -> list[SubsampleInterval]:
    """One :class:`SubsampleInterval` per column of ``part`` (the mean and its bounds)."""
    return [
        SubsampleInterval(
            size,
            float(np.ascontiguousarray(part[:, k]).mean()),
            ConfidenceInterval(float(low[k]), float(high[k])),
        )
        for k in range(part.shape[1])
    ]


def group_intervals(
    diffs: np.ndarray,
    scored: Sequence[int],
    bounded: Sequence[int],
    booted: Sequence[int],
    n_resamples: int,
    confidence: float,
    ci_method: str,
    seed: int,
    mask: np.ndarray,
    sizes: Sequence[int],
) -> dict[int, tuple[tuple[SubsampleInterval, ...], str]]:
    """Per column: intervals on the first 10, 20, ... questions and on all, and the method.

    ``scored`` columns (0/1 metrics) get McNemar's exact test inverted, ``bounded`` columns
    (scores in [0, 1]) the betting interval (Waudby-Smith & Ramdas) of the paired difference,
    ``booted`` columns the bootstrap.  The subsamples are the first ``size`` questions in id order:
    deterministic, no draw.
    """
    n = diffs.shape[0]
    steps = [s for s in sizes if s < n] + [n]
    out: dict[int, tuple[tuple[SubsampleInterval, ...], str]] = {}
    if scored:
        by_column: dict[int, list[SubsampleInterval]] = {j: [] for j in scored}
        for size in steps:
            part = diffs[:size, list(scored)]
            b_only, a_only = (part > 0).sum(axis=0), (part < 0).sum(axis=0)
            low, high = mcnemar_exact_bounds(b_only, a_only, np.full(len(scored), size), confidence)
            for k, j in enumerate(scored):
                by_column[j].append(
                    SubsampleInterval(
                        size,
                        float((b_only[k] - a_only[k]) / size),
                        ConfidenceInterval(float(low[k]), float(high[k])),
                    )
                )
        out.update({j: (tuple(v), SCORE) for j, v in by_column.items()})
    if bounded:
        by_column = {j: [] for j in bounded}
        for size in steps:
            part = diffs[:size, list(bounded)]
            # one row per metric: each metric's interval is computed from its own column only
            low, high = bounded_mean_bounds(part.T, -1.0, 1.0, confidence)
            for j, interval in zip(bounded, _column_intervals(part, size, low, high), strict=True):
                by_column[j].append(interval)
        out.update({j: (tuple(v), BETTING) for j, v in by_column.items()})
    if booted:
        method: CIMethod = "bca" if ci_method == "bca" else "percentile"
        label = BCA if method == "bca" else PERCENTILE
        by_column = {j: [] for j in booted}
        for size in steps:
            part = diffs[:size, list(booted)]
            rng = _group_rng(seed, mask, *((_BOOTSTRAP, 0) if size == n else (_SUBSAMPLE, size)))
            with warnings.catch_warnings():
                if size < n:
                    warnings.simplefilter("ignore", RagauditWarning)  # BCa fallbacks, tiny sets
                theta_b = bootstrap_means(part, n_resamples, rng)
                low, high = _snap_constant(part, *_interval(theta_b, part, confidence, method))
            for j, interval in zip(booted, _column_intervals(part, size, low, high), strict=True):
                by_column[j].append(interval)
        out.update({j: (tuple(v), label) for j, v in by_column.items()})
    return out


def group_signflip(
    diffs: np.ndarray,
    columns: Sequence[int],
    bounded: Sequence[bool],
    n_permutations: int,
    exact_max_n: int,
    confidence: float,
    seed: int,
    mask: np.ndarray,
    sizes: Sequence[int],
) -> dict[int, tuple[tuple[SubsampleInterval, ...], str, tuple[float, str, bool]]]:
    """Per column: the sign-flip inversion on the first 10, 20, ... questions and on all, its
    method, and the p-value ``(p, method, exact)`` of the verdict.

    Each interval also contains Student's t interval (``signflip_interval.with_t``).  The
    p-value is the exact sign-flip p (:func:`~ragaudit.stats.permutation.exact_pvalue`) where
    affordable, else the Monte Carlo p(0) of the interval's own patterns; so the interval
    excludes 0 exactly when ``p < alpha`` (``signflip_interval.reconcile`` covers an exact p
    beside Monte Carlo ends or a t interval reaching past 0).  Every Monte Carlo column of the
    group sees the same sign patterns.  When fewer than
    :func:`~ragaudit.stats.verdicts.min_differing` questions differ (no result could be
    significant) a ``bounded`` column's interval also contains the betting interval.
    """
    n = diffs.shape[0]
    steps = [s for s in sizes if s < n] + [n]
    ones = np.ones(n)
    out: dict[int, tuple[tuple[SubsampleInterval, ...], str, tuple[float, str, bool]]] = {}
    for k, j in enumerate(columns):
        column = np.ascontiguousarray(diffs[:, j])
        # Too many joint outcomes for the exact enumeration: random patterns, from a generator
        # seeded alike for every column (the same patterns, unless drawn per distinct value).
        flips = (
            None
            if exact_affordable(column, ones)
            else flip_sums(
                np.column_stack([column, ones]),
                n_permutations,
                _group_rng(seed, mask, _PERMUTATION),
            )
        )
        exact = exact_pvalue(column, exact_max_n)
        subsamples: list[SubsampleInterval] = []
        for size in steps:
            part = column[:size]
            low, high, p0, is_exact, method = inverted_interval(
                part,
                bounded=bounded[k],
                confidence=confidence,
                n_permutations=n_permutations,
                rng=_group_rng(seed, mask, _SUBSAMPLE, size),  # only a large subsample draws
                flips=flips if size == n else None,
                exact_p=None if size < n or exact is None else float(exact[0]),
            )
            subsamples.append(
                SubsampleInterval(size, float(part.mean()), ConfidenceInterval(low, high))
            )
        pvalue = (
            (float(exact[0]), exact[1], True)
            if exact is not None
            else (p0, EXACT_VALUES if is_exact else MONTE_CARLO, is_exact)
        )
        out[j] = (tuple(subsamples), method, pvalue)
    return out


def group_clustered(
    diffs: np.ndarray,
    unit: Sequence[bool],
    labels: np.ndarray,
    n_permutations: int,
    confidence: float,
    seed: int,
    mask: np.ndarray,
) -> dict[int, tuple[tuple[SubsampleInterval, ...], str, tuple[float, str, bool], int]]:
    """Per column with ``--cluster-by``: the cluster sign-flip interval (all questions), its
    method, the verdict's p ``(p, method, exact)`` and the number of clusters that differ.

    Every column draws its Monte Carlo patterns (only past 2^16 joint cluster outcomes) from
    the same seeded generator, so they see the same patterns.
    """
    out: dict[int, tuple[tuple[SubsampleInterval, ...], str, tuple[float, str, bool], int]] = {}
    for j in range(diffs.shape[1]):
        column = np.ascontiguousarray(diffs[:, j])
        r = cluster_signflip(
            column,
            labels,
            confidence=confidence,
            bounded=unit[j],
            n_permutations=n_permutations,
            rng=_group_rng(seed, mask, _PERMUTATION),
        )
        full = SubsampleInterval(column.size, r.statistic, r.confidence_interval)
        out[j] = ((full,), r.method, (r.pvalue, r.p_method, r.exact), r.n_differing)
    return out
