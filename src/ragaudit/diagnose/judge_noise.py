"""Judge noise vs question sampling, for saved runs judged ``--judge-repeats R`` times.

:func:`judge_noise_comparison` splits the variance of a judged mean (runs A, B and B - A) into
between-question variance and within-question judge variance, from the per-repeat verdicts a
run stored under :data:`REPEATS_KEY`; the statistics live in :mod:`ragaudit.stats.judge_noise`,
the rendering in :mod:`ragaudit.reports.noise`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.stats.judge_noise import JudgeNoiseResult, judge_noise

__all__ = ["REPEATS_KEY", "JudgeNoiseComparison", "judge_noise_comparison", "repeat_scores"]

# Per-repeat verdicts written by the LLM judges (``judges.judge_repeat_verdicts``).
REPEATS_KEY = "judge_repeat_verdicts"


@dataclass(frozen=True)
class JudgeNoiseComparison:
    """Judge-noise decompositions of one metric for runs A, B and their difference.

    Attributes
    ----------
    metric : str
    a, b : JudgeNoiseResult or None
        Per run (None when the run stored no usable repeats).
    difference : JudgeNoiseResult or None
        Of ``B - A`` question by question, repeat ``r`` of B against repeat ``r`` of A (the
        repeats are independent draws, so any pairing of them is valid).
    dropped : int
        Questions left out because a repeat failed or the runs stored different counts.
    """

    metric: str
    a: JudgeNoiseResult | None
    b: JudgeNoiseResult | None
    difference: JudgeNoiseResult | None
    dropped: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""

        def one(result: JudgeNoiseResult | None) -> dict[str, Any] | None:
            if result is None:
                return None
            ci, sampling = result.confidence_interval, result.sampling_only_interval
            return {
                "statistic": result.statistic,
                "n_questions": result.n_questions,
                "n_repeats": result.n_repeats,
                "between_variance": result.between_variance,
                "within_variance": result.within_variance,
                "between_share": result.between_share,
                "judge_share": result.judge_share,
                "ci": [ci.low, ci.high],
                "sampling_only_ci": [sampling.low, sampling.high],
                "method": result.method,
                "repeats_to_halve_judge_variance": result.repeats_to_halve_judge_variance,
                "repeats_to_halve_judge_share": result.repeats_to_halve_judge_share,
            }

        return {
            "metric": self.metric,
            "a": one(self.a),
            "b": one(self.b),
            "difference": one(self.difference),
            "dropped": self.dropped,
        }


def repeat_scores(run: SavedRun, metric: str) -> dict[str, list[float | None]]:
    """``{question id: [verdict of repeat 0, 1, ...]}`` as numbers (None = failed repeat).

    The LLM judges store them under ``judges.judge_repeat_verdicts`` when run with
    ``--judge-repeats R`` (R >= 2).

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
    ...     "judges": {"judge_repeat_verdicts": {"correct": [True, False, None]}}}]})
    >>> repeat_scores(run, "correct")
    {'q1': [1.0, 0.0, None]}
    """
    out: dict[str, list[float | None]] = {}
    for row in run.rows:
        stored = ((row.get("judges") or {}).get(REPEATS_KEY) or {}).get(metric)
        if isinstance(stored, list):
            out[row["id"]] = [None if v is None else float(v) for v in stored]
    return out


def _matrix(scores: Mapping[str, list[float | None]], ids: Sequence[str]) -> np.ndarray | None:
    if not ids:
        return None
    return np.array([[np.nan if v is None else v for v in scores[q]] for q in ids], dtype=float)


def _decompose(
    matrix: np.ndarray | None, confidence: float, *, difference: bool = False
) -> JudgeNoiseResult | None:
    if matrix is None or matrix.shape[0] < 2 or matrix.shape[1] < 2:
        return None
    return judge_noise(matrix, confidence=confidence, difference=difference)


def judge_noise_comparison(
    run_a: SavedRun, run_b: SavedRun, metric: str, *, confidence: float = 0.95
) -> JudgeNoiseComparison:
    """Decompose judged ``metric`` of both runs and of their difference.

    Only questions where every repeat of both runs gave a verdict are used; the others are
    counted in ``dropped``.
    """
    scores_a, scores_b = repeat_scores(run_a, metric), repeat_scores(run_b, metric)
    if not scores_a and not scores_b:
        raise InputError(
            f"--judge-repeats: runs {run_a.name!r} and {run_b.name!r} store no per-repeat "
            f"verdicts for {metric!r}; judge them with `ragaudit judge --judge-repeats R` "
            "(R >= 2, an LLM judge that samples)"
        )

    def complete(scores: Mapping[str, list[float | None]]) -> dict[str, list[float | None]]:
        lengths = {len(v) for v in scores.values()}
        repeats = max(lengths) if lengths else 0
        return {q: v for q, v in scores.items() if len(v) == repeats and None not in v}

    full_a, full_b = complete(scores_a), complete(scores_b)
    common = sorted(set(full_a) & set(full_b))
    if common and len(full_a[common[0]]) != len(full_b[common[0]]):
        common = []
    mat_a, mat_b = _matrix(full_a, sorted(full_a)), _matrix(full_b, sorted(full_b))
    both_a, both_b = _matrix(full_a, common), _matrix(full_b, common)
    difference = None if both_a is None or both_b is None else both_b - both_a
    return JudgeNoiseComparison(
        metric=metric,
        a=_decompose(mat_a, confidence),
        b=_decompose(mat_b, confidence),
        difference=_decompose(
            difference,
            confidence,
            # B - A of two judged rates: an interval for a difference in [-1, 1], even when
            # this sample holds no -1 (the t interval covered 0.57 at 20 questions).
            difference=both_a is not None
            and both_b is not None
            and bool(np.all((both_a >= 0) & (both_a <= 1) & (both_b >= 0) & (both_b <= 1))),
        ),
        dropped=len(set(scores_a) | set(scores_b)) - len(common),
    )
