"""Where each answerable question lands in the funnel: exactly one place.

:func:`place_questions` takes the per-question stage codes of
:func:`ragaudit.diagnose.stage_outcomes.stage_outcomes` (1 passed, 0 failed, -1 undecided)
and puts every answerable question in exactly one place:

* ``ok``: it passed the four stages;
* a stage key (``1-retrieval`` ... ``4-generation``): the first stage it failed;
* ``unjudged``: it reached a stage no judge could decide (with the stage and the reason).

The stages are walked in order, so a question whose gold document was not retrieved is
``1-retrieval`` whatever its later verdicts (or lack of them).  Stage 1 is decided for every
question that lists a gold document; one that lists none is unjudged at stage 1.

Unjudged questions stop at the stage they could not be judged at: they count in that stage's
denominator (they reached it) and not in its kept count (nobody saw them pass).  Every kept
count, rate and conditional rate is therefore a lower bound, exact when nothing is unjudged,
and the product identity ``p_1 x ... x p_4 = kept_4 / n`` still holds over all answerable
questions.  End-to-end correctness is counted apart, from the correctness verdict alone
(:func:`ragaudit.data.saved_run.summary.correct_verdict`): an unjudged question answered
correctly is correct, and not a failure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragaudit.diagnose.funnel_result import STAGE_KEYS, Unjudged
from ragaudit.diagnose.stage_outcomes import StageOutcomes

__all__ = ["Places", "place_questions"]


@dataclass(frozen=True)
class Places:
    """Every answerable question's place, aligned with ``ids`` (see the module docstring).

    Attributes
    ----------
    ids : ndarray of object
        Question ids, run order.
    strict : ndarray of bool, shape (n, 4)
        Passed stages ``1..j`` (a decided pass at each).
    correct : ndarray of bool
        Answered and judged correct (end to end, whatever the stages said).
    died : dict of str to tuple of str
        Stage key -> ids that failed it (decided failures only).
    unjudged : tuple of Unjudged
        Questions that reached a stage no judge decided.
    ok_ids, lucky : tuple of str
        Passed every stage; failed stage 1 or 2 and answered correctly anyway.
    """

    ids: np.ndarray
    strict: np.ndarray
    correct: np.ndarray
    died: dict[str, tuple[str, ...]]
    unjudged: tuple[Unjudged, ...]
    ok_ids: tuple[str, ...]
    lucky: tuple[str, ...]

    @property
    def n(self) -> int:
        """Answerable questions."""
        return int(self.ids.shape[0])

    @property
    def kept(self) -> np.ndarray:
        """Questions that passed stages ``1..j``, for ``j = 1..4``."""
        return self.strict.sum(axis=0)


def place_questions(outcomes: StageOutcomes) -> Places:
    """Put every answerable question in exactly one place (see the module docstring).

    Examples
    --------
    q1 passes everything; q2's gold document is missing (its evidence verdict is undecided,
    which does not matter: stage 1 failed first); q3 has no evidence verdict but a right answer.

    >>> v = StageOutcomes(ids=np.array(["q1", "q2", "q3"], dtype=object),
    ...     gold_hit=np.array([True, False, True]), evidence=np.array([1, -1, -1]),
    ...     answered=np.array([1, 1, 1]), correct=np.array([1, 0, 1]),
    ...     source=("sufficiency", "", ""), failed=np.array([False, False, False]),
    ...     reasons=(("", "", "", ""), ("", "no verdict", "", ""), ("", "no verdict", "", "")))
    >>> p = place_questions(v)
    >>> p.ok_ids, p.died["1-retrieval"], [(u.id, u.stage, u.correct) for u in p.unjudged]
    (('q1',), ('q2',), [('q3', '2-evidence', True)])
    >>> p.kept.tolist(), int(p.correct.sum())
    ([2, 1, 1, 1], 2)
    """
    ids = outcomes.ids
    n = ids.shape[0]
    correct_code = outcomes.correct
    # stage codes, n x 4: 1 passed, 0 failed, -1 undecided (stage 1 is decided whenever the
    # question lists a gold document)
    gold_known = outcomes.gold_known
    if gold_known is None:
        gold_known = np.ones(n, dtype=bool)
    codes = np.column_stack(
        [
            np.where(gold_known, outcomes.gold_hit.astype(int), -1),
            outcomes.evidence,
            outcomes.answered,
            np.where(outcomes.answered == 0, 0, correct_code),  # a refusal is never correct
        ]
    ).reshape(-1, 4)
    strict = np.cumprod(codes == 1, axis=1).astype(bool)
    # the first stage not passed: failed (0) or undecided (-1); 4 when all passed
    first = np.where(strict.all(axis=1), 4, np.argmin(strict, axis=1))
    stop_code = codes[np.arange(n), np.minimum(first, 3)] if n else np.zeros(0, dtype=int)
    undecided = (first < 4) & (stop_code < 0)
    correct = correct_code == 1
    died = {key: tuple(ids[(first == j) & ~undecided]) for j, key in enumerate(STAGE_KEYS)}
    reasons = outcomes.reasons or (("", "", "", ""),) * n
    unjudged = tuple(
        Unjudged(
            id=str(ids[i]),
            stage=STAGE_KEYS[int(first[i])],
            reason=reasons[i][int(first[i])] or "no verdict",
            correct=None if correct_code[i] < 0 else bool(correct_code[i]),
        )
        for i in np.flatnonzero(undecided)
    )
    lucky = correct & ~undecided & (first < 2)
    return Places(
        ids=ids,
        strict=strict,
        correct=correct,
        died=died,
        unjudged=unjudged,
        ok_ids=tuple(ids[first == 4]),
        lucky=tuple(ids[lucky]),
    )
