"""judged@k beside printed retrieval metrics: the lines, the comparison row and the section
that ``compare``, ``compare --all``, ``funnel``, ``labels bias`` and ``baseline update`` add to
their reports (:class:`~ragaudit.diagnose.judged_beside.JudgedRuns`).

The warnings keep the words of :mod:`ragaudit.metrics.judged` (as ``evaluate`` prints them);
the terminal and CSV print them on stderr, markdown, HTML and LaTeX as a note, and the JSON
carries them under ``judged.warnings``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragaudit.diagnose.judged_beside import JudgedRuns, PairJudged
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.reports.report import Report, Section, Text

__all__ = [
    "JUDGED_ROW_NOTE",
    "judged_comparison_row",
    "judged_levels",
    "judged_notes",
    "judged_run_lines",
    "with_judged_runs",
]

#: Why the judged@k row of a comparison has no interval, p-value or verdict.
JUDGED_ROW_NOTE = (
    "judged@k: the share of each top k that carries a label, at the two runs' common depth; "
    "not tested: it says how much of the retrieval rows rests on labelled documents"
)


def judged_levels(judged: RunJudged) -> str | None:
    """One run's judged@k per level, as the funnel, ``labels bias`` and ``compare`` word it
    (None when neither level was measured).

    Examples
    --------
    >>> from ragaudit.metrics.judged import JudgedCoverage
    >>> doc = JudgedCoverage("r", "judged@3", 3, 0.5, 0.5, (), 2, "doc")
    >>> judged_levels(RunJudged(doc))
    'judged@3, the share of each top 3 that carries a label: document level 0.500 (n=2)'
    """
    levels = [c for c in (judged.doc, judged.chunk) if c is not None]
    if not levels:
        return None
    shares = ", ".join(f"{c.level.strip(' ()')} {c.mean:.3f} (n={c.n_queries})" for c in levels)
    return f"{levels[0].metric}, the share of each {levels[0].top} that carries a label: {shares}"


def _run_name(judged: RunJudged) -> str:
    coverage = judged.doc or judged.chunk
    return "" if coverage is None else coverage.run


def judged_run_lines(judged: JudgedRuns) -> list[str]:
    """``RUN: judged@k, the share of ...`` for each run measured (:func:`judged_levels`)."""
    return [
        f"{_run_name(run)}: {line}"
        for run in judged.runs
        if (line := judged_levels(run)) is not None
    ]


def _pair_line(pair: PairJudged) -> str:
    return (
        f"{pair.b.run} - {pair.a.run}: {pair.a.metric}{pair.a.level} {pair.b.mean:.3f} - "
        f"{pair.a.mean:.3f} = {pair.gap:+.3f} (margin {pair.margin:.2f})"
    )


def judged_notes(messages: Sequence[str]) -> Text:
    """The judged warnings as a note of markdown, HTML and LaTeX (the terminal prints them on
    stderr), as ``evaluate`` shows them."""
    return Text(
        tuple(f"unjudged: {m}" for m in messages), only=("markdown", "html", "latex"), style="note"
    )


def with_judged_runs(
    report: Report,
    judged: JudgedRuns | None,
    title: str = "judged@k (how much of the retrieval metrics rests on labels)",
    *,
    pair_lines: bool = True,
) -> Report:
    """``report`` with a section of each run's judged@k, each compared pair's gap, and the
    warnings as a note; its JSON gains ``"judged"`` (with ``"warnings"``).  ``judged`` None or
    with nothing measured: ``report`` unchanged.  ``pair_lines`` False: the pairs only in the
    JSON and the warnings (``compare --all``, which compares every pair).

    Examples
    --------
    >>> from ragaudit.metrics.judged import JudgedCoverage
    >>> from ragaudit.reports.renderer import render
    >>> a = JudgedCoverage("a", "judged@3", 3, 0.9, 0.5, (), 4, "doc")
    >>> b = JudgedCoverage("b", "judged@3", 3, 0.6, 0.5, (), 4, "doc")
    >>> judged = JudgedRuns((RunJudged(a), RunJudged(b)), (PairJudged(a, b, 0.1),))
    >>> print(render(with_judged_runs(Report("", ()), judged, "judged@k"), "table"), end="")
    ... # doctest: +NORMALIZE_WHITESPACE
    JUDGED@K
      a: judged@3, the share of each top 3 that carries a label: document level 0.900 (n=4)
      b: judged@3, the share of each top 3 that carries a label: document level 0.600 (n=4)
      b - a: judged@3 (document level) 0.600 - 0.900 = -0.300 (margin 0.10)
    """
    if judged is None:
        return report
    lines = judged_run_lines(judged)
    lines += [_pair_line(pair) for pair in judged.pairs] if pair_lines else []
    messages = judged.warnings()
    if not lines and not messages:
        return report
    blocks: list[Any] = [Text(tuple(lines))] if lines else []
    if messages:
        blocks.append(judged_notes(messages))
    data: dict[str, Any] = (
        dict(report.data) if isinstance(report.data, dict) else {"result": report.data}
    )
    data["judged"] = judged.to_dict()
    return replace(report, sections=(*report.sections, Section(title, tuple(blocks))), data=data)


def judged_comparison_row(judged: JudgedRuns | None) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The judged@k row of a comparison table (``compare RUN_A RUN_B`` of saved runs): its
    cells (metric, n, mean A, mean B, B - A, then ``-`` for the interval, methods, p and the
    verdict) and its CSV values; both empty when the pair was not measured.

    >>> from ragaudit.metrics.judged import JudgedCoverage
    >>> a = JudgedCoverage("a", "judged@3", 3, 0.9, 0.5, (), 4, "doc")
    >>> b = JudgedCoverage("b", "judged@3", 3, 0.6, 0.5, (), 4, "doc")
    >>> judged_comparison_row(JudgedRuns((), (PairJudged(a, b),)))[0][:5]
    ('judged@3 (doc)', '4', '0.900', '0.600', '-0.300')
    """
    if judged is None or not judged.pairs:
        return (), ()
    pair = judged.pairs[0]
    n = (
        str(pair.a.n_queries)
        if pair.a.n_queries == pair.b.n_queries
        else f"{pair.a.n_queries}/{pair.b.n_queries}"
    )
    metric = f"{pair.a.metric} (doc)"
    cells = (metric, n, f"{pair.a.mean:.3f}", f"{pair.b.mean:.3f}", f"{pair.gap:+.3f}",
             "-", "-", "-", "-", "not tested")  # fmt: skip
    values = (metric, n, pair.a.mean, pair.b.mean, pair.gap,
              math.nan, math.nan, "", math.nan, "", "not tested")  # fmt: skip
    return cells, values
