"""What repeated generations of one run say: variance budget, flaky questions, pass^k, and the
funnel stage each flaky question changes at.

A run made with ``run --repeats R`` holds ``R`` generations of every question
(:attr:`SavedRun.repeats`).  :func:`analyse_repeats` reads the end-to-end verdict of each
(answerable question, repeat) and hands the ``(n, R)`` array to
:mod:`ragaudit.stats.repeats`: the question, never the (question, repeat) pair, is the unit of
every interval.  It also walks each repeat through the funnel (the funnel's own
:func:`~ragaudit.diagnose.stage_outcomes.stage_outcomes` and
:func:`~ragaudit.diagnose.funnel_places.place_questions`) and names, for each question that
lands at different places in different repeats, the first stage at which its repeats part:
the earliest stage one repeat failed (or left undecided) and another passed.

An undecided verdict counts as not correct, as in the funnel's end-to-end count (it is never
right); ``undecided`` counts those (question, repeat) pairs.  An unrepeated run (R = 1) gets
None: nothing of this is shown for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.funnel import run_source
from ragaudit.diagnose.funnel_places import place_questions
from ragaudit.diagnose.funnel_result import STAGE_KEYS
from ragaudit.diagnose.judge_noise import repeat_scores
from ragaudit.diagnose.stage_outcomes import answer_chunks, stage_outcomes
from ragaudit.exceptions import InputError
from ragaudit.stats.intervals import IntervalResult, clopper_pearson_bounds
from ragaudit.stats.repeats import (
    FlakyQuestion,
    PassKResult,
    VarianceBudget,
    flaky_questions,
    pass_k,
    repeated_mean_interval,
    variance_budget,
)

__all__ = [
    "RepeatsAnalysis",
    "StageFlakiness",
    "analyse_outcomes",
    "analyse_repeats",
    "repeat_places",
    "run_budget",
    "stage_flakiness",
]

#: What a repeat's place is called when it passed every stage.
OK = "ok"


@dataclass(frozen=True)
class StageFlakiness:
    """How many answerable questions land at different funnel places in different repeats,
    and the stage each one's repeats first part at (``by_stage``, every stage key, in order).
    """

    changed: int
    n: int
    by_stage: dict[str, int]

    @property
    def sources(self) -> tuple[str, ...]:
        """The stages most flaky questions part at (several on a tie), in funnel order."""
        top = max(self.by_stage.values(), default=0)
        return tuple(key for key in STAGE_KEYS if top and self.by_stage[key] == top)

    def to_dict(self) -> dict[str, Any]:
        return {"changed": self.changed, "n": self.n, "by_stage": dict(self.by_stage)}


@dataclass(frozen=True)
class RepeatsAnalysis:
    """The repeats of one run (see the module docstring).

    Attributes
    ----------
    ids : tuple of str
        The answerable questions, run order.
    outcomes : ndarray, shape (n, R)
        1 correct, 0 not (an undecided verdict is 0).
    mean : IntervalResult or None
        The run's correctness over all repeats, the question as the unit
        (:func:`~ragaudit.stats.repeats.repeated_mean_interval`); None with fewer than 2
        questions (``show`` of one question reads only that one).
    budget : VarianceBudget or None
        Between questions, between generations and (with judge repeats on every answer)
        between judge calls; None with fewer than 2 questions.
    flaky : tuple of FlakyQuestion
        Right on some repeats and wrong on others, most changeable first (``index`` into ids).
    pass_at, pass_all : tuple of PassKResult
        pass@k and pass^k for ``k = 1..R``.
    stages : StageFlakiness or None
        None when the per-repeat funnel places were not computed.
    places : ndarray of str, shape (n, R), or None
        Each repeat's funnel place (``ok``, a stage key, ``unjudged at KEY``).
    """

    name: str
    path: str
    metric: str
    ids: tuple[str, ...]
    outcomes: np.ndarray
    mean: IntervalResult | None
    budget: VarianceBudget | None
    flaky: tuple[FlakyQuestion, ...]
    pass_at: tuple[PassKResult, ...]
    pass_all: tuple[PassKResult, ...]
    stages: StageFlakiness | None = None
    places: np.ndarray | None = None
    undecided: int = 0
    seeds: tuple[int, ...] = ()
    confidence: float = 0.95
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_questions(self) -> int:
        return len(self.ids)

    @property
    def repeats(self) -> int:
        return int(self.outcomes.shape[1])

    def question(self, qid: str) -> tuple[int, tuple[float, float], tuple[str, ...]] | None:
        """``(right, (low, high), places per repeat)`` of one answerable question (exact
        Clopper-Pearson interval of ``right / R``), or None when it is not one."""
        i = self._index.get(qid)
        if i is None:
            return None
        right = int(self.outcomes[i].sum())
        low, high = clopper_pearson_bounds(np.array([right]), np.array([self.repeats]),
                                           self.confidence)  # fmt: skip
        places = () if self.places is None else tuple(str(p) for p in self.places[i])
        return right, (float(low[0]), float(high[0])), places

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the numbers every format shows."""

        def passes(results: tuple[PassKResult, ...]) -> list[dict[str, Any]]:
            return [
                {"k": r.k, "value": r.statistic, "ci_low": r.confidence_interval.low,
                 "ci_high": r.confidence_interval.high, "method": r.method}
                for r in results
            ]  # fmt: skip

        budget = self.budget
        return {
            "metric": self.metric,
            "repeats": self.repeats,
            "seeds": list(self.seeds),
            "n_questions": self.n_questions,
            "undecided": self.undecided,
            "mean": None if self.mean is None else {
                "value": self.mean.statistic, "ci_low": self.mean.confidence_interval.low,
                "ci_high": self.mean.confidence_interval.high, "method": self.mean.method,
            },
            "variance_budget": None if budget is None else {
                "components": budget.components, "shares": budget.shares,
                "variance_of_mean": budget.variance_of_mean, "method": budget.method,
                "narrowing_double_repeats": budget.narrowing(repeats=2 * budget.n_repeats),
                "narrowing_double_questions": budget.narrowing(questions=2 * budget.n_questions),
            },
            "flaky": [
                {"id": self.ids[f.index], "right": f.right, "repeats": f.repeats,
                 "ci_low": f.confidence_interval.low, "ci_high": f.confidence_interval.high,
                 "disagreement": f.disagreement}
                for f in self.flaky
            ],
            "pass@k": passes(self.pass_at),
            "pass^k": passes(self.pass_all),
            "stages": None if self.stages is None else self.stages.to_dict(),
        }  # fmt: skip


