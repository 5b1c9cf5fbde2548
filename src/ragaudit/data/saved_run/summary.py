"""The summary of a saved run, computed in one place from the model.

``ragaudit run``, ``ragaudit judge`` and ``ragaudit import`` all store and print this
summary; nothing else averages a run's per-question metrics.

Means are macro averages over the questions where a metric is not null (each metric's
aggregation rule in :data:`ragaudit.data.saved_run.metrics.SAVED_RUN_METRICS` is ``mean``):

.. math:: \\bar m = \\frac{1}{|Q_m|} \\sum_{q \\in Q_m} m_q, \\quad
          Q_m = \\{q : m_q \\text{ is not null}\\}

End-to-end correctness is the exception, defined once here (:func:`end_to_end_correct`) and
called by ``run``, ``funnel``, the report's dashboard and ``show``: a count over **every
answerable question**, never over the judged ones only::

    correct = #{answerable q : q answered and judged correct} / #{answerable q}

An answerable question whose correctness no judge decided (no verdict, a failed judge, a
generation error) is *unjudged*: it is counted in the denominator, not in the count, and named
with its reason, so the rate is a lower bound and ``(count + unjudged) / n`` the upper one.
Unanswerable questions are reported apart, as the correct-refusal rate
(:func:`correct_refusal`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.data.saved_run.model import QuestionResult, SavedRun

__all__ = [
    "CorrectRefusal",
    "EndToEndCorrect",
    "RunSummary",
    "correct_refusal",
    "correct_verdict",
    "count_judge_errors",
    "end_to_end_correct",
    "metric_means",
    "summarise_questions",
    "undecided_reason",
]

#: The judge that decides each verdict, for the reason of a failed judge.
_JUDGE_OF = {"correct": "correctness", "sufficiency": "sufficiency"}


def undecided_reason(judges: Mapping[str, Any], verdict: str) -> str:
    """Why ``judges[verdict]`` is undecided, as the saved run says, or ``""``.

    Read in this order: the failed judge's message (``judge_errors``), the judge's own reason
    (``judges["reasons"][verdict]``, or ``judges[verdict + "_reason"]``).

    >>> undecided_reason({"reasons": {"correct": "no reference answer"}}, "correct")
    'no reference answer'
    >>> undecided_reason({"judge_errors": {"correctness": "timeout"}}, "correct")
    'correctness judge failed: timeout'
    >>> undecided_reason({}, "correct")
    ''
    """
    errors = judges.get("judge_errors")
    judge = _JUDGE_OF.get(verdict, verdict)
    if isinstance(errors, Mapping) and errors.get(judge):
        return f"{judge} judge failed: {errors[judge]}"
    reasons = judges.get("reasons")
    if isinstance(reasons, Mapping) and reasons.get(verdict):
        return str(reasons[verdict])
    own = judges.get(f"{verdict}_reason")
    return str(own) if own else ""


def correct_verdict(question: QuestionResult) -> tuple[bool | None, str]:
    """``(verdict, reason)``: is this answerable question's answer correct, end to end?

    ``True`` when the model answered and the correctness verdict is true; ``False`` when it
    refused (a refusal is never a right answer) or the verdict is false; ``None`` (unjudged)
    otherwise, with the reason: a generation error, a failed correctness judge, or no verdict.
    The verdict is ``judges.correct``, else the row's ``correct`` metric (imported runs).

    >>> from ragaudit.data.saved_run import Judgments as V
    >>> correct_verdict(QuestionResult("q1", judges=V({"abstained": False, "correct": True})))
    (True, '')
    >>> correct_verdict(QuestionResult("q2", judges=V({"abstained": True, "correct": None})))
    (False, '')
    >>> correct_verdict(QuestionResult("q3", generation_error="HTTP 500"))
    (None, 'generation error: HTTP 500')
    >>> correct_verdict(QuestionResult("q4", judges=V({"abstained": False})))
    (None, 'no correctness verdict')
    """
    if question.generation_error:
        return None, f"generation error: {question.generation_error}"
    judges = question.judges
    if judges.abstained:
        return False, ""
    if "correctness" in judges.failed:
        return None, undecided_reason(judges, "correct") or "correctness judge failed"
    verdict = judges.correct
    if verdict is None and "correct" not in judges:
        metric = question.metric("correct")
        verdict = None if metric is None else bool(metric)
    if verdict is None:
        why = undecided_reason(judges, "correct")
        return None, "no correctness verdict" + (f": {why}" if why else "")
    return verdict, ""


@dataclass(frozen=True)
class EndToEndCorrect:
    """End-to-end correctness over the answerable questions (see the module docstring).

    Attributes
    ----------
    count : int
        Answerable questions answered and judged correct.
    n : int
        Answerable questions (the one denominator).
    unjudged : dict of str to str
        ``{question id: reason}``: no judge decided them; in ``n``, not in ``count``.
    """

    count: int
    n: int
    unjudged: Mapping[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        """``count / n``; None when ``n == 0`` (0/0 is undefined, not 0) or when no answerable
        question was judged (the rate is anywhere in [0, 1], not 0)."""
        return self.count / self.n if self.n > len(self.unjudged) else None

    @property
    def upper(self) -> float | None:
        """``(count + unjudged) / n``: the rate if every unjudged answer were right."""
        return (self.count + len(self.unjudged)) / self.n if self.n else None

    def line(self) -> str:
        """``43/54 = 0.796`` plus the unjudged ones, for every command's text.

        >>> EndToEndCorrect(3, 4, {"q4": "no correctness verdict"}).line()
        '3/4 = 0.750 (1 unjudged, counted as not correct: q4)'
        """
        if not self.n:
            return "0/0 (no answerable questions: undefined)"
        if self.rate is None:
            return f"undefined: all {self.n} answerable questions unjudged: " + ", ".join(
                self.unjudged
            )
        text = f"{self.count}/{self.n} = {self.count / self.n:.3f}"
        if self.unjudged:
            text += (
                f" ({len(self.unjudged)} unjudged, counted as not correct: "
                + ", ".join(self.unjudged)
                + ")"
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """``{"count", "n", "rate", "unjudged": {id: reason}, "denominator"}``."""
        return {
            "count": self.count,
            "n": self.n,
            "rate": self.rate,
            "denominator": "answerable questions",
            "unjudged": dict(self.unjudged),
        }


def end_to_end_correct(questions: Iterable[QuestionResult]) -> EndToEndCorrect:
    """The one count of end-to-end correct answers (see the module docstring).

    >>> from ragaudit.data.saved_run import Judgments as V
    >>> qs = [QuestionResult("q1", judges=V({"abstained": False, "correct": True})),
    ...       QuestionResult("q2", judges=V({"abstained": False, "correct": False})),
    ...       QuestionResult("q3", judges=V({"abstained": False})),
    ...       QuestionResult("q4", answerable=False, judges=V({"abstained": True}))]
    >>> e = end_to_end_correct(qs)
    >>> e.count, e.n, dict(e.unjudged)
    (1, 3, {'q3': 'no correctness verdict'})
    """
    count, n = 0, 0
    unjudged: dict[str, str] = {}
    for question in questions:
        if not question.answerable:
            continue
        n += 1
        verdict, reason = correct_verdict(question)
        if verdict is None:
            unjudged[question.id] = reason
        count += int(bool(verdict))
    return EndToEndCorrect(count, n, unjudged)


@dataclass(frozen=True)
class CorrectRefusal:
    """Unanswerable questions the model refused, over those whose abstention is known.

    ``unjudged``: ``{id: reason}`` of the unanswerable questions with no abstention verdict
    (a generation error), left out of ``n`` and named.
    """

    count: int
    n: int
    unjudged: Mapping[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        """``count / n`` (None when ``n == 0``)."""
        return self.count / self.n if self.n else None

    def to_dict(self) -> dict[str, Any]:
        """``{"count", "n", "rate", "unjudged"}``."""
        return {
            "count": self.count,
            "n": self.n,
            "rate": self.rate,
            "unjudged": dict(self.unjudged),
        }


def correct_refusal(questions: Iterable[QuestionResult]) -> CorrectRefusal:
    """The correct-refusal count of the unanswerable questions.

    >>> from ragaudit.data.saved_run import Judgments as V
    >>> r = correct_refusal([QuestionResult("u1", answerable=False, judges=V({"abstained": True})),
    ...     QuestionResult("u2", answerable=False, judges=V({"abstained": False}))])
    >>> r.count, r.n
    (1, 2)
    """
    count, n = 0, 0
    unjudged: dict[str, str] = {}
    for question in questions:
        if question.answerable:
            continue
        abstained = None if question.generation_error else question.judges.abstained
        if abstained is None:
            unjudged[question.id] = (
                f"generation error: {question.generation_error}"
                if question.generation_error
                else "no abstention verdict"
            )
            continue
        n += 1
        count += int(abstained)
    return CorrectRefusal(count, n, unjudged)


def count_judge_errors(questions: Iterable[QuestionResult]) -> dict[str, int]:
    """Judge failures per judge over the questions whose generation succeeded.

    >>> from ragaudit.data.saved_run import Judgments as V
    >>> count_judge_errors([QuestionResult("q1", judges=V({"judge_errors": {"x": "?"}})),
    ...                     QuestionResult("q2", generation_error="x",
    ...                                judges=V({"judge_error": "y: ?"}))])
    {'x': 1}
    """
    counts: dict[str, int] = {}
    for question in questions:
        if question.generation_error:
            continue
        for judge in question.judges.failed:
            counts[judge] = counts.get(judge, 0) + 1
    return dict(sorted(counts.items()))


def metric_means(
    questions: Sequence[QuestionResult], names: Sequence[str] | None = None
) -> tuple[dict[str, float], dict[str, int]]:
    """``(means, counts)``: each metric's mean over the questions where it is not null.

    ``names`` defaults to every metric in order of first appearance; a metric null
    everywhere gets a count of 0 and no mean.

    >>> qs = [QuestionResult("q1", metrics={"correct": True}),
    ...       QuestionResult("q2", metrics={"correct": 0.0}),
    ...       QuestionResult("q3", metrics={"correct": None})]
    >>> metric_means(qs)
    ({'correct': 0.5}, {'correct': 2})
    """
    if names is None:
        names = list(dict.fromkeys(name for q in questions for name in q.metrics))
    means: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name in names:
        values = [v for v in (q.metric(name) for q in questions) if v is not None]
        counts[name] = len(values)
        if values:
            means[name] = float(np.mean(np.array(values, dtype=float)))
    return means, counts


@dataclass(frozen=True)
class RunSummary:
    """Counts and means of a saved run (``summary`` in the file, see the format docs).

    Attributes
    ----------
    n, n_answerable, n_unanswerable : int
    n_generation_errors : int
        Questions whose answer could not be generated (``generation_error`` set); their
        answer metrics are null, so they are in no answer mean.
    k : int
    metrics : dict
        Means over every question where each metric is not null (so ``correct`` includes
        unanswerable questions, where it means "abstained").
    n_scored : dict
        How many questions each mean covers.
    metrics_answerable : dict
        Means over the answerable questions only.
    judge_errors : dict
        Failures per judge (``judge_error``; never folded into a mean): the judge's metrics
        are null on those questions.
    end_to_end : EndToEndCorrect
        End-to-end correctness over every answerable question (:func:`end_to_end_correct`):
        the number ``run``, ``funnel`` and the dashboard print.
    refusal : CorrectRefusal
        Correct refusals of the unanswerable questions.
    unit, averaging : str
        ``"doc"`` and ``"macro"``.
    """

    n: int
    n_answerable: int
    n_unanswerable: int
    n_generation_errors: int
    k: int
    metrics: Mapping[str, float]
    n_scored: Mapping[str, int]
    metrics_answerable: Mapping[str, float]
    judge_errors: Mapping[str, int]
    end_to_end: EndToEndCorrect = field(default_factory=lambda: EndToEndCorrect(0, 0))
    refusal: CorrectRefusal = field(default_factory=lambda: CorrectRefusal(0, 0))
    unit: str = "doc"
    averaging: str = "macro"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_judge_errors(self) -> int:
        """Total judge failures."""
        return sum(self.judge_errors.values())

    def to_dict(self) -> dict[str, Any]:
        """The ``summary`` object as stored in a saved run."""
        return {
            "n": self.n,
            "n_answerable": self.n_answerable,
            "n_unanswerable": self.n_unanswerable,
            "n_generation_errors": self.n_generation_errors,
            "k": self.k,
            "unit": self.unit,
            "averaging": self.averaging,
            "metrics": dict(self.metrics),
            "n_scored": dict(self.n_scored),
            "metrics_answerable": dict(self.metrics_answerable),
            "judge_errors": dict(self.judge_errors),
            "n_judge_errors": self.n_judge_errors,
            "end_to_end_correct": self.end_to_end.to_dict(),
            "correct_refusal": self.refusal.to_dict(),
            **dict(self.extra),
        }


def summarise_questions(questions: Sequence[QuestionResult], k: int) -> RunSummary:
    """The summary of ``questions`` at cut-off ``k`` (see :class:`RunSummary`).

    >>> s = summarise_questions([QuestionResult("q1", metrics={"hit@k": 1.0}),
    ...     QuestionResult("q2", answerable=False, metrics={"hit@k": None})], k=3)
    >>> s.metrics, s.n_unanswerable
    ({'hit@k': 1.0}, 1)
    """
    means, counts = metric_means(questions)
    answerable = [q for q in questions if q.answerable]
    answerable_means, _ = metric_means(answerable, list(means))
    return RunSummary(
        n=len(questions),
        n_answerable=len(answerable),
        n_unanswerable=len(questions) - len(answerable),
        n_generation_errors=sum(1 for q in questions if q.generation_error),
        k=k,
        metrics=means,
        n_scored=counts,
        metrics_answerable=answerable_means,
        judge_errors=count_judge_errors(questions),
        end_to_end=end_to_end_correct(questions),
        refusal=correct_refusal(questions),
    )


def summarise_run(run: SavedRun) -> RunSummary:
    """The summary of a saved run, recomputed from its questions.

    Keys of the stored summary that are not computed from the questions (``llm``: calls,
    tokens and cost) are carried over in ``extra``.
    """
    computed = summarise_questions(run.questions, run.k)
    own = set(computed.to_dict()) | {"n_errors"}  # n_errors: the old name, not carried over
    carried = {key: value for key, value in run.summary.items() if key not in own}
    return RunSummary(**{**computed.__dict__, "extra": carried})
