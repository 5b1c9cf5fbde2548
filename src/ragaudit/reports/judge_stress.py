"""The report of ``ragaudit judges stress``: per judge, one row per family of rewrite."""

from __future__ import annotations

from typing import Any

from ragaudit.reports.report import Report, Section, Table, Text

__all__ = ["stress_report"]

_COLUMNS = ("family", "meaning", "n", "skipped", "decided share [CI]", "measures",
            "decided accuracy [CI]")  # fmt: skip


def _rate(k: int, n: int, interval: Any) -> str:
    if not n:
        return "-"
    if interval is None:
        return f"{k}/{n} = {k / n:.3f}"
    ci = interval.confidence_interval
    return f"{k}/{n} = {k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def stress_report(result: Any, max_examples: int | None = 10) -> Report:
    """The rows of a :class:`~ragaudit.diagnose.judge_stress.StressResult`, the variants
    each judge got wrong or left undecided (the first ``max_examples``; None: all), and what
    the numbers mean.

    Examples
    --------
    >>> from ragaudit.data.golden import GoldenQuestion
    >>> from ragaudit.diagnose.judge_stress import stress_test
    >>> from ragaudit.reports.renderer import render
    >>> q = GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("d",))
    >>> r = stress_test([q], {"d": "x"}, {"yes": lambda cs: [True] * len(cs)},
    ...                 families=["refusal"], golden_name="g.yaml")
    >>> print(render(stress_report(r), "table").splitlines()[0])
    ragaudit judges stress: g.yaml (1 references, 1 variants, seed 0)
    """
    title = (
        f"ragaudit judges stress: {result.golden} ({result.n_references} references, "
        f"{len(result.variants)} variants, seed {result.seed})"
    )
    level = f"{result.confidence:.0%}"
    sections = []
    for judge in result.judges:
        rows, values = [], []
        for row in result.rows:
            if row.judge != judge:
                continue
            rows.append((row.family, row.meaning, str(row.n), str(row.skipped),
                         _rate(row.decided, row.n, row.decided_share), row.measures,
                         _rate(row.right, row.decided, row.accuracy)))  # fmt: skip
            values.append((row.family, row.meaning, row.n, row.skipped,
                           row.decided / row.n if row.n else None, row.measures,
                           row.right / row.decided if row.decided else None))  # fmt: skip
        blocks: list[Any] = [Table(_COLUMNS, tuple(rows), align="llrrrlr", values=tuple(values))]
        missed = result.misjudged(judge)
        if missed:
            shown = missed if max_examples is None else missed[:max_examples]
            lines = tuple(
                f"{v.question_id} {v.family} (expected {'correct' if v.expected else 'wrong'}, "
                f"judged {'undecided' if got is None else 'correct' if got else 'wrong'}): "
                f"{v.text}"
                for v, got in shown
            )
            more = len(missed) - len(shown)
            tail = (f"... and {more} more (--all-examples, or --format json for every "
                    "variant)",) if more else ()  # fmt: skip
            blocks.append(Text((f"misjudged or undecided: {len(missed)}", *lines, *tail),
                               only=("table", "markdown")))  # fmt: skip
        sections.append(Section(f"judge: {judge}", tuple(blocks)))
    notes = (
        f"decided share = decided / n; decided accuracy = right / decided: specificity on "
        f"meaning-kept families (judged correct), sensitivity on meaning-broken ones (judged "
        f"wrong). Intervals: {level} Clopper-Pearson exact per family (one variant per "
        f"reference); the pooled 'all' rows are clustered by reference (betting over whole "
        f"clusters). skipped = references the family had nothing to rewrite in (summed over the "
        f"families of a pooled row).",
        f"The judge saw the question, the variant as the answer, the reference answer, the "
        f"keywords and, as context, {result.context}. {result.unanswerable} unanswerable "
        f"questions have no reference to rewrite. Variants are drawn with seed {result.seed}.",
    )
    return Report(title, tuple(sections), data=result.to_dict(), notes=notes)