def stage_flakiness(places: np.ndarray) -> StageFlakiness:
    """Count the questions whose repeats land at different places, by the stage they part at.

    A place is ``ok``, a stage key (died there) or ``unjudged at KEY``; the stages a repeat
    passed are those before its place.  Questions part at the earliest stage some repeat did
    not pass while another did: the minimum over its repeats of the stages passed.

    >>> stage_flakiness(np.array([["ok", "4-generation"], ["ok", "ok"],
    ...                           ["1-retrieval", "3-refusal"], ["ok", "unjudged at 2-evidence"]]))
    StageFlakiness(changed=3, n=4, by_stage={'1-retrieval': 1, '2-evidence': 1, \
'3-refusal': 0, '4-generation': 1})
    """
    passed = np.vectorize(_passed, otypes=[int])(places) if places.size else places.astype(int)
    parts = passed.min(axis=1)
    changed = passed.max(axis=1) != parts
    by_stage = {key: int(np.count_nonzero(changed & (parts == j))) for j, key in
                enumerate(STAGE_KEYS)}  # fmt: skip
    return StageFlakiness(int(changed.sum()), int(places.shape[0]), by_stage)


def _passed(place: str) -> int:
    """Stages passed before ``place`` (4 for ``ok``)."""
    if place == OK:
        return len(STAGE_KEYS)
    return STAGE_KEYS.index(place.removeprefix("unjudged at "))


