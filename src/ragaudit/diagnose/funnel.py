"""The RAG funnel: why recall@k is not accuracy.

End-to-end correctness of an answerable question factors into four conditional stages::

    P(correct) = P(gold doc retrieved)                      <- what hit@k / recall@k report
               x P(evidence in the context | gold doc retrieved)
               x P(answered with the evidence | evidence in the context)
               x P(correct through the funnel | answered with the evidence)

:func:`compute_funnel` measures every factor from a saved run (``docs/saved-run-format.md``),
assigns each failing question to the first stage it failed, counts the questions that were
answered correctly *although* an earlier stage failed ("correct by luck"), and reports the
unanswerable questions separately.

The strict funnel
-----------------
A question is *kept* at stage ``j`` when it passed stages ``1..j``.  A question answered
correctly after failing stage 1 or 2 therefore *died* at that earlier stage: the funnel
describes the pipeline working as designed, and such an answer came from somewhere the labels
do not point to.  This keeps the product identity exact (the factors telescope)::

    p_1 x p_2 x p_3 x p_4 = kept_4 / n

Lucky questions are listed on their own row and added back for end-to-end correctness, the
number the user experiences::

    correct_end_to_end = (kept_4 + lucky + unjudged answered correctly) / n
    gap                = kept_1 / n - correct_end_to_end

Every answerable question lands in exactly one place: ``ok``, the first stage it failed, or
*unjudged* at the first stage no judge could decide (:mod:`ragaudit.diagnose.funnel_places`).
Unjudged questions stay in ``n`` and in the denominator of the stage they reached, not in its
kept count, so kept counts and rates are lower bounds (exact without unjudged questions) and
the identity above still holds.  End-to-end correctness is the one count of
:func:`ragaudit.data.saved_run.summary.end_to_end_correct`: answerable questions answered and
judged correct, over all answerable questions.

Re-slicing at another k
-----------------------
``retrieved`` may be deeper than the run's own ``k``.  At ``k != run k``, stage 1 is
re-computed from ``retrieved[:k]``; stage 2 is re-computed only when chunk labels decide it
(an answer chunk among the top-k retrieved chunks) or, given the chunk texts, from the
reference keywords (all of them in the top-k chunk texts, the offline evidence judge's rule);
otherwise judge verdicts (``sufficiency``, ``evidence_in_context``) are carried over.  The
run's own ``answer_chunk_in_context`` verdict decides stage 2 only at the run's k, when no
other judge did.  Stages
3-4 were produced from the run's own context and are always carried over, which the result
states in :attr:`FunnelResult.notes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit._validate import check_fraction, check_int
from ragaudit.data.records import as_saved_run
from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.data.saved_run.summary import EndToEndCorrect, correct_refusal
from ragaudit.diagnose.funnel_places import Places, place_questions
from ragaudit.diagnose.funnel_result import (
    FIX_HINTS,
    NO_ANSWERABLE,
    NO_GOLD,
    RATE_CI_NAMES,
    STAGE_KEYS,
    STAGE_NAMES,
    UNJUDGED_HINT,
    FunnelResult,
    Stage,
    Unanswerable,
    Unjudged,
    listed,
    unjudged_hint,
)
from ragaudit.diagnose.stage_outcomes import (
    RECOMPUTED_SOURCES,
    STAGE2_SOURCES,
    answer_chunks,
    stage_outcomes,
    unanswerable_questions,
)
from ragaudit.exceptions import InputError
from ragaudit.stats.intervals import (
    PROPORTION_METHODS,
    clopper_pearson_bounds,
    tango_bounds,
    wilson_bounds,
)
from ragaudit.stats.policy import choose_interval
from ragaudit.stats.resampling import bootstrap_means

__all__ = [
    "FIX_HINTS",
    "STAGE_KEYS",
    "STAGE_NAMES",
    "UNJUDGED_HINT",
    "FunnelResult",
    "Stage",
    "Unanswerable",
    "Unjudged",
    "compute_funnel",
    "run_source",
    "unjudged_hint",
    "unjudged_note",
]

# ----------------------------------------------------------------------------- saved runs


def run_source(run: SavedRun) -> str:
    """The run's file for messages, or ``"saved run"`` when it was built in memory."""
    return run.path or "saved run"


