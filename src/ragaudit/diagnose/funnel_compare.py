"""Two runs' funnels compared stage by stage: which conditional rate moved, and who moved.

The chapter's exercise 1 asks which conditional probability of the funnel moves most between
two configurations, and whether the stage that loses the most questions changes.  Each run's
own conditional rate :math:`p_j = \\text{kept}_j / \\text{kept}_{j-1}` has its own denominator
(the questions that reached stage :math:`j` in *that* run), so two of them are not paired.
:func:`compare_funnels` therefore reports, for every stage :math:`j`:

* each run's conditional rate, over its own denominator;
* the **paired** conditional difference on the questions that reached stage :math:`j` in both
  runs (passed stages :math:`1..j-1` under A and under B):

  .. math:: \\Delta_j = \\frac{1}{m_j}\\sum_{i \\in R_j} \\big(B_{ij} - A_{ij}\\big),
            \\qquad R_j = \\{i : \\text{reached } j \\text{ in A and in B}\\},\\ m_j = |R_j|

  where :math:`A_{ij}` is 1 when question :math:`i` passed stage :math:`j` under A.  Its
  interval inverts McNemar's exact test (it excludes 0 exactly when p < alpha) and its p-value
  is McNemar's exact test on the questions of :math:`R_j` that passed in one run only (the
  same pair every 0/1 comparison of ragaudit prints);
* the stage that loses the most questions in each run (ties: the earliest stage);
* every question whose place in the funnel differs between the runs (``2-evidence`` under A,
  ``3-refusal`` under B), so a reader can open them.

Only answerable questions held by both runs are paired; a question unjudged at a stage has not
passed it (the funnel's rule), and one unjudged at or before stage :math:`j` under either run is
not in :math:`R_{j+1}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.diagnose.funnel_result import STAGE_KEYS, STAGE_NAMES, FunnelResult
from ragaudit.stats.intervals import paired_difference_interval
from ragaudit.stats.mcnemar import mcnemar_exact

__all__ = [
    "FunnelComparison",
    "MovedQuestion",
    "PairedChange",
    "StageComparison",
    "compare_funnels",
    "paired_change",
]


@dataclass(frozen=True)
class StageComparison:
    """One stage of two funnels.

    Attributes
    ----------
    stage, name : str
        ``2-evidence`` and ``evidence in the context``, etc.
    a_kept, a_reached, b_kept, b_reached : int
        Each run's own count of questions that passed / reached the stage.
    a_conditional, b_conditional : float or None
        ``kept / reached`` of each run (None when nothing reached it).
    paired_n : int
        Questions that reached the stage in both runs.
    a_only, b_only : tuple of str
        Of those, the questions that passed it only under A / only under B.
    difference, ci_low, ci_high : float or None
        Paired conditional difference B - A and the interval that inverts McNemar's exact test.
    pvalue : float
        McNemar's exact two-sided p-value (1.0 when no question differs).
    """

    stage: str
    name: str
    a_kept: int
    a_reached: int
    b_kept: int
    b_reached: int
    a_conditional: float | None
    b_conditional: float | None
    paired_n: int
    a_only: tuple[str, ...]
    b_only: tuple[str, ...]
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pvalue: float


@dataclass(frozen=True)
class MovedQuestion:
    """A question whose place in the funnel differs between the runs."""

    id: str
    a: str
    b: str


@dataclass(frozen=True)
class FunnelComparison:
    """What :func:`compare_funnels` returns.

    Attributes
    ----------
    a_name, b_name : str or None
    n : int
        Answerable questions held by both runs.
    stages : tuple of StageComparison
    most_lost : tuple of (str or None, str or None)
        The stage that loses the most questions under A and under B (None: nothing lost).
    moved : tuple of MovedQuestion
        In question order.
    only_in_a, only_in_b : tuple of str
        Answerable questions one run does not hold (not compared).
    """

    a_name: str | None
    b_name: str | None
    n: int
    stages: tuple[StageComparison, ...]
    most_lost: tuple[str | None, str | None]
    moved: tuple[MovedQuestion, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]

    @property
    def largest_move(self) -> StageComparison | None:
        """The stage whose paired conditional rate moved most (absolute difference)."""
        moved = [s for s in self.stages if s.difference is not None and s.difference != 0]
        return max(moved, key=lambda s: abs(s.difference or 0.0), default=None)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``ragaudit funnel A B --format json``)."""
        return {
            "a": self.a_name,
            "b": self.b_name,
            "n": self.n,
            "stages": [
                {
                    "stage": s.stage,
                    "name": s.name,
                    "a": {"kept": s.a_kept, "reached": s.a_reached, "conditional": s.a_conditional},
                    "b": {"kept": s.b_kept, "reached": s.b_reached, "conditional": s.b_conditional},
                    "paired_n": s.paired_n,
                    "difference": s.difference,
                    "ci_low": s.ci_low,
                    "ci_high": s.ci_high,
                    "ci_method": "McNemar exact inverted",
                    "pvalue": s.pvalue,
                    "p_method": "exact McNemar",
                    "a_only": list(s.a_only),
                    "b_only": list(s.b_only),
                }
                for s in self.stages
            ],
            "most_lost": {"a": self.most_lost[0], "b": self.most_lost[1]},
            "moved": [{"id": m.id, "a": m.a, "b": m.b} for m in self.moved],
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
        }


@dataclass(frozen=True)
class PairedChange:
    """A 0/1 outcome of the same questions under runs A and B (:func:`paired_change`)."""

    a_only: tuple[str, ...]
    b_only: tuple[str, ...]
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pvalue: float