def analyse_outcomes(
    ids: Sequence[str],
    outcomes: Any,
    *,
    places: np.ndarray | None = None,
    judge: np.ndarray | None = None,
    name: str = "",
    path: str = "",
    metric: str = "correct",
    undecided: int = 0,
    seeds: Sequence[int] = (),
    confidence: float = 0.95,
) -> RepeatsAnalysis:
    """:class:`RepeatsAnalysis` of an ``(n, R)`` array of 0/1 outcomes (``R >= 2``);
    ``judge`` an ``(n, R, J)`` array of the judge's repeated verdicts, for the judge level of
    the variance budget.

    >>> a = analyse_outcomes(["q1", "q2", "q3"], [[1, 1, 1], [1, 0, 0], [0, 0, 0]])
    >>> [a.ids[f.index] for f in a.flaky], round(a.pass_all[-1].statistic, 3)
    (['q2'], 0.333)
    """
    y = np.asarray(outcomes, dtype=float)
    if y.ndim != 2 or y.shape[1] < 2 or y.shape[0] != len(ids):
        raise InputError(f"outcomes: expected shape ({len(ids)}, R >= 2), found {y.shape}")
    ks = range(1, y.shape[1] + 1)
    budget = None
    if y.shape[0] >= 2:
        budget = variance_budget(judge if judge is not None else y)
    return RepeatsAnalysis(
        name=name, path=path, metric=metric, ids=tuple(ids), outcomes=y,
        mean=None if y.shape[0] < 2 else repeated_mean_interval(y, confidence=confidence),
        budget=budget,
        flaky=tuple(flaky_questions(y, confidence=confidence)),
        pass_at=tuple(pass_k(y, k, "pass@k", confidence=confidence) for k in ks),
        pass_all=tuple(pass_k(y, k, "pass^k", confidence=confidence) for k in ks),
        stages=None if places is None else stage_flakiness(places),
        places=places, undecided=undecided, seeds=tuple(seeds), confidence=confidence,
        _index={qid: i for i, qid in enumerate(ids)},
    )  # fmt: skip


