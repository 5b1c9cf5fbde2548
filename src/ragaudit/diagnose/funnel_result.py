"""What :func:`ragaudit.diagnose.funnel.compute_funnel` returns: the stages, the questions
that died at each, the unanswerable block, and their JSON / pandas forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragaudit._frames import records_frame
from ragaudit._present import Presentable, short_repr
from ragaudit.data.saved_run.summary import EndToEndCorrect

__all__ = [
    "FIX_HINTS",
    "NOTE_IDS",
    "NO_ANSWERABLE",
    "NO_GOLD",
    "RATE_CI_NAMES",
    "STAGE_KEYS",
    "STAGE_NAMES",
    "UNJUDGED_HINT",
    "FunnelResult",
    "Stage",
    "Unanswerable",
    "Unjudged",
    "listed",
    "unjudged_hint",
]

#: Ids a warning or a note names before "and N more" (the JSON lists every one), so that a
#: run with 100,000 unjudged questions gets one readable line, not megabytes.
NOTE_IDS = 20


def listed(items: tuple[str, ...] | list[str], sep: str = ", ", limit: int = NOTE_IDS) -> str:
    """The first ``limit`` items joined by ``sep``, then how many more there are.

    >>> listed(["q1", "q2"]), listed(["q1", "q2", "q3"], "; ", limit=2)
    ('q1, q2', 'q1; q2; and 1 more')
    """
    if len(items) <= limit:
        return sep.join(items)
    return f"{sep.join(items[:limit])}{sep}and {len(items) - limit:,} more"


#: Stages 3 and 4 count only questions that passed the stages before them, so their names
#: say so: "answered" alone is the run's count over any context, and "end-to-end correct"
#: adds the questions answered right by luck (issue 32: one label per number).
STAGE_NAMES: tuple[str, ...] = (
    "gold doc retrieved",
    "evidence in the context",
    "answered with the evidence",
    "correct through the funnel",
)
STAGE_KEYS: tuple[str, ...] = ("1-retrieval", "2-evidence", "3-refusal", "4-generation")
NO_ANSWERABLE = "no answerable questions, so every rate of the funnel is 0/0 (undefined, not 0)"
#: The one line when no answerable question names its gold documents (``{n}``: how many).
NO_GOLD = (
    "no gold documents: none of the {n} answerable questions lists its gold documents "
    "(sources), so no stage of the funnel can be measured (undefined, not 0); pass --golden "
    "FILE (a golden set with sources) to ragaudit import, or list each question's sources in "
    "the golden set"
)
FIX_HINTS: dict[str, str] = {
    "1-retrieval": "no gold document in the top-k: work on retrieval (hybrid search, query "
    "rewriting, a larger k)",
    "2-evidence": "right document, wrong chunk: revisit chunk size and overlap, add a reranker",
    "3-refusal": "evidence present, model refused: relax the refusal instruction in the prompt",
    "4-generation": "evidence present, answer wrong: stronger generator or prompt; audit the judge",
}
#: The way out of an unjudged question, named wherever unjudged questions are reported.
UNJUDGED_HINT = (
    "give the question keywords (or a reference answer that states the facts), or run the "
    "LLM judges (ragaudit run --judges llm, or ragaudit judge RUN)"
)

_RETRY_HINT = "re-run the same `ragaudit run` command to retry the failed answers (it resumes)"
_SOURCES_HINT = "list each question's gold documents (sources) in the golden set"


def unjudged_hint(reasons: Any) -> str:
    """The way out for unjudged questions with these reasons: a generation error is retried,
    a question without gold documents needs its sources, a missing verdict needs a reference
    answer, keywords or a judge.

    >>> unjudged_hint(["generation error: HTTP 500"]).startswith("re-run")
    True
    """
    hints: dict[str, None] = {}
    for reason in (str(r) for r in reasons):
        if reason.startswith("generation error"):
            hints[_RETRY_HINT] = None
        elif reason.startswith("no gold document"):
            hints[_SOURCES_HINT] = None
        else:
            hints[UNJUDGED_HINT] = None
    return "; ".join(hints) or UNJUDGED_HINT


@dataclass(frozen=True)
class Unjudged:
    """An answerable question that reached a stage no judge could decide.

    Attributes
    ----------
    id : str
    stage : str
        The stage key it could not be judged at (``1-retrieval`` only when the question lists
        no gold document; ``2-evidence``, ``3-refusal``, ``4-generation``).
    reason : str
        Why (a generation error, a failed judge, or the judge's own reason).
    correct : bool or None
        Its end-to-end correctness verdict, decided apart (None: unjudged too).
    """

    id: str
    stage: str
    reason: str
    correct: bool | None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "stage", "reason", "correct"}``."""
        return {"id": self.id, "stage": self.stage, "reason": self.reason, "correct": self.correct}


@dataclass(frozen=True)
class Stage:
    """One funnel stage.

    Attributes
    ----------
    name : str
        Human-readable stage name.
    kept : int
        Questions that passed this stage and every earlier one.
    rate : float or None
        ``kept / n`` (None when ``n == 0``: 0/0 is undefined).
    conditional : float or None
        ``kept / kept_previous`` (None when no question reached the previous stage).
    ci_low, ci_high : float or None
        Interval of ``rate``: Clopper-Pearson by default (None when ``n == 0``).
    provenance : str
        ``"re-computed at k=K"`` or ``"carried over from the run (k=R)"``.
    """

    name: str
    kept: int
    rate: float | None
    conditional: float | None
    ci_low: float | None
    ci_high: float | None
    provenance: str


@dataclass(frozen=True)
class Unanswerable:
    """Questions whose right output is "I don't know".

    Attributes
    ----------
    n : int
        Unanswerable questions with an abstention verdict.
    abstained : int
        Of those, how many the model correctly refused.
    rate : float or None
        ``abstained / n`` (None when ``n == 0``).
    ci_low, ci_high : float or None
        Interval of ``rate``: Clopper-Pearson by default.
    answered_ids : tuple of str
        Unanswerable questions the model answered anyway.
    refused_ids : tuple of str
        Unanswerable questions the model rightly refused.
    unjudged_ids : tuple of str
        Unanswerable questions with no abstention verdict (not in ``n``).
    """

    n: int
    abstained: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    answered_ids: tuple[str, ...]
    refused_ids: tuple[str, ...] = ()
    unjudged_ids: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False)
