"""A filled metric corrected by a person's verdicts on a sample: prediction-powered, honestly.

``labels fill`` has a labeller grade the unjudged items in the runs' top k; a metric on the
filled labels then rests on the labeller's grades.  When a person re-grades the filled items of
a random sample of questions, the labeller's error on those questions is *measured*, and the
filled metric is corrected by it, as prediction-powered inference corrects a judge with a few
human labels (the rectifier of PPI, Angelopoulos et al. 2023 [1]_).

Per question ``q`` of the run, ``yhat_q`` is the metric on the original plus filled labels and
``y_q`` the metric once a person's grades replace the filled ones.  ``B`` are the questions with
at least one filled item (elsewhere ``y_q = yhat_q``: no labeller grade is involved), ``C``
those of ``B`` whose every filled item the person graded.  The estimate of the mean over the
run's ``n`` questions had a person graded every hole is

.. math:: \\hat\\theta = \\frac1n\\sum_q \\hat y_q + \\frac{|B|}{n}\\,
          \\frac1{|C|}\\sum_{q\\in C} (y_q - \\hat y_q),

PPI's estimate with ``lambda = 1`` inside ``B`` (``ppi_py.ppi_mean_pointestimate(y_C, yhat_C,
yhat_B, lam=1)``), averaged with the exact questions outside it.  The labeller's values are known
on every question, so the only uncertainty is the rectifier, the mean of ``y - yhat`` over ``B``
estimated from ``C``; its interval is the one ``compare`` gives a mean of paired differences in
[0, 1] (:func:`ragaudit.stats.policy.paired_interval`: McNemar's exact test inverted for 0/1
metrics, the sign-flip test inverted otherwise, widened to betting when few questions differ),
scaled by ``|B|/n`` and intersected with [0, 1].  PPI++'s normal-theory interval
(:func:`ragaudit.stats.ppi.ppi_mean`) is not used: a labeller that is usually right leaves most
checked differences at 0, and that interval then believes it (it covered 0.3-0.85 with 16
labels, ``stats/ppi.py``); this one covers at least 0.95 in ``tests/labels/test_fill_ppi.py``'s
seeded simulation.  It holds when ``C`` is a uniformly random sample of ``B`` (the person picks
the questions to check at random, not the doubtful ones).

References
----------
.. [1] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023).
   Prediction-powered inference. *Science* 382(6671), 669-674.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError
from ragaudit.labels.fill import merge_labels
from ragaudit.metrics.evaluate import evaluate
from ragaudit.stats.policy import paired_interval
from ragaudit.stats.resampling import ConfidenceInterval, check_confidence

__all__ = ["CorrectedMetric", "correct_filled", "rectified_mean"]


@dataclass(frozen=True)
class CorrectedMetric:
    """A filled metric corrected by a person's verdicts.

    Attributes
    ----------
    metric : str
    n : int
        Questions scored.
    n_filled : int
        Questions with at least one filled item (``B``).
    n_checked : int
        Of those, questions whose every filled item a person graded (``C``).
    n_partial : int
        Questions the person graded only some filled items of (left out of ``C``).
    filled : float
        Mean on the original plus filled labels (the labeller's).
    statistic : float
        The corrected mean.
    confidence_interval : ConfidenceInterval
    rectifier : float
        Mean of ``y - yhat`` over the checked questions: the labeller's measured error.
    method : str
        The rectifier's interval.
    confidence : float
    """

    metric: str
    n: int
    n_filled: int
    n_checked: int
    n_partial: int
    filled: float
    statistic: float
    confidence_interval: ConfidenceInterval
    rectifier: float
    method: str
    confidence: float

    @property
    def label(self) -> str:
        """What the interval is, in words (shown beside it)."""
        return (
            f"filled labels corrected by a person's grades on {self.n_checked} of the "
            f"{self.n_filled} questions with filled items (PPI rectifier, lambda 1; its "
            f"interval: {self.method}; valid when those questions were picked at random)"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "metric": self.metric,
            "n": self.n,
            "n_filled": self.n_filled,
            "n_checked": self.n_checked,
            "n_partial": self.n_partial,
            "filled": self.filled,
            "corrected": self.statistic,
            "ci_low": self.confidence_interval.low,
            "ci_high": self.confidence_interval.high,
            "rectifier": self.rectifier,
            "method": self.method,
            "confidence": self.confidence,
            "label": self.label,
        }


def rectified_mean(
    yhat: Any, filled: Any, checked: Any, y: Any, *, confidence: float = 0.95
) -> tuple[float, ConfidenceInterval, float, str]:
    """The corrected mean of per-question values in [0, 1] and its interval (see the module
    docstring): ``(statistic, interval, rectifier, method)``.

    Parameters
    ----------
    yhat : array_like of shape (n,)
        The metric on the filled labels, every question.
    filled : bool array_like of shape (n,)
        Questions with a filled item (``B``).
    checked : bool array_like of shape (n,)
        Questions a person checked completely (``C``, inside ``B``; at least 2).
    y : array_like of shape (n,)
        The metric on the person's grades (read where ``checked`` only).

    Examples
    --------
    Four questions, three with filled items, two of them checked; the labeller was 0.5 too
    generous on one of the two:

    >>> stat, ci, rect, _ = rectified_mean([0.5, 1.0, 1.0, 0.2], [False, True, True, True],
    ...                                    [False, True, True, False], [0.5, 0.5, 1.0, 0.0])
    >>> round(stat, 6), rect    # 2.7/4 + (3/4) * (-0.5 + 0) / 2
    (0.4875, -0.25)
    """
    confidence = check_confidence(confidence)
    yhat_arr = np.asarray(yhat, dtype=np.float64)
    y_arr = np.asarray(y, dtype=np.float64)
    in_b = np.asarray(filled, dtype=bool)
    in_c = np.asarray(checked, dtype=bool)
    if not (yhat_arr.shape == y_arr.shape == in_b.shape == in_c.shape) or yhat_arr.ndim != 1:
        raise InputError("rectified_mean: expected four vectors of one length per question")
    if np.any(in_c & ~in_b):
        raise InputError("rectified_mean: a checked question must have filled items")
    n, n_b, n_c = yhat_arr.size, int(in_b.sum()), int(in_c.sum())
    base = float(yhat_arr.mean()) if n else 0.0
    if n_b == 0:  # nothing filled: the labeller played no part
        return base, ConfidenceInterval(base, base), 0.0, "exact (no filled items)"
    if n_c < 2:
        raise InputError(
            f"corrected metric: expected a person's grades on every filled item of at least "
            f"2 questions, found {n_c} of the {n_b} questions with filled items; grade a random "
            "sample of them (every filled item of each)"
        )
    share = n_b / n
    rect = paired_interval(yhat_arr[in_c], y_arr[in_c], confidence=confidence)
    statistic = base + share * rect.statistic
    if n_c == n_b:  # every filled question checked: the person's value, exactly
        return (
            statistic,
            ConfidenceInterval(statistic, statistic),
            rect.statistic,
            "exact (all checked)",
        )
    ci = rect.confidence_interval
    low = min(max(base + share * ci.low, 0.0), 1.0)
    high = min(max(base + share * ci.high, 0.0), 1.0)
    return statistic, ConfidenceInterval(low, high), rect.statistic, rect.method


def correct_filled(
    original: Qrels,
    filled: Qrels,
    human: Qrels,
    run: Run,
    metrics: Sequence[str],
    *,
    relevance_threshold: int = 1,
    missing: str = "zero",
    confidence: float = 0.95,
) -> tuple[CorrectedMetric, ...]:
    """Each metric of ``run`` on the filled labels, corrected by a person's grades ``human``
    on the filled items of a sample of questions (see the module docstring).

    Parameters
    ----------
    original : Qrels
        The labels before filling.
    filled : Qrels
        What ``labels fill`` wrote (the original labels may be in it too; an item is *filled*
        when ``original`` does not grade it).
    human : Qrels
        A person's grades of filled items; grades of other items are ignored.
    run : Run
    metrics : sequence of str
        Metrics with values in [0, 1] (judged@k is skipped: it does not depend on grades).

    Returns
    -------
    tuple of CorrectedMetric
    """
    merged = merge_labels(original, filled)
    added = {
        qid: {item for item in filled[qid] if item not in original[qid]} if qid in original
        else set(filled[qid])
        for qid in filled
    }  # fmt: skip
    person: dict[str, dict[str, int]] = {qid: dict(merged[qid]) for qid in merged}
    in_b: dict[str, bool] = {}
    in_c: dict[str, bool] = {}
    partial: dict[str, bool] = {}
    for qid, items in added.items():
        if not items:
            continue
        graded = human.get(qid, {})
        seen = items & set(graded)
        for item in seen:
            person[qid][item] = graded[item]
        in_b[qid] = True
        in_c[qid] = seen == items
        partial[qid] = bool(seen) and seen != items
    names = list(metrics)
    before = evaluate(merged, run, names, relevance_threshold=relevance_threshold, missing=missing)
    after = evaluate(
        Qrels(person, unit=merged.unit), run, names,
        relevance_threshold=relevance_threshold, missing=missing,
    )  # fmt: skip
    qids = before.query_ids
    b_mask = np.array([in_b.get(q, False) for q in qids], dtype=bool)
    c_mask = np.array([in_c.get(q, False) for q in qids], dtype=bool)
    n_partial = sum(partial.get(q, False) for q in qids)
    out = []
    for name, spec in before.specs.items():
        if spec.family == "judged":
            continue
        yhat = np.asarray(before.per_query[name], dtype=np.float64)
        y = np.asarray(after.per_query[name], dtype=np.float64)
        if yhat.size and (yhat.min() < 0 or yhat.max() > 1):
            raise InputError(f"corrected metric: {name} is not in [0, 1]; correct a share")
        stat, ci, rect, method = rectified_mean(yhat, b_mask, c_mask, y, confidence=confidence)
        out.append(
            CorrectedMetric(
                name, len(qids), int(b_mask.sum()), int(c_mask.sum()), n_partial,
                float(yhat.mean()) if yhat.size else 0.0, stat, ci, rect, method, confidence,
            )
        )  # fmt: skip
    return tuple(out)
