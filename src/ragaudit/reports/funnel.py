"""The funnel as a report: the stage table, the product identity, where questions die."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ragaudit.diagnose.funnel import (
    FIX_HINTS,
    STAGE_KEYS,
    FunnelResult,
    unjudged_hint,
)
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.reports.id_lists import ALL_IDS_HINT, SHOWN_IDS, cut_ids
from ragaudit.reports.judged import judged_levels
from ragaudit.reports.report import Report, Section, Table, Text

__all__ = ["funnel_report", "interval_note", "text_bar", "with_run_judged"]

_SOURCE_NAMES = {
    "chunk_labels": "chunk labels (an answer chunk, grade 2, is in the context)",
    "keywords_in_top_k": "reference keywords found in the top-k chunk texts",
    "sufficiency": "the LLM sufficiency judge",
    "evidence_in_context": "the offline evidence-in-context judge",
    "answer_chunk_in_context": "the run's chunk labels (an answer chunk was in the context)",
}


def text_bar(rate: float | None, width: int = 20) -> str:
    """A fixed-width bar for a rate in [0, 1] (blank for an undefined rate).

    >>> text_bar(0.5, 10)
    '#####.....'
    >>> text_bar(None)
    ''
    """
    if rate is None:
        return ""
    filled = min(width, max(0, math.floor(rate * width + 0.5)))
    return "#" * filled + "." * (width - filled)


def _f3(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def interval_note(result: FunnelResult) -> str:
    """How the funnel's intervals were computed, in one line (the terminal report and the page).

    Examples
    --------
    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["G"], "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}]}
    >>> interval_note(compute_funnel(run, n_resamples=10))
    'intervals: stage and abstention rates Clopper-Pearson exact; the gap Tango score (paired)'
    """
    if result.gap_ci_method != "percentile bootstrap":
        return (
            f"intervals: stage and abstention rates {result.rate_ci_method}; the gap "
            f"{result.gap_ci_method} (paired)"
        )
    return (
        f"intervals: paired percentile bootstrap ({result.n_resamples} resamples of questions, "
        f"seed {result.seed})"
    )


def funnel_report(result: FunnelResult, max_ids: int | None = SHOWN_IDS) -> Report:
    """Build the report of a funnel (terminal, Markdown and HTML show the same numbers).

    Each list of question ids (where questions die, the lucky, the unanswerable answered)
    shows its first ``max_ids`` and counts the rest (None: every id;
    :func:`~ragaudit.reports.id_lists.cut_ids`); the JSON payload holds every id.

    Examples
    --------
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["G"], "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}]}
    >>> from ragaudit.diagnose.funnel import compute_funnel
    >>> report = funnel_report(compute_funnel(run, n_resamples=10))
    >>> report.sections[0].title
    'The funnel (k=1, n=1 answerable questions)'
    """
    pct = round(result.confidence * 100)
    rows: list[tuple[str, ...]] = [
        (
            "0 asked",
            str(result.n),
            _f3(1.0 if result.n else None),
            "",
            "",
            text_bar(1.0 if result.n else None),
            "",
        )
    ]
    markers = {0: "<- what recall@k / hit@k report", 3: "<- what the user experiences"}
    for j, stage in enumerate(result.stages):
        ci = "" if stage.ci_low is None else f"[{stage.ci_low:.3f}, {stage.ci_high:.3f}]"
        rows.append(
            (
                f"{j + 1} {stage.name}",
                # a stage that could not be measured (no gold documents) keeps "-", not 0
                "-" if stage.rate is None and result.n else str(stage.kept),
                _f3(stage.rate),
                ci,  # the interval of "of n", beside it
                _f3(stage.conditional),
                text_bar(stage.rate),
                markers.get(j, ""),
            )
        )
    stage_table = Table(
        ("stage", "kept", "of n", f"{pct}% CI (of n)", "conditional", "bar", ""),
        tuple(rows),
        align="lrrrrll",
    )
    factors = " x ".join(_f3(f) for f in result.factors)
    lucky_share = len(result.lucky) / result.n if result.n else 0.0
    right_unjudged = sum(1 for u in result.unjudged if u.correct)
    gap_ci = (
        ""
        if result.gap_ci is None
        else f"   {pct}% CI [{result.gap_ci[0]:+.3f}, {result.gap_ci[1]:+.3f}]"
    )
    counts = ", ".join(f"{src} {n}" for src, n in result.stage2_source_counts.items())
    source_line = (
        f"stage 2 decided by: {_SOURCE_NAMES.get(result.stage2_source, result.stage2_source)}"
        if result.stage2_source in _SOURCE_NAMES
        else f"stage 2 decided by: {result.stage2_source} ({counts})"
    )
    intervals = interval_note(result)
    if (
        result.p_correct is None
        or result.stage1_rate is None
        or result.correct_end_to_end is None
        or result.gap is None
    ):
        stage1 = "undefined" if result.stage1_rate is None else f"{result.stage1_rate:.3f}"
        e2e = "undefined" if result.correct_end_to_end is None else result.correct.line()
        numbers: tuple[str, ...] = (
            f"P(correct) = undefined: {result.undefined_reason}",
            f"stage-1 success (hit rate@{result.k}):   {stage1}",
            f"end-to-end correct:             {e2e}",
            "the gap hit rate cannot see:    undefined",
        )
    else:
        unjudged_share = (
            f" + unjudged, answered correctly {right_unjudged} ({right_unjudged / result.n:.3f})"
            if right_unjudged
            else ""
        )
        numbers = (
            f"P(correct) = {factors} = {result.p_correct:.3f}",
            f"stage-1 success (hit rate@{result.k}):   {result.stage1_rate:.3f}",
            f"end-to-end correct:             {result.correct.line()}",
            # how the counts relate: stage 4 counts only the questions through stages 1-3
            f"  = correct through the funnel (stage 4) {result.stages[3].kept} "
            f"({result.p_correct:.3f}) + correct by luck {len(result.lucky)} "
            f"({lucky_share:.3f}){unjudged_share}",
            f"the gap hit rate cannot see:    {result.gap:+.3f}{gap_ci}",
        )
    unjudged = (
        (
            f"unjudged {len(result.unjudged)} of {result.n}: counted in the denominators, not "
            "as passed (the rates are lower bounds; reasons and the way out in the notes)",
        )
        if result.unjudged
        else ()
    )
    identity = Text((*numbers, source_line, intervals, *unjudged), monospace=True)
    title = f"The funnel (k={result.k}, n={result.n} answerable questions)"
    sections = [Section(title, (stage_table, identity))]

    def _ids(ids: tuple[str, ...]) -> str:
        return cut_ids(ids, max_ids, hint=ALL_IDS_HINT)

    die_rows = [
        (
            key,
            str(len(result.died[key])),
            _ids(result.died[key]),
            FIX_HINTS[key] if result.died[key] else "",
        )
        for key in STAGE_KEYS
    ]
    die_rows.append(
        (
            "unjudged",
            str(len(result.unjudged)),
            _ids(tuple(f"{u.id} ({u.stage})" for u in result.unjudged)),
            "no judge decided: " + unjudged_hint(u.reason for u in result.unjudged)
            if result.unjudged
            else "",
        )
    )
    die_rows.append(("ok", str(len(result.ok_ids)), "", ""))
    die_rows.append(
        (
            "correct by luck",
            str(len(result.lucky)),
            _ids(result.lucky),
            "failed stage 1 or 2, answered right anyway (counted as died above)"
            if result.lucky
            else "",
        )
    )
    sections.append(
        Section(
            "Where questions die",
            (Table(("stage", "n", "ids", "fix"), tuple(die_rows), align="lrll"),),
        )
    )

    una = result.unanswerable
    una_lines: tuple[str, ...]
    if una.n:
        una_lines = (
            f"correct abstention: {una.abstained}/{una.n} = {una.rate:.3f}   {pct}% CI "
            f"[{una.ci_low:.3f}, {una.ci_high:.3f}]",
            'answered where the right output was "I don\'t know": '
            + (_ids(una.answered_ids) or "none"),
        )
    else:
        una_lines = ("no unanswerable questions in this run",)
    sections.append(Section(f"Unanswerable questions (n={una.n})", (Text(una_lines),)))
    name = f": {result.run_name}" if result.run_name else ""
    return Report(
        f"ragaudit funnel{name}",
        tuple(sections),
        data=result.to_dict(),
        notes=tuple(result.notes),
    )


def with_run_judged(report: Report, judged: RunJudged | None) -> Report:
    """``report`` (a funnel's) with judged@k of the run's top k: a question fails stage 1
    when no *labelled* gold document is in its top k (stage 2, with chunk labels, when no
    labelled answer chunk is), so where judged@k is low a miss may hide relevant items nobody
    labelled.  The JSON gains ``"judged"``.

    Examples
    --------
    >>> from ragaudit.metrics.judged import JudgedCoverage
    >>> from ragaudit.reports.renderer import render
    >>> doc = JudgedCoverage("r", "judged@3", 3, 0.5, 0.5, (), 2, "doc")
    >>> print(render(with_run_judged(Report("", ()), RunJudged(doc)), "table"), end="")
    ... # doctest: +NORMALIZE_WHITESPACE
    JUDGED@K (how much of the retrieval stages rests on labels)
      judged@3, the share of each top 3 that carries a label: document level 0.500 (n=2)
      a miss counts only labelled items: where judged@k is low, it may hide relevant items
      nobody labelled
    """
    levels = [] if judged is None else [c for c in (judged.doc, judged.chunk) if c is not None]
    warnings = () if judged is None else judged.warnings()
    if judged is None or not (levels or warnings):
        return report
    lines: list[str] = []
    if levels:
        lines += [
            str(judged_levels(judged)),
            "a miss counts only labelled items: where judged@k is low, it may hide relevant "
            "items nobody labelled",
        ]
    lines += [f"unjudged: {w}" for w in warnings]
    data: dict[str, Any] = (
        dict(report.data) if isinstance(report.data, dict) else {"result": report.data}
    )
    data["judged"] = judged.to_dict()
    title = "judged@k (how much of the retrieval stages rests on labels)"
    return replace(
        report, sections=(*report.sections, Section(title, (Text(tuple(lines)),))), data=data
    )