def repeat_places(
    saved: SavedRun,
    *,
    k: int | None = None,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """``(answerable ids, places, correct)``: each repeat of ``saved`` walked through the
    funnel as :func:`~ragaudit.diagnose.funnel.compute_funnel` walks a run (same ``k``,
    labels, texts): ``places[i, r]`` where question ``i`` landed in repeat ``r``, and
    ``correct[i, r]`` its end-to-end verdict by the funnel's one rule (1 correct, 0 not, -1
    undecided; :func:`~ragaudit.data.saved_run.summary.correct_verdict`)."""
    columns: list[np.ndarray] = []
    verdicts: list[np.ndarray] = []
    ids: tuple[str, ...] = ()
    for r in range(saved.repeats):
        run = saved.repeat(r)
        cut = run.k if k is None else k
        answers = {} if labels is None else answer_chunks(labels, run.config)[0]
        outcomes = stage_outcomes(run, cut, resliced=cut != run.k, answers=answers,
                                  chunk_texts=chunk_texts, where=run_source(run))  # fmt: skip
        found = place_questions(outcomes)
        these = tuple(str(q) for q in found.ids)
        if r and these != ids:
            raise InputError(f"{run_source(saved)}: repeat {r} holds other questions than "
                             "repeat 0 (every repeat answers the same questions)")  # fmt: skip
        ids = these
        place = np.full(len(ids), OK, dtype=object)
        position = {qid: i for i, qid in enumerate(ids)}
        for key, died in found.died.items():
            place[[position[q] for q in died]] = key
        for u in found.unjudged:
            place[position[u.id]] = f"unjudged at {u.stage}"
        columns.append(place)
        verdicts.append(np.asarray(outcomes.correct, dtype=int))
    if not ids:
        return ids, np.zeros((0, saved.repeats), str), np.zeros((0, saved.repeats), int)
    return ids, np.column_stack(columns).astype(str), np.column_stack(verdicts)


def _judge_level(saved: SavedRun, ids: Sequence[str], metric: str) -> np.ndarray | None:
    """``(n, R, J)`` judge verdicts when every repeat stores ``J >= 2`` complete verdicts of
    ``metric`` for every question in ``ids`` (``--judge-repeats``), else None."""
    if not repeat_scores(saved, metric):  # repeat 0 (the rows' own fields) has none: no level
        return None
    levels = []
    for r in range(saved.repeats):
        scores = repeat_scores(saved.repeat(r), metric)
        rows = [scores.get(qid) for qid in ids]
        if any(row is None or None in row for row in rows):
            return None
        levels.append(np.array(rows, dtype=float))
    if len({level.shape for level in levels}) != 1 or levels[0].shape[1] < 2:
        return None
    return np.stack(levels, axis=1)


def analyse_repeats(
    saved: SavedRun,
    *,
    k: int | None = None,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
    confidence: float = 0.95,
) -> RepeatsAnalysis | None:
    """The repeats of ``saved``'s answerable questions on end-to-end correctness, with their
    funnel places (at ``k``, with ``labels`` and ``chunk_texts`` as the funnel takes them);
    None for an unrepeated run."""
    if saved.repeats < 2:
        return None
    ids, places, correct = repeat_places(saved, k=k, labels=labels, chunk_texts=chunk_texts)
    missing = correct < 0
    if not ids or missing.all():
        return None  # no answerable question, or no correctness verdict: nothing to repeat
    return analyse_outcomes(
        ids, (correct == 1).astype(float), places=places,
        judge=_judge_level(saved, ids, "correct"), name=str(saved.name),
        path=str(saved.path or ""), undecided=int(missing.sum()),
        seeds=tuple(saved.repeat_seeds), confidence=confidence,
    )  # fmt: skip


def run_budget(saved: SavedRun, metric: str = "correct") -> VarianceBudget:
    """The variance budget of ``metric`` over a repeated run's answerable questions (with the
    judge level when every answer carries ``--judge-repeats`` verdicts).  ``correct`` is the
    funnel's end-to-end verdict of each repeat (:func:`repeat_places`; undecided counts as
    not correct, as everywhere); another metric is read from the repeats
    (``SavedRun.repeat_outcomes``), a question missing it in any repeat left out (the budget
    needs every repeat of a question).

    Raises
    ------
    InputError
        An unrepeated run, or fewer than 2 questions left.
    """
    if saved.repeats < 2:
        raise InputError(
            f"{run_source(saved)}: one generation per question; the variance between "
            "generations needs a run made with --repeats R >= 2 (or give the components: "
            "--between-questions and --within)"
        )
    answerable = np.asarray(saved.answerable_flags, dtype=bool)
    ids = tuple(qid for qid, a in zip(saved.ids, answerable, strict=True) if a)
    if metric == "correct":
        ids, _, codes = repeat_places(saved)
        if codes.size and (codes < 0).all():
            raise InputError(
                f"{run_source(saved)}: no repeat of any question has an end-to-end correctness "
                f"verdict; pass --metric, one of {', '.join(saved.metric_names())}"
            )
        outcomes, complete = (codes == 1).astype(float), True
    else:
        outcomes = np.asarray(saved.repeat_outcomes(metric), dtype=float)[answerable]
        kept = np.isfinite(outcomes).all(axis=1)
        outcomes, complete = outcomes[kept], bool(kept.all())
    if outcomes.shape[0] < 2:
        raise InputError(f"{run_source(saved)}: expected at least 2 answerable questions with "
                         f"{metric!r} in every repeat, found {outcomes.shape[0]}")  # fmt: skip
    judge = _judge_level(saved, list(ids), metric) if complete else None
    return variance_budget(outcomes if judge is None else judge)