class FunnelResult(Presentable):
    """Everything :func:`compute_funnel` measured (see the module docstring for definitions).

    ``n`` counts every answerable question; each lands in exactly one of ``ok_ids``,
    ``died[stage]`` or ``unjudged``.  ``correct`` is the one end-to-end count
    (:func:`ragaudit.data.saved_run.summary.end_to_end_correct`).

    With no answerable question (``n == 0``) every rate is 0/0: ``p_correct``,
    ``stage1_rate``, ``correct_end_to_end``, ``gap`` and each stage's ``rate`` are None
    (``null`` in JSON), and ``undefined_reason`` says why.
    """

    run_name: str | None
    k: int
    run_k: int | None
    n: int
    stages: tuple[Stage, ...]
    factors: tuple[float | None, ...]
    p_correct: float | None
    stage1_rate: float | None
    correct_end_to_end: float | None
    gap: float | None
    gap_ci: tuple[float, float] | None
    died: dict[str, tuple[str, ...]]
    ok_ids: tuple[str, ...]
    lucky: tuple[str, ...]
    stage2_source: str
    stage2_source_counts: dict[str, int]
    unanswerable: Unanswerable
    unjudged: tuple[Unjudged, ...]
    correct: EndToEndCorrect
    seed: int
    n_resamples: int
    confidence: float
    notes: tuple[str, ...] = field(default=())
    rate_ci_method: str = "Clopper-Pearson exact"
    gap_ci_method: str = "Tango score"
    undefined_reason: str | None = None

    @property
    def excluded(self) -> dict[str, tuple[str, ...]]:
        """Deprecated: nothing is excluded any more; the unjudged questions grouped as
        ``{"unjudged at STAGE: REASON": ids}`` (read :attr:`unjudged`)."""
        groups: dict[str, list[str]] = {}
        for u in self.unjudged:
            groups.setdefault(f"unjudged at {u.stage}: {u.reason}", []).append(u.id)
        return {reason: tuple(ids) for reason, ids in groups.items()}

    def places(self) -> dict[str, str]:
        """``{question id: where it landed}`` for every question of the run.

        A stage key (died there), ``ok``, ``KEY (correct by luck)``, ``unjudged at KEY:
        REASON`` (``, answered correctly`` when it was), ``unanswerable, refused`` or
        ``unanswerable, answered``.  The drill-down's label (``show``, the report page).
        """
        place = {qid: key for key, ids in self.died.items() for qid in ids}
        for qid in self.lucky:
            place[qid] += " (correct by luck)"
        for qid in self.ok_ids:
            place[qid] = "ok"
        for u in self.unjudged:
            right = ", answered correctly" if u.correct else ""
            place[u.id] = f"unjudged at {u.stage}{right}: {u.reason}"
        for qid in self.unanswerable.refused_ids:
            place[qid] = "unanswerable, refused"
        for qid in self.unanswerable.answered_ids:
            place[qid] = "unanswerable, answered"
        for qid in self.unanswerable.unjudged_ids:
            place[qid] = "unanswerable, unjudged (no abstention verdict)"
        return place

    def failure_ids(self) -> tuple[str, ...]:
        """Questions that did not end well: answerable ones not answered correctly (died or
        unjudged) and unanswerable ones answered.  A question answered correctly is never
        among them, whatever stage it stopped at."""
        right = set(self.ok_ids) | set(self.lucky)
        right |= {u.id for u in self.unjudged if u.correct}
        failed = [qid for ids in self.died.values() for qid in ids if qid not in right]
        failed += [u.id for u in self.unjudged if not u.correct]
        return (*failed, *self.unanswerable.answered_ids)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--format json`` output of ``ragaudit funnel``)."""
        return {
            "run": self.run_name,
            "k": self.k,
            "run_k": self.run_k,
            "n": self.n,
            "stages": [
                {
                    "stage": STAGE_KEYS[i],
                    "name": s.name,
                    "kept": s.kept,
                    "rate": s.rate,
                    "conditional": s.conditional,
                    "ci_low": s.ci_low,
                    "ci_high": s.ci_high,
                    "provenance": s.provenance,
                }
                for i, s in enumerate(self.stages)
            ],
            "factors": list(self.factors),
            "p_correct": self.p_correct,
            "stage1_rate": self.stage1_rate,
            "correct_end_to_end": self.correct_end_to_end,
            "gap": self.gap,
            "gap_ci": None if self.gap_ci is None else list(self.gap_ci),
            "undefined_reason": self.undefined_reason,
            "died": {key: list(ids) for key, ids in self.died.items()},
            "ok": len(self.ok_ids),
            "lucky": list(self.lucky),
            "stage2_source": self.stage2_source,
            "stage2_source_counts": dict(self.stage2_source_counts),
            "unanswerable": {
                "n": self.unanswerable.n,
                "abstained": self.unanswerable.abstained,
                "correct_abstention_rate": self.unanswerable.rate,
                "ci_low": self.unanswerable.ci_low,
                "ci_high": self.unanswerable.ci_high,
                "answered_ids": list(self.unanswerable.answered_ids),
            },
            "unjudged": [u.to_dict() for u in self.unjudged],
            "unjudged_hint": unjudged_hint(u.reason for u in self.unjudged)
            if self.unjudged
            else None,
            "correct": self.correct.to_dict(),
            "bootstrap": {
                "seed": self.seed,
                "n_resamples": self.n_resamples,
                "confidence": self.confidence,
                "method": "percentile, questions resampled with replacement",
                "used_for": "every interval with rate_ci='bootstrap'",
            },
            "rate_ci_method": self.rate_ci_method,
            "gap_ci_method": self.gap_ci_method,
            "notes": list(self.notes),
        }

    def to_pandas(self) -> Any:
        """One row per stage (index ``stage``): kept, rate, conditional, interval,
        provenance.  Needs the ``pandas`` extra."""
        return records_frame(self.to_dict()["stages"], index="stage")

    def __repr__(self) -> str:
        def rate(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.3f}"

        return short_repr(
            f"FunnelResult(run={self.run_name!r}, k={self.k}, n={self.n})",
            [
                *(f"{s.name}: {s.kept}/{self.n} ({rate(s.rate)})" for s in self.stages),
                f"correct end to end: {rate(self.correct_end_to_end)}, "
                f"lucky: {len(self.lucky)}, unanswerable: {self.unanswerable.n}",
            ],
        )


RATE_CI_NAMES = {
    "clopper-pearson": "Clopper-Pearson exact",
    "wilson": "Wilson score",
    "wilson-cc": "Wilson score, continuity-corrected",
    "bootstrap": "percentile bootstrap",
}
