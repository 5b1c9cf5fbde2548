"""The RAG funnel: why recall@k is not accuracy.

End-to-end correctness of an answerable question factors into four conditional stages::

    P(correct) = P(gold doc retrieved)                      <- what hit@k / recall@k report
               x P(evidence in the context | gold doc retrieved)
               x P(model answered | evidence in the context)
               x P(answer correct | model answered)

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

    correct_end_to_end = (kept_4 + lucky) / n
    gap                = kept_1 / n - correct_end_to_end

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
from typing import Any

import numpy as np

from ragaudit._validate import check_fraction, check_int
from ragaudit.data.records import as_saved_run
from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.diagnose.funnel_result import (
    FIX_HINTS,
    NO_ANSWERABLE,
    RATE_CI_NAMES,
    STAGE_KEYS,
    STAGE_NAMES,
    FunnelResult,
    Stage,
    Unanswerable,
)
from ragaudit.diagnose.funnel_verdicts import (
    RECOMPUTED_SOURCES,
    STAGE2_SOURCES,
    answer_chunks,
    stage_verdicts,
)
from ragaudit.exceptions import InputError
from ragaudit.stats.intervals import (
    PROPORTION_METHODS,
    clopper_pearson_bounds,
    tango_bounds,
    wilson_bounds,
)
from ragaudit.stats.policy import choose_interval
from ragaudit.stats.resampling import _bootstrap_means

__all__ = [
    "FIX_HINTS",
    "STAGE_KEYS",
    "STAGE_NAMES",
    "FunnelResult",
    "Stage",
    "Unanswerable",
    "compute_funnel",
    "run_source",
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
    theta_b = _bootstrap_means(indicators, n_resamples, rng)
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
        failed stage -> ids); ``lucky`` ids; the unanswerable block; ``excluded`` questions
        whose verdicts are missing (generation errors, judge errors), by reason.

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
    ranked = [q.ranked for q in questions]
    depth = run.config.retrieval_depth
    if depth is None:
        depth = max((len(r) for r in ranked), default=0)
    if k > depth and k != run_k:
        raise InputError(
            f"k={k} is deeper than the run retrieved (retrieval depth {depth}); re-run the "
            f"pipeline with retrieval_depth >= {k} or choose k <= {depth}"
        )
    resliced = k != run_k

    answers = {} if labels is None else answer_chunks(labels, run.config)[0]
    unanswerable_idx = [i for i, q in enumerate(questions) if not q.answerable]

    # per-question verdicts (the parsing loop: funnel_verdicts.py); the arithmetic is vectorised
    verdicts = stage_verdicts(
        questions,
        ranked,
        k,
        resliced=resliced,
        answers=answers,
        chunk_texts=chunk_texts,
        where=where,
    )
    ids_arr, evidence_arr = verdicts.ids, verdicts.evidence
    answered_arr, correct_arr = verdicts.answered, verdicts.correct
    # a question whose answer could not be generated has no verdicts: excluded and counted
    failed = verdicts.failed
    no_stage2 = (evidence_arr < 0) & ~failed
    no_verdict = ((answered_arr < 0) | ((answered_arr == 1) & (correct_arr < 0))) & ~failed
    if (~failed).any() and no_stage2[~failed].all():
        raise InputError(
            f"{where}: stage 2 cannot be decided: the rows have no 'sufficiency' or "
            "'evidence_in_context' judge; pass chunk labels (--labels FILE)"
        )
    excluded: dict[str, tuple[str, ...]] = {}
    if failed.any():
        excluded["generation error"] = tuple(ids_arr[failed])
    if no_stage2.any():
        excluded["no stage-2 verdict"] = tuple(ids_arr[no_stage2])
    if (no_verdict & ~no_stage2).any():
        excluded["judge error"] = tuple(ids_arr[no_verdict & ~no_stage2])
    keep = ~(failed | no_stage2 | no_verdict)

    ids_arr = ids_arr[keep]
    raw = np.column_stack(
        [
            verdicts.gold_hit[keep],
            evidence_arr[keep] == 1,
            answered_arr[keep] == 1,
            (answered_arr[keep] == 1) & (correct_arr[keep] == 1),  # a refusal is never correct
        ]
    ).reshape(-1, 4)
    n = raw.shape[0]
    strict = np.cumprod(raw, axis=1).astype(bool)  # passed stages 1..j
    kept = strict.sum(axis=0)
    lucky_mask = raw[:, 3] & ~strict[:, 3]
    e2e = raw[:, 3]

    # first failed stage of each failing question (lucky ones died there too: strict funnel)
    first_fail = np.where(strict.all(axis=1), 4, np.argmin(strict, axis=1))
    died = {key: tuple(ids_arr[first_fail == j]) for j, key in enumerate(STAGE_KEYS)}

    rng = np.random.default_rng(seed)
    indicators = np.column_stack([strict, e2e, strict[:, 0].astype(int) - e2e]).astype(float)
    if n:
        low, high = _percentile_means(indicators, n_resamples, rng, confidence)
        # the one interval policy: 0/1 stage rates are exact (or the chosen Wilson) ...
        if choose_interval(strict, method=rate_ci) == "exact":
            low[:4], high[:4] = _rate_bounds(kept, n, confidence, rate_ci)
        # ... and the gap, a difference of two rates on the same questions, gets Tango's
        # paired score interval from its 2x2 table (stage 1 passed but wrong; lucky).
        if choose_interval(strict[:, 0], e2e, method=rate_ci) == "score":
            gap_low, gap_high = tango_bounds(
                np.array([np.sum(strict[:, 0] & ~e2e)]),
                np.array([np.sum(~strict[:, 0] & e2e)]),
                np.array([n]),
                confidence,
            )
            low[5], high[5] = gap_low[0], gap_high[0]
    rates: list[float | None] = [float(r) for r in kept / n] if n else [None] * 4

    stage_sources = [s for s, k_ in zip(verdicts.source, keep, strict=True) if k_]
    counts = {s: stage_sources.count(s) for s in STAGE2_SOURCES if s in stage_sources}
    stage2_source = next(iter(counts)) if len(counts) == 1 else ("mixed" if counts else "none")

    provenance_now = f"re-computed at k={k}"
    carried = f"carried over from the run (k={run_k})"
    stage2_recomputed = (not resliced) or (
        n > 0 and sum(counts.get(s, 0) for s in RECOMPUTED_SOURCES) == n
    )
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
        conditional = float(kept[j] / previous) if previous else None
        factors.append(conditional)
        stages.append(
            Stage(
                name=STAGE_NAMES[j],
                kept=int(kept[j]),
                rate=rates[j],
                conditional=conditional,
                ci_low=float(low[j]) if n else None,
                ci_high=float(high[j]) if n else None,
                provenance=provenances[j],
            )
        )
        previous = int(kept[j])

    unanswerable = _unanswerable(
        [questions[i] for i in unanswerable_idx], rng, n_resamples, confidence, rate_ci
    )

    undefined = None
    if not n:
        n_excluded = sum(len(v) for v in excluded.values())
        undefined = (
            f"all {n_excluded} answerable questions are excluded "
            f"({', '.join(excluded)}), so every rate of the funnel is 0/0 (undefined, not 0)"
            if n_excluded
            else NO_ANSWERABLE
        )
    notes: list[str] = [] if undefined is None else [undefined]
    if resliced:
        carried_n = n - sum(counts.get(s, 0) for s in RECOMPUTED_SOURCES)
        stage2_note = (
            f"stage 2 re-computed on retrieved[:{k}] (chunk labels or keywords)"
            if stage2_recomputed
            else f"stage 2 judge verdicts carried over from the run's own context (k={run_k}) "
            f"for {carried_n} of {n} questions (pass --labels or --corpus to re-compute them)"
        )
        notes.append(
            f"k={k} differs from the run's k={run_k}: stage 1 re-computed from retrieved[:{k}]; "
            f"{stage2_note}; stages 3-4 carried over (the answers were generated from the run's "
            f"k={run_k} context); re-run the pipeline at k={k} to measure them"
        )
    for reason, excluded_ids in excluded.items():
        notes.append(
            f"{len(excluded_ids)} answerable question(s) excluded ({reason}): "
            + ", ".join(excluded_ids)
        )
    unanswered = [questions[i].id for i in unanswerable_idx if questions[i].generation_error]
    if unanswered:
        notes.append(
            f"{len(unanswered)} unanswerable question(s) left out of the abstention rate "
            "(generation error): " + ", ".join(unanswered)
        )

    # 0/0 is undefined, not 0: with no answerable question every rate is None
    p_correct = float(kept[3] / n) if n else None
    correct_e2e = float(e2e.mean()) if n else None
    stage1 = rates[0]
    return FunnelResult(
        run_name=run.name,
        k=k,
        run_k=run_k,
        n=n,
        stages=tuple(stages),
        factors=tuple(factors),
        p_correct=p_correct,
        stage1_rate=stage1,
        correct_end_to_end=correct_e2e,
        gap=None if stage1 is None or correct_e2e is None else stage1 - correct_e2e,
        gap_ci=(float(low[5]), float(high[5])) if n else None,
        died=died,
        ok_ids=tuple(ids_arr[first_fail == 4]),
        lucky=tuple(ids_arr[lucky_mask]),
        stage2_source=stage2_source,
        stage2_source_counts=counts,
        unanswerable=unanswerable,
        excluded=excluded,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
        notes=tuple(notes),
        rate_ci_method=RATE_CI_NAMES[rate_ci],
        gap_ci_method="percentile bootstrap" if rate_ci == "bootstrap" else "Tango score",
        undefined_reason=undefined,
    )


def _unanswerable(
    questions: Sequence[QuestionResult],
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
    rate_ci: str = "clopper-pearson",
) -> Unanswerable:
    decided = [q for q in questions if q.judges.abstained is not None]
    if not decided:
        return Unanswerable(0, 0, None, None, None, ())
    abstained = np.array([float(bool(q.judges.abstained)) for q in decided])
    low, high = _percentile_means(abstained[:, None], n_resamples, rng, confidence)
    if choose_interval(abstained, method=rate_ci) == "exact":
        low, high = _rate_bounds(np.array([abstained.sum()]), len(decided), confidence, rate_ci)
    return Unanswerable(
        n=len(decided),
        abstained=int(abstained.sum()),
        rate=float(abstained.mean()),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        answered_ids=tuple(q.id for q in decided if not q.judges.abstained),
    )