# ----------------------------------------------------------------------------- bootstrap


def _percentile_means(
    indicators: np.ndarray, n_resamples: int, rng: np.random.Generator, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each column mean, resampling rows (questions), with
    the one bootstrap kernel of :mod:`ragaudit.stats.resampling` (bounded memory)."""
    theta_b = bootstrap_means(indicators, n_resamples, rng)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(theta_b, [alpha, 1.0 - alpha], axis=0)
    return low, high


def _rate_bounds(
    kept: np.ndarray, n: int, confidence: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson or Wilson bounds of ``kept / n`` (see ``ragaudit.stats.intervals``)."""
    k = np.asarray(kept, dtype=float)
    if method == "clopper-pearson":
        return clopper_pearson_bounds(k, np.full(k.shape, n), confidence)
    return wilson_bounds(k, np.full(k.shape, n), confidence, correction=method == "wilson-cc")


# ----------------------------------------------------------------------------- the funnel


def compute_funnel(
    saved: SavedRun | Mapping[str, Any] | str,
    *,
    k: int | None = None,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rate_ci: str = "clopper-pearson",
) -> FunnelResult:
    """Measure the four-stage funnel of a saved run at ``k``.

    Parameters
    ----------
    saved : SavedRun, dict or path
        A saved run (``docs/saved-run-format.md``); a dict or a file is validated by the
        saved-run loader.  Read: ``config.k``, ``retrieval_depth`` and each question's
        ``answerable``, ``gold_docs``, ``retrieved``, ``context_ids``, ``keywords`` and
        ``judges``.
    k : int, optional
        Cut-off for stage 1 (and stage 2 when chunk labels decide it).  Defaults to the run's
        ``config.k``.  Must not exceed the depth the run retrieved.
    labels : ChunkLabels or Qrels, optional
        Chunk-level labels; a labelled question passes stage 2 when one of its answer chunks
        (grade 2) is in the context (``context_ids`` at the run's k, ``retrieved[:k]``
        otherwise).  Unlabelled questions fall back to the ``sufficiency`` judge, then to the
        ``evidence_in_context`` judge, then (at the run's own k) to the run's
        ``answer_chunk_in_context`` verdict (chunk labels given when the run was made, e.g.
        reference contexts of an imported run).
    chunk_texts : mapping of str to str, optional
        ``{chunk_id: text}``.  Used only when ``k`` differs from the run's k: an unlabelled
        question with ``keywords`` passes stage 2 when every keyword occurs in its top-k
        chunk texts (re-computed instead of carrying the run's judge verdict over).
    seed : int, default 0
        Seed of the bootstrap (the same inputs and seed give identical intervals).
    n_resamples : int, default 2000
        Bootstrap resamples of the questions.
    confidence : float, default 0.95
        Level of the intervals.
    rate_ci : {"clopper-pearson", "wilson", "wilson-cc", "bootstrap"}, default "clopper-pearson"
        Interval of each stage rate and of the correct-abstention rate
        (:func:`~ragaudit.stats.proportion_interval`).  Clopper-Pearson never covers less
        than ``confidence``, which matters for rates near 1: at rate 0.98 and n = 50 the
        percentile bootstrap covers about 64% and plain Wilson about 92%.  The gap, a
        difference of two rates on the same questions, gets Tango's paired score interval
        (:func:`~ragaudit.stats.paired_difference_interval`); ``"bootstrap"`` gives every
        interval the paired percentile bootstrap instead.

    Returns
    -------
    FunnelResult
        Stages with ``kept``, ``rate = kept/n``, ``conditional = kept_j/kept_{j-1}`` and
        intervals; ``p_correct = prod(conditional) = kept_4/n``; ``died`` (first
        failed stage -> ids); ``lucky`` ids; ``unjudged`` (questions that reached a stage
        no judge decided: generation errors, failed judges, missing verdicts, with stage and
        reason; in ``n``, never dropped); ``correct``, the one end-to-end count over the
        answerable questions; the unanswerable block.

    Raises
    ------
    InputError
        ``k < 1``, ``k`` deeper than the run retrieved, labels for a different chunking, or a
        run with no way to decide stage 2.

    Examples
    --------
    Three answerable questions: q1 passes everything, q2 retrieves the gold document but the
    evidence is not in the context, q3 never retrieves it yet answers correctly (luck).

    >>> def row(qid, doc, evidence, correct):
    ...     return {"id": qid, "answerable": True, "gold_docs": ["G"],
    ...             "retrieved": [{"chunk_id": doc + "#0", "doc_id": doc, "rank": 1}],
    ...             "judges": {"abstained": False, "correct": correct,
    ...                        "evidence_in_context": evidence}}
    >>> run = {"config": {"k": 1}, "rows": [row("q1", "G", True, True),
    ...        row("q2", "G", False, False), row("q3", "X", False, True)]}
    >>> f = compute_funnel(run, n_resamples=200)
    >>> [s.kept for s in f.stages], f.died["2-evidence"], f.lucky
    ([2, 1, 1, 1], ('q2',), ('q3',))
    >>> round(f.p_correct, 3), round(f.correct_end_to_end, 3), round(f.gap, 3)
    (0.333, 0.667, 0.0)
    """
    confidence = check_fraction(confidence, "confidence")
    n_resamples = check_int(n_resamples, "n_resamples")
    if rate_ci not in (*PROPORTION_METHODS, "bootstrap"):
        raise InputError(
            f"rate_ci: expected one of {', '.join((*PROPORTION_METHODS, 'bootstrap'))}, "
            f"found {rate_ci!r}"
        )
    run = as_saved_run(saved)
    where = run_source(run)
    run_k = run.k
    if k is None:
        k = run_k
    k = check_int(k, "k")

    questions = run.questions
    depth = run.config.retrieval_depth
    if depth is None:
        depth = max((len(q.retrieved) for q in questions), default=0)
    if k > depth and k != run_k:
        raise InputError(
            f"k={k} is deeper than the run retrieved (retrieval depth {depth}); re-run the "
            f"pipeline with retrieval_depth >= {k} or choose k <= {depth}"
        )
    resliced = k != run_k

    answers = {} if labels is None else answer_chunks(labels, run.config)[0]
    unanswerable_idx = [i for i, a in enumerate(run.answerable_flags) if not a]

    # stage outcomes from the run's columns (stage_outcomes.py), one place each (funnel_places)
    outcomes = stage_outcomes(
        run,
        k,
        resliced=resliced,
        answers=answers,
        chunk_texts=chunk_texts,
        where=where,
    )
    places = place_questions(outcomes)
    # the one end-to-end count (end_to_end_correct), from the correct_verdict calls the
    # stage outcomes already made: each question read once, not twice
    correct = EndToEndCorrect(
        int(np.count_nonzero(outcomes.correct == 1)),
        len(outcomes.ids),
        {
            qid: why[3]
            for qid, code, why in zip(
                outcomes.ids.tolist(), outcomes.correct.tolist(), outcomes.reasons, strict=True
            )
            if code < 0
        },
    )
    n, kept = places.n, places.kept
    rng = np.random.default_rng(seed)
    low, high = _intervals(places, rng, n_resamples, confidence, rate_ci)
    gold = outcomes.gold_known  # none named (import without --golden): stages undefined, not 0
    no_gold = bool(n) and gold is not None and not gold.any()
    measured = n and not no_gold
    rates: list[float | None] = [float(r) for r in kept / n] if measured else [None] * 4

    decided = [s for s in outcomes.source if s]
    counts = {s: decided.count(s) for s in STAGE2_SOURCES if s in decided}
    stage2_source = next(iter(counts)) if len(counts) == 1 else ("mixed" if counts else "none")
    n_decided2 = len(decided)
    stage2_recomputed = (not resliced) or (
        n_decided2 > 0 and sum(counts.get(s, 0) for s in RECOMPUTED_SOURCES) == n_decided2
    )
    provenance_now = f"re-computed at k={k}"
    carried = f"carried over from the run (k={run_k})"
    provenances = (
        provenance_now,
        provenance_now if stage2_recomputed else carried,
        provenance_now if not resliced else carried,
        provenance_now if not resliced else carried,
    )
    stages: list[Stage] = []
    factors: list[float | None] = []
    previous = n
    for j in range(4):
        conditional = float(kept[j] / previous) if previous and measured else None
        factors.append(conditional)
        stages.append(
            Stage(
                name=STAGE_NAMES[j],
                kept=int(kept[j]),
                rate=rates[j],
                conditional=conditional,
                ci_low=float(low[j]) if measured else None,
                ci_high=float(high[j]) if measured else None,
                provenance=provenances[j],
            )
        )
        previous = int(kept[j])

    unanswerable = _unanswerable(
        unanswerable_questions(run, unanswerable_idx), rng, n_resamples, confidence, rate_ci
    )
    undefined = None if n else NO_ANSWERABLE
    if n and correct.rate is None:
        why = sorted({reason.split(":", 1)[0] for reason in correct.unjudged.values()})
        undefined = (
            f"all {n} answerable questions are unjudged ({', '.join(why)}), so P(correct), "
            "end-to-end correctness and the gap are unknown (anywhere in [0, 1]), not 0"
        )
    undefined = NO_GOLD.format(n=n) if no_gold else undefined
    notes: list[str] = [] if undefined is None else [undefined]
    if resliced:
        carried_n = n_decided2 - sum(counts.get(s, 0) for s in RECOMPUTED_SOURCES)
        stage2_note = (
            f"stage 2 re-computed on retrieved[:{k}] (chunk labels or keywords)"
            if stage2_recomputed
            else f"stage 2 judge verdicts carried over from the run's own context (k={run_k}) "
            f"for {carried_n} of {n_decided2} questions (pass --labels or --corpus to "
            "re-compute them)"
        )
        notes.append(
            f"k={k} differs from the run's k={run_k}: stage 1 re-computed from retrieved[:{k}]; "
            f"{stage2_note}; stages 3-4 carried over (the answers were generated from the run's "
            f"k={run_k} context); re-run the pipeline at k={k} to measure them"
        )
    if places.unjudged and not no_gold:  # with no gold at all, the one line above says it
        notes.append(unjudged_note(places.unjudged, n))
    if n and not decided:
        notes.append(
            f"{where}: stage 2 is decided for no question: the rows have no 'sufficiency' or "
            "'evidence_in_context' verdict; pass chunk labels (--labels FILE)"
        )
    if unanswerable.unjudged:
        notes.append(
            f"{len(unanswerable.unjudged)} unanswerable question(s) left out of the abstention "
            "rate (no abstention verdict): "
            + listed([f"{qid} ({why})" for qid, why in unanswerable.unjudged.items()])
        )

    # 0/0 is undefined, not 0: with no answerable question every rate is None
    stage1 = rates[0]
    correct_e2e = correct.rate
    return FunnelResult(
        run_name=run.name,
        k=k,
        run_k=run_k,
        n=n,
        stages=tuple(stages),
        factors=tuple(factors),
        p_correct=float(kept[3] / n) if correct_e2e is not None and measured else None,
        stage1_rate=stage1,
        correct_end_to_end=correct_e2e,
        gap=None if stage1 is None or correct_e2e is None else stage1 - correct_e2e,
        gap_ci=(float(low[5]), float(high[5])) if correct_e2e is not None and measured else None,
        died=places.died,
        ok_ids=places.ok_ids,
        lucky=places.lucky,
        stage2_source=stage2_source,
        stage2_source_counts=counts,
        unanswerable=unanswerable.result,
        unjudged=places.unjudged,
        correct=correct,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        notes=tuple(notes),
        rate_ci_method=RATE_CI_NAMES[rate_ci],
        gap_ci_method="percentile bootstrap" if rate_ci == "bootstrap" else "Tango score",
        undefined_reason=undefined,
    )


def unjudged_note(unjudged: Sequence[Unjudged], n: int) -> str:
    """The warning about unjudged questions: how many, which, why, and the way out.

    >>> print(unjudged_note([Unjudged("q7", "2-evidence", "no verdict", True)], 10))
    1 of 10 answerable question(s) unjudged (counted in the funnel's denominators, not as \
passed; the stage rates are lower bounds): q7 at 2-evidence (no verdict; answered correctly). \
To judge them: give the question keywords (or a reference answer that states the facts), \
or run the LLM judges \
(ragaudit run --judges llm, or ragaudit judge RUN)
    """
    named = listed(
        [f"{u.id} at {u.stage} ({u.reason}{'; answered correctly' if u.correct else ''})"
         for u in unjudged],
        "; ",
    )  # fmt: skip
    return (
        f"{len(unjudged)} of {n} answerable question(s) unjudged (counted in the funnel's "
        f"denominators, not as passed; the stage rates are lower bounds): {named}. "
        f"To judge them: {unjudged_hint(u.reason for u in unjudged)}"
    )


def _intervals(
    places: Places,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    rate_ci: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of the four stage rates, end-to-end correctness and the gap (6 columns).

    Every column is over all ``n`` answerable questions: the percentile bootstrap of the
    column means, replaced (unless ``rate_ci="bootstrap"``) by exact or score bounds of the
    stage rates and Tango's paired score interval of the gap.
    """
    n = places.n
    low, high = np.full(6, np.nan), np.full(6, np.nan)
    if not n:
        return low, high
    strict, e2e = places.strict, places.correct
    # the one interval policy: 0/1 stage rates are exact (or the chosen Wilson) and the gap
    # gets a paired score interval, so the bootstrap runs only when one is asked for.  It
    # costs n_resamples x n draws (4 s at 100,000 questions), and each column's resampled
    # means depend only on the shared draws, so the columns it skips change no other.
    # Column 4 (end-to-end correctness) has no interval on the result: never resampled.
    exact = choose_interval(strict, method=rate_ci) == "exact"
    score = choose_interval(strict[:, 0], e2e, method=rate_ci) == "score"
    booted = [j for j, skip in ((0, exact), (1, exact), (2, exact), (3, exact), (5, score))
              if not skip]  # fmt: skip
    if booted:
        indicators = np.column_stack([strict, e2e, strict[:, 0].astype(int) - e2e]).astype(float)
        low[booted], high[booted] = _percentile_means(
            indicators[:, booted], n_resamples, rng, confidence
        )
    if exact:
        low[:4], high[:4] = _rate_bounds(places.kept, n, confidence, rate_ci)
    # the gap, a difference of two rates on the same questions, gets Tango's paired score
    # interval from its 2x2 table (stage 1 passed but wrong; lucky).
    if score:
        gap_low, gap_high = tango_bounds(
            np.array([np.sum(strict[:, 0] & ~e2e)]),
            np.array([np.sum(~strict[:, 0] & e2e)]),
            np.array([n]),
            confidence,
        )
        low[5], high[5] = gap_low[0], gap_high[0]
    return low, high


@dataclass(frozen=True)
class _UnanswerableBlock:
    result: Unanswerable
    unjudged: dict[str, str]


def _unanswerable(
    questions: Sequence[QuestionResult],
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    rate_ci: str = "clopper-pearson",
) -> _UnanswerableBlock:
    """The correct-abstention rate of the unanswerable questions, counted by
    :func:`~ragaudit.data.saved_run.summary.correct_refusal` (the one place)."""
    refusal = correct_refusal(questions)
    unjudged = tuple(refusal.unjudged)
    if not refusal.n:
        empty = Unanswerable(0, 0, None, None, None, (), unjudged_ids=unjudged)
        return _UnanswerableBlock(empty, dict(refusal.unjudged))
    decided = [q for q in questions if q.id not in refusal.unjudged]
    abstained = np.array([float(bool(q.judges.abstained)) for q in decided])
    if choose_interval(abstained, method=rate_ci) == "exact":
        low, high = _rate_bounds(np.array([refusal.count]), refusal.n, confidence, rate_ci)
    else:  # only when the bootstrap is asked for, as for the stages: same draws as ever
        low, high = _percentile_means(abstained[:, None], n_resamples, rng, confidence)
    result = Unanswerable(
        n=refusal.n,
        abstained=refusal.count,
        rate=refusal.rate,
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        answered_ids=tuple(q.id for q in decided if not q.judges.abstained),
        refused_ids=tuple(q.id for q in decided if q.judges.abstained),
        unjudged_ids=unjudged,
    )
    return _UnanswerableBlock(result, dict(refusal.unjudged))
