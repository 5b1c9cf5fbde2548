"""Calibrate a judged rate against human verdicts on a subset of questions.

:func:`calibrate` takes a saved run (the judge's 0/1 verdict per question, e.g. ``correct``)
and human verdicts on some of its questions, and returns the judge's agreement with the
humans (confusion matrix, Cohen's kappa, true and false positive rates) and three intervals
for the true rate: prediction-powered (PPI++), human labels only, and judge only (labelled
as what it is).  The statistics are in :mod:`ragaudit.stats.ppi`.

PPI assumes the human-labelled questions are a uniformly random sample of the judged ones
(:func:`judged_values`).  When the verdicts come from a file that says how they were chosen
(:class:`~ragaudit.data.human_grades.HumanGrades`, written by ``ragaudit labels
verdicts``), :func:`calibrate` repeats it in :attr:`Calibration.sampling` and warns when the
sample was not random, when the person skipped questions, or when the verdicts were made for
another run.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.data.human_grades import HumanGrades
from ragaudit.data.per_question import judged_values
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.stats.agreement import cohen_kappa
from ragaudit.stats.ppi import (
    PPIResult,
    human_only_rate,
    judge_only_mean,
    ppi_mean,
    ppi_rate_small_sample,
)

__all__ = ["Calibration", "calibrate", "judged_values"]

#: What :attr:`Calibration.sampling` says when the verdicts do not say how they were chosen.
UNRECORDED = (
    "how the human-labelled questions were chosen is not recorded (PPI assumes a uniformly "
    "random sample; `ragaudit labels verdicts --sample N` draws one)"
)


@dataclass(frozen=True)
class Calibration:
    """The judge against the humans, and the calibrated rate.

    Attributes
    ----------
    run, metric : str
    confusion : tuple of tuple of int
        ``((both 1, human 1 judge 0), (human 0 judge 1, both 0))``.
    kappa : float
        Cohen's kappa between judge and humans.
    tpr, fpr : float
        ``P(judge 1 | human 1)`` and ``P(judge 1 | human 0)`` (NaN without such questions).
    ppi : PPIResult or None
        Prediction-powered interval (None when every judged question has a human label).
    human_only : PPIResult
        Clopper-Pearson exact interval of the human labels alone.
    judge_only : PPIResult
    n_labeled, n_unlabeled : int
    unknown_ids : tuple of str
        Human-labelled questions that the run has no judge verdict for (ignored).
    """

    run: str
    metric: str
    confusion: tuple[tuple[int, int], tuple[int, int]]
    kappa: float
    tpr: float
    fpr: float
    ppi: PPIResult | None
    human_only: PPIResult
    judge_only: PPIResult
    n_labeled: int
    n_unlabeled: int
    unknown_ids: tuple[str, ...] = ()
    ppi_small: PPIResult | None = None
    """Prediction-powered rate with small-sample limits (Wilson + Tango, MOVER)."""
    sampling: str = UNRECORDED
    """How the human-labelled questions were chosen, as the verdict file says."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""

        def interval(result: PPIResult | None) -> dict[str, Any] | None:
            if result is None:
                return None
            ci = result.confidence_interval
            return {
                "method": result.method,
                "label": result.label,
                "estimate": result.statistic,
                "se": result.standard_error,
                "ci": [ci.low, ci.high],
                "lambda": None if np.isnan(result.lam) else result.lam,
            }

        def number(value: float) -> float | None:
            return None if np.isnan(value) else value

        return {
            "run": self.run,
            "metric": self.metric,
            "n_labeled": self.n_labeled,
            "n_unlabeled": self.n_unlabeled,
            "confusion": {
                "human1_judge1": self.confusion[0][0],
                "human1_judge0": self.confusion[0][1],
                "human0_judge1": self.confusion[1][0],
                "human0_judge0": self.confusion[1][1],
            },
            "kappa": self.kappa,
            "tpr": number(self.tpr),
            "fpr": number(self.fpr),
            "ppi": interval(self.ppi),
            "ppi_small_sample": interval(self.ppi_small),
            "human_only": interval(self.human_only),
            "judge_only": interval(self.judge_only),
            "unknown_ids": list(self.unknown_ids),
            "sampling": self.sampling,
        }


