"""The audit: the dashboard, the funnels, label bias, clustering, calibration and the paired
comparisons of one or more saved runs, computed once.

:func:`build_audit` takes saved runs (or their files) and computes everything ``ragaudit
report`` and ``ragaudit demo`` show, from the same functions the single-purpose commands use
(``funnel``, ``labels bias``, ``compare``, ``calibrate``), so the page and their JSON agree;
the dashboard numbers are documented in :mod:`ragaudit.diagnose.dashboard`.  With several
runs, each later run is compared with the first, and Holm-Bonferroni (Holm 1979) adjusts the
p-values across every row of every pair shown.  The result is the frozen
:class:`~ragaudit.diagnose.audit_result.Audit`; ``ragaudit.reports`` only renders it.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragaudit.data.human_grades import read_human_grades_file
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.summary import count_judge_errors
from ragaudit.diagnose.audit_result import Audit, PairView, RunAudit
from ragaudit.diagnose.calibration import calibrate
from ragaudit.diagnose.confounding import check_same_data, config_differences
from ragaudit.diagnose.dashboard import dashboard_rows, flakiness_row
from ragaudit.diagnose.dashboard_repeats import repeated_judged_rows
from ragaudit.diagnose.drilldown import (
    answer_chunk_sets,
    question_stages,
    question_view,
    show_value,
)
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.diagnose.funnel_compare import compare_funnels
from ragaudit.diagnose.label_bias import compute_label_bias
from ragaudit.diagnose.noise import clustered_means
from ragaudit.diagnose.repeats import analyse_repeats
from ragaudit.diagnose.unjudged import pair_judged_gap, run_judged
from ragaudit.exceptions import InputError
from ragaudit.metrics.judged import JUDGED_MARGIN, JUDGED_THRESHOLD
from ragaudit.stats.compare import Comparison, compare_runs
from ragaudit.stats.multiple import holm_bonferroni
from ragaudit.stats.options import short_method

__all__ = ["COMPARED_METRICS", "Audit", "PairView", "RunAudit", "build_audit"]

#: Metrics the paired comparison tests (when both runs have them).
COMPARED_METRICS: tuple[str, ...] = ("recall@k", "ndcg@k", "precision@k", "correct", "faithfulness")


_CONFIG_FIRST = (
    "k",
    "chunker",
    "chunk_size",
    "chunk_overlap",
    "retriever",
    "retrieval_depth",
    "embedding_model",
    "generator",
    "llm_generator",
    "judges",
    "llm_judges",
    "seed",
    "ragaudit_version",
)


def _config(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    order = [key for key in _CONFIG_FIRST if key in config]
    order += sorted(key for key in config if key not in _CONFIG_FIRST)
    return tuple((key, show_value(config[key])) for key in order)


#: What makes a run's chunk ids: the chunk texts (built with the first run's chunking) are
#: checked against a later run only when these agree (the labels' chunking keys).
_CHUNKING = ("chunker", "chunk_size", "chunk_overlap", "corpus_sha256")


def _corpus_chunks(
    chunk_texts: Mapping[str, str] | None, first: SavedRun, run: SavedRun
) -> Collection[str] | None:
    """The corpus's chunk ids to check ``run``'s retrieved items against, or None when there
    is no corpus or ``run`` was chunked differently from the first run."""
    if chunk_texts is None:
        return None
    if any(str(first.config.get(key)) != str(run.config.get(key)) for key in _CHUNKING):
        return None
    return chunk_texts.keys()


#: Failing questions the page opens per stage (``report --max-drilldowns``).
DEFAULT_MAX_DRILLDOWNS = 50


def _run_audit(
    saved: SavedRun,
    labels: Any,
    chunk_texts: Mapping[str, str] | None,
    seed: int,
    resamples: int,
    cluster_by: str | None = None,
    human: Mapping[str, float] | None = None,
    max_drilldowns: int | None = None,
    judged_threshold: float = JUDGED_THRESHOLD,
    corpus_chunks: Collection[str] | None = None,
) -> RunAudit:
    notes: list[str] = []
    bias = None
    if labels is not None:
        try:
            bias = compute_label_bias(saved, labels)
            notes += list(bias.notes)
        except InputError as exc:
            notes.append(f"chunk labels not used for this run: {exc}")
            labels = None
    # labels: this chunking's; chunk_texts: the corpus chunked as this run (else None)
    judged = run_judged(saved, labels, threshold=judged_threshold, corpus_chunks=corpus_chunks)
    funnel = compute_funnel(saved, labels=labels, seed=seed, n_resamples=resamples)
    notes = list(funnel.notes) + notes
    answer_chunks = answer_chunk_sets(labels) if labels is not None else {}
    stage = question_stages(funnel)
    # the funnel's own failures: a question answered correctly is never one, whatever stage
    # it stopped at (correct by luck, or unjudged at a stage but judged right)
    failed = set(funnel.failure_ids())
    # at most max_drilldowns opened per stage (the first in run order); the rest are counted
    shown: dict[str, int] = {}
    left_out: dict[str, int] = {}
    kept = []
    for q in saved.questions:
        if q.id not in failed:
            continue
        where = stage[q.id]
        if max_drilldowns is not None and shown.get(where, 0) >= max_drilldowns:
            left_out[where] = left_out.get(where, 0) + 1
            continue
        shown[where] = shown.get(where, 0) + 1
        kept.append(q)
    failures = tuple(
        question_view(q, stage[q.id], funnel.k, chunk_texts, answer_chunks) for q in kept
    )
    answerable = [q for q in saved.questions if q.answerable]
    answered = sum(1 for q in answerable if q.metric("answered"))
    repeats = analyse_repeats(saved, labels=labels)  # at the funnel's k, with its labels
    dashboard = repeated_judged_rows(
        saved, dashboard_rows(saved, funnel, bias, judged), repeats, funnel.k
    )
    return RunAudit(
        name=str(saved.name),
        k=funnel.k,
        config=_config(saved.config),
        dashboard=dashboard,
        funnel=funnel,
        bias=bias,
        failures=failures,
        answered=answered,
        n_answerable=len(answerable),
        notes=tuple(notes),
        generation_errors=tuple(q.id for q in saved.questions if q.generation_error),
        judge_errors=count_judge_errors(saved.questions),
        clustered=None if cluster_by is None else clustered_means(saved, cluster_by),
        calibration=None if human is None else calibrate(saved, human),
        failures_left_out=left_out,
        max_drilldowns=max_drilldowns,
        judged=judged,
        repeats=repeats,
        judge_audit=saved.judge_audit,
    )


def _sentence(pair: PairView, names: Sequence[str], alpha: float) -> str:
    moved, still = [], []
    for row, p_holm in zip(pair.comparison.metrics, pair.holm, strict=True):
        ci = row.confidence_interval
        excludes_zero = ci.low > 0 or ci.high < 0
        if p_holm < alpha and excludes_zero:
            level = f"{100 * pair.comparison.confidence:g}% CI, {short_method(row.ci_method)}"
            moved.append(
                f"{row.metric} {row.statistic:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}] ({level})"
            )
        else:  # what the interval rules out, not "did not move" (issue 21)
            bound = max(abs(ci.low), abs(ci.high))
            still.append(f"{row.metric} (beyond ±{bound:.3f})")
    head = f"{names[pair.b]} vs {names[pair.a]}: "
    real = "moved for real: " + ("; ".join(moved) if moved else "nothing")
    level = f"{100 * pair.comparison.confidence:g}%"
    rest = (
        f"; no evidence of a change (interval includes 0 or Holm-adjusted p >= {alpha:g}), "
        f"changes beyond ±X ruled out at {level}: " + (", ".join(still) if still else "nothing")
    )
    changed = [
        f" On {row.metric}, {row.mcnemar.a_only + row.mcnemar.b_only} of {row.n} questions "
        "changed between the runs."
        for row in pair.comparison.metrics
        if row.mcnemar is not None
    ]
    return head + real + rest + "." + "".join(changed)


RunInput = SavedRun | str | os.PathLike[str]
HumanInput = Mapping[str, float] | str | os.PathLike[str] | None


def _saved_run(run: Any, i: int) -> SavedRun:
    if isinstance(run, SavedRun):
        return run
    if isinstance(run, str | os.PathLike):
        return load_saved_run(os.fspath(run))
    raise InputError(
        f"runs[{i}]: expected a SavedRun or the path of a saved run, found {type(run).__name__}"
    )


def build_audit(
    runs: RunInput | Sequence[RunInput],
    *,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    compare_resamples: int = 10_000,
    cluster_by: str | None = None,
    human: Sequence[HumanInput] = (),
    max_drilldowns: int | None = DEFAULT_MAX_DRILLDOWNS,
    allow_different_data: bool = False,
    judged_threshold: float = JUDGED_THRESHOLD,
    judged_margin: float = JUDGED_MARGIN,
) -> Audit:
    """Compute the audit of one or more saved runs (what ``ragaudit report`` shows).

    Parameters
    ----------
    runs : SavedRun, path, or a sequence of them
        Saved runs or their files (read by the one saved-run loader); with two or more, each
        later run is compared with the first.
    labels : ChunkLabels, optional
        Chunk labels for the chunk-level recall, the label-bias section and the answer chunks
        of the drill-down (runs with another chunking get a note instead).
    chunk_texts : mapping of str to str, optional
        ``{chunk_id: text}`` shown in the drill-down.
    seed : int, default 0
        Seed of every bootstrap and permutation (printed on the page).
    n_resamples : int, default 2000
        Resamples of the funnel's bootstrap columns, which the page does not show (its
        funnel, dashboard and clustered intervals are exact or betting intervals, no
        resampling).
    compare_resamples : int, default 10000
        Resamples and permutations of the paired comparison (as ``compare``).
    cluster_by : str, optional
        ``source``, ``tag`` or a row field: each run's answerable questions get clustered
        intervals (the dashboard's naive interval and the cluster betting interval beside it,
        with the CR1 design effect)
        and the one-line verdict of :func:`~ragaudit.diagnose.noise.describe_clustering`.
    human : sequence of mappings or paths, optional
        Human verdicts ``{question id: 0 or 1}`` on ``correct`` (or their files, as for
        ``ragaudit calibrate``), one per run in order (None,
        or a shorter sequence, leaves a run uncalibrated): the run's correctness calibrated
        against them (PPI++, :func:`~ragaudit.diagnose.calibration.calibrate`).
    max_drilldowns : int or None, default 50
        Failing questions opened per stage and run (the first ones in run order), and
        questions whose correctness changed opened per pair; the rest are counted on the
        page, and its lists of ids are cut to as many.  None: all of them (a 200,000-question
        run had 36,666, a 63 MB page).
    allow_different_data : bool, default False
        Compare runs whose corpus or golden set differ from the first run's (refused
        otherwise, :func:`~ragaudit.diagnose.confounding.check_same_data`).
    judged_threshold : float, default 0.5
        Each run's judged@k (:func:`~ragaudit.diagnose.unjudged.run_judged`, the share of
        its top k that carries a label) is on the dashboard; questions below this share are
        named in a warning (``RunAudit.judged``).
    judged_margin : float, default 0.1
        A later run whose document-level judged@k differs from the first run's by more (at
        their common depth) gets a note: the comparison favours the run more like the one
        the labels came from (:func:`~ragaudit.diagnose.unjudged.pair_judged_gap`).

    Returns
    -------
    Audit

    Examples
    --------
    Two runs of one question: the answer is right at k=2 only, so correctness moved by +1 on
    one question, which no test calls significant.

    >>> from ragaudit.data.saved_run import SavedRun
    >>> def run(k, correct):
    ...     row = {"id": "q1", "answerable": True, "gold_docs": ["G"],
    ...            "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...            "metrics": {"recall@k": 1.0, "correct": float(correct)},
    ...            "judges": {"abstained": False, "correct": correct, "evidence_in_context": True}}
    ...     return SavedRun.from_dict({"name": f"k{k}", "config": {"k": k}, "rows": [row]})
    >>> audit = build_audit([run(1, False), run(2, True)], n_resamples=50, compare_resamples=50)
    >>> [r.name for r in audit.runs], {d.key: d.value for d in audit.runs[1].dashboard}["correct"]
    (['k1', 'k2'], 1.0)
    >>> "moved for real: nothing" in audit.summary[0], audit.summary[0].split(". ")[-1]
    (True, 'On correct, 1 of 1 questions changed between the runs.')
    >>> [(m.id, m.a, m.b) for m in audit.pairs[0].funnels.moved]  # the funnels compared
    [('q1', '4-generation', 'ok')]
    >>> audit.pairs[0].comparison.config_differences.design_variables
    ('k',)
    """
    from ragaudit._version import version

    if isinstance(runs, SavedRun | str | os.PathLike):
        runs = [runs]  # one run, not the characters of its path
    if isinstance(runs, Mapping) or not isinstance(runs, Sequence):
        raise InputError(
            f"runs: expected a saved run, a path or a list of them, found {type(runs).__name__}"
        )
    saved: list[SavedRun] = [_saved_run(run, i) for i, run in enumerate(runs)]
    verdict_maps: list[Mapping[str, float] | None] = [
        h if h is None or isinstance(h, Mapping) else read_human_grades_file(h) for h in human
    ]
    if not saved:
        raise InputError("runs: expected at least one saved run, found none")
    if len(verdict_maps) > len(saved):
        raise InputError(
            f"--human: expected at most one file of human verdicts per run ({len(saved)}), "
            f"found {len(verdict_maps)}"
        )
    verdicts = [*verdict_maps, *([None] * (len(saved) - len(verdict_maps)))]
    audits = tuple(
        _run_audit(
            s, labels, chunk_texts, seed, n_resamples, cluster_by, h, max_drilldowns,
            judged_threshold, _corpus_chunks(chunk_texts, saved[0], s),
        )
        for s, h in zip(saved, verdicts, strict=True)
    )
    if any(a.repeats is not None for a in audits):  # the flakiness row, for every run
        audits = tuple(replace(a, dashboard=(*a.dashboard, flakiness_row(a.repeats)))
                       for a in audits)  # fmt: skip
    names = [a.name for a in audits]
    raw: list[tuple[int, Comparison]] = []
    notes: list[str] = []
    differences = [config_differences(saved[0], s) for s in saved[1:]]
    for diff in differences:  # refused before any comparison is computed
        check_same_data(diff, allow_different_data)
    for j in range(1, len(saved)):
        a, b = saved[0], saved[j]
        gap = pair_judged_gap(
            a, b, margin=judged_margin, known=(audits[0].judged, audits[j].judged)
        )
        if gap:
            notes.append(gap)
        metrics_a = {m for q in a.questions for m in q.metrics}
        metrics_b = {m for q in b.questions for m in q.metrics}
        wanted = [m for m in COMPARED_METRICS if m in metrics_a and m in metrics_b]
        if not wanted:
            notes.append(f"{b.name} not compared with {a.name}: no metric in common")
            continue
        try:
            comparison = compare_runs(
                a, b, wanted, seed=seed, questions="answerable",
                n_resamples=compare_resamples, n_permutations=compare_resamples,
            )  # fmt: skip
        except InputError as exc:
            notes.append(f"{b.name} not compared with {a.name}: {exc}")
            continue
        raw.append((j, replace(comparison, config_differences=differences[j - 1])))
    pvalues = [m.pvalue for _, c in raw for m in c.metrics]
    adjusted = list(holm_bonferroni(pvalues)) if pvalues else []
    pairs: list[PairView] = []
    by_id = [s.by_id() for s in saved]
    stages = [question_stages(a.funnel) for a in audits]
    for j, comparison in raw:
        holm = tuple(float(adjusted.pop(0)) for _ in comparison.metrics)
        discordant = []
        changed: tuple[str, ...] = ()
        for row in comparison.metrics:
            if row.metric == "correct" and row.mcnemar is not None:
                changed = tuple(row.mcnemar.discordant_ids)
                # opened as the failures are: the first max_drilldowns, the rest counted
                for qid in changed if max_drilldowns is None else changed[:max_drilldowns]:
                    views = tuple(
                        question_view(
                            by_id[i][qid], stages[i].get(qid, ""), audits[i].k, chunk_texts, {}
                        )
                        for i in (0, j)
                    )
                    discordant.append((views[0], views[1]))
        funnels = compare_funnels(audits[0].funnel, audits[j].funnel)
        pairs.append(PairView(0, j, comparison, holm, tuple(discordant), funnels, changed))
    alpha = 0.05
    summary = tuple(_sentence(p, names, alpha) for p in pairs)
    return Audit(audits, tuple(pairs), seed, version(), n_resamples, summary, tuple(notes))