def paired_change(ids: Sequence[str] | np.ndarray, a: np.ndarray, b: np.ndarray) -> PairedChange:
    """B - A of a 0/1 outcome on the same questions: McNemar's exact table and test
    (:func:`~ragaudit.stats.mcnemar.mcnemar_exact`) with the interval that inverts that test for the
    difference; which questions held the outcome only under A, only under B.

    >>> c = paired_change(["q1", "q2", "q3"], np.array([1, 1, 0]), np.array([1, 0, 0]))
    >>> c.a_only, c.b_only, round(c.difference, 3), c.pvalue
    (('q2',), (), -0.333, 1.0)
    """
    a_bool, b_bool = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    labels = np.asarray(ids, dtype=object)
    a_only = tuple(str(q) for q in labels[a_bool & ~b_bool])
    b_only = tuple(str(q) for q in labels[b_bool & ~a_bool])
    if not labels.size:
        return PairedChange(a_only, b_only, None, None, None, 1.0)
    table = mcnemar_exact(a_bool.astype(float), b_bool.astype(float))
    ci = paired_difference_interval(
        table.both, table.a_only, table.b_only, table.neither
    ).confidence_interval
    difference = (table.b_only - table.a_only) / table.n
    return PairedChange(a_only, b_only, difference, ci.low, ci.high, table.pvalue)


def _stage_reached(funnel: FunnelResult) -> dict[str, int]:
    """``{question id: stages passed}`` for every answerable question (4 = passed all)."""
    passed: dict[str, int] = {}
    for j, key in enumerate(STAGE_KEYS):
        for qid in funnel.died.get(key, ()):
            passed[qid] = j
    for u in funnel.unjudged:
        passed[u.id] = STAGE_KEYS.index(u.stage) if u.stage in STAGE_KEYS else 0
    for qid in funnel.ok_ids:
        passed[qid] = 4
    return passed


def _most_lost(funnel: FunnelResult) -> str | None:
    lost = [len(funnel.died.get(key, ())) for key in STAGE_KEYS]
    return STAGE_KEYS[int(np.argmax(lost))] if max(lost, default=0) > 0 else None


def _places(funnel: FunnelResult) -> Mapping[str, str]:
    return funnel.places()


def compare_funnels(a: FunnelResult, b: FunnelResult) -> FunnelComparison:
    """Compare two runs' funnels stage by stage (see the module docstring).

    Parameters
    ----------
    a, b : FunnelResult
        The funnels of runs A and B (:func:`~ragaudit.diagnose.funnel.compute_funnel`), of the
        same golden set.

    Returns
    -------
    FunnelComparison

    Examples
    --------
    q2 loses its evidence under A only; q3 refuses under B only.

    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> def run(name, evidence_q2, refuses_q3):
    ...     def row(qid, evidence=True, abstained=False):
    ...         return {"id": qid, "answerable": True, "gold_docs": ["G"],
    ...                 "retrieved": [{"chunk_id": "G#0", "doc_id": "G"}],
    ...                 "judges": {"abstained": abstained,
    ...                            "correct": evidence and not abstained,
    ...                            "evidence_in_context": evidence}}
    ...     rows = [row("q1"), row("q2", evidence=evidence_q2), row("q3", abstained=refuses_q3)]
    ...     return compute_funnel({"name": name, "config": {"k": 1}, "rows": rows})
    >>> cmp = compare_funnels(run("A", False, False), run("B", True, True))
    >>> [(s.stage, s.a_conditional, s.b_conditional, s.paired_n) for s in cmp.stages[1:3]]
    [('2-evidence', 0.6666666666666666, 1.0, 3), ('3-refusal', 1.0, 0.6666666666666666, 2)]
    >>> [(m.id, m.a, m.b) for m in cmp.moved]
    [('q2', '2-evidence', 'ok'), ('q3', 'ok', '3-refusal')]
    >>> cmp.most_lost
    ('2-evidence', '3-refusal')
    """
    reached_a, reached_b = _stage_reached(a), _stage_reached(b)
    common = [q for q in reached_a if q in reached_b]
    passed_a = np.array([reached_a[q] for q in common], dtype=np.int64)
    passed_b = np.array([reached_b[q] for q in common], dtype=np.int64)
    ids = np.array(common, dtype=object)
    own_a = np.fromiter(reached_a.values(), dtype=np.int64, count=len(reached_a))
    own_b = np.fromiter(reached_b.values(), dtype=np.int64, count=len(reached_b))
    stages = []
    for j, (key, name) in enumerate(zip(STAGE_KEYS, STAGE_NAMES, strict=True)):
        own = []
        for passed in (own_a, own_b):
            reached = int(np.sum(passed >= j))
            kept = int(np.sum(passed > j))
            own.append((kept, reached, kept / reached if reached else None))
        both = (passed_a >= j) & (passed_b >= j)
        change = paired_change(ids[both], passed_a[both] > j, passed_b[both] > j)
        (a_kept, a_reached, a_rate), (b_kept, b_reached, b_rate) = own
        stage = StageComparison(key, name, a_kept, a_reached, b_kept, b_reached, a_rate, b_rate,
                                int(both.sum()), change.a_only, change.b_only, change.difference,
                                change.ci_low, change.ci_high, change.pvalue)  # fmt: skip
        stages.append(stage)
    place_a, place_b = _places(a), _places(b)
    moved = tuple(
        MovedQuestion(q, place_a[q], place_b[q]) for q in common if place_a.get(q) != place_b.get(q)
    )
    return FunnelComparison(
        a.run_name,
        b.run_name,
        len(common),
        tuple(stages),
        (_most_lost(a), _most_lost(b)),
        moved,
        tuple(q for q in reached_a if q not in reached_b),
        tuple(q for q in reached_b if q not in reached_a),
    )