def _rate(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def _sampling(run: SavedRun, human: HumanGrades) -> str:
    """:attr:`Calibration.sampling`, warning about what breaks PPI's random-sample premise."""
    where = human.path or "the human verdicts"
    checked = human.check_answers({q.id: q.answer for q in run.questions}, run.name)
    if human.run is not None and human.run != run.name and not checked:
        warnings.warn(
            f"{where}: the verdicts were made for run {human.run!r}, not {run.name!r}: a "
            "verdict grades one run's answer, so they may not apply",
            RagauditWarning,
            stacklevel=3,
        )
    skipped = human.skipped
    if skipped:
        warnings.warn(
            f"{where}: {len(skipped)} sampled question(s) were skipped ("
            f"{', '.join(skipped[:10])}); PPI assumes the labelled questions are a random "
            "sample, which skipping the hard ones breaks: grade them if you can",
            RagauditWarning,
            stacklevel=3,
        )
    sample = human.sample
    if sample is None:
        return UNRECORDED
    if not sample.random:
        warnings.warn(
            f"{where}: the file says its questions are {sample.describe()}; the PPI intervals "
            "assume a uniformly random sample of the judged questions and may be biased",
            RagauditWarning,
            stacklevel=3,
        )
        return f"human verdicts on {sample.describe()}: the PPI intervals assume a random one"
    text = f"human verdicts on {sample.describe()}"
    if sample.n is not None and len(human.done) < sample.n:
        text += f", {len(human.done)} graded so far"
    if skipped:
        text += f", {len(skipped)} skipped"
    return text


def calibrate(
    run: SavedRun,
    human: HumanGrades | Mapping[str, float],
    *,
    metric: str = "correct",
    confidence: float = 0.95,
) -> Calibration:
    """Compare the run's judged ``metric`` with human verdicts; PPI++ for the true rate.

    Also the PPI rate with small-sample limits (:func:`~ragaudit.stats.ppi.ppi_rate_small_sample`,
    which keeps its coverage with few labels and rates near 1, where PPI++'s normal
    approximation does not) and the exact human-only interval.

    Questions whose judge verdict is null (not applicable or a failed judge) are left out
    everywhere.  The PPI++ interval uses the judge's verdicts on the questions *without* a
    human label as the unlabelled sample (Angelopoulos et al. 2023, PPI++ 2024).

    ``human`` is a :class:`~ragaudit.data.human_grades.HumanGrades` (what the readers
    return: its header may say how the questions were chosen; see the module docstring for
    the warnings) or a plain ``{question id: verdict}`` mapping, whose sampling is unrecorded.

    Examples
    --------
    >>> verdicts = [1, 1, 0, 1, 0, 1]
    >>> rows = [{"id": f"q{i}", "retrieved": [], "metrics": {"correct": v}}
    ...         for i, v in enumerate(verdicts)]
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": rows})
    >>> cal = calibrate(run, {"q0": 1, "q1": 0, "q2": 0, "q3": 1})
    >>> cal.confusion, cal.tpr, cal.fpr
    (((2, 0), (1, 1)), 1.0, 0.5)
    >>> cal.judge_only.statistic, cal.human_only.statistic
    (0.6666666666666666, 0.5)
    """
    human = HumanGrades.of(human)
    judged = judged_values(run, metric)
    sampling = _sampling(run, human)
    unknown = tuple(sorted(set(human) - set(judged)))
    if unknown:
        warnings.warn(
            f"{len(unknown)} human-labelled question(s) have no judged {metric!r} in run "
            f"{run.name!r} and are ignored: {', '.join(unknown[:10])}",
            RagauditWarning,
            stacklevel=2,
        )
    labelled = sorted(set(human) & set(judged))
    if len(labelled) < 2:
        raise InputError(
            f"calibrate: expected human verdicts on at least 2 judged questions of run "
            f"{run.name!r}, found {len(labelled)}"
        )
    others = sorted(set(judged) - set(human))
    y = np.array([human[q] for q in labelled], dtype=float)
    yhat = np.array([judged[q] for q in labelled], dtype=float)
    unlabeled = np.array([judged[q] for q in others], dtype=float)
    tp = int(np.sum((y == 1) & (yhat == 1)))
    fn = int(np.sum((y == 1) & (yhat == 0)))
    fp = int(np.sum((y == 0) & (yhat == 1)))
    tn = int(np.sum((y == 0) & (yhat == 0)))
    kappa = cohen_kappa(y.astype(int), yhat.astype(int))  # warns when one class only
    everything = np.array([judged[q] for q in sorted(judged)], dtype=float)
    return Calibration(
        run=run.name,
        metric=metric,
        confusion=((tp, fn), (fp, tn)),
        kappa=float(kappa),
        tpr=_rate(tp, tp + fn),
        fpr=_rate(fp, fp + tn),
        ppi=ppi_mean(y, yhat, unlabeled, confidence=confidence) if unlabeled.size else None,
        human_only=human_only_rate(y, confidence=confidence),
        judge_only=judge_only_mean(everything, confidence=confidence),
        n_labeled=len(labelled),
        n_unlabeled=len(others),
        unknown_ids=unknown,
        ppi_small=ppi_rate_small_sample(y, yhat, unlabeled, confidence=confidence)
        if unlabeled.size
        else None,
        sampling=sampling,
    )
