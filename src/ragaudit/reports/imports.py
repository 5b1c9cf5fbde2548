"""Reports of ``ragaudit import``: a saved run validated, or another tool's results made into
one, with the run's means and judged@k beside them (how much of the retrieval means rests on
labelled items, :func:`~ragaudit.diagnose.unjudged.run_judged`)."""

from __future__ import annotations

from typing import Any

from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run.metrics import RETRIEVAL_FAMILIES
from ragaudit.diagnose.funnel_result import NO_GOLD
from ragaudit.diagnose.unjudged import RunJudged
from ragaudit.reports.report import Block, Report, Section, Text
from ragaudit.reports.runs import _means_table

__all__ = ["foreign_import_report", "import_report"]


def _retrieval(name: str, prefix: str) -> bool:
    """A saved run's retrieval mean at one level (``recall@k``; ``chunk_ndcg@k``)."""
    if prefix and not name.startswith(prefix):
        return False
    return name.removeprefix(prefix).partition("@")[0] in RETRIEVAL_FAMILIES


#: Means whose name alone would pass for another count: ``correct`` here is over every
#: question, a refusal of an unanswerable one counting as correct, unlike the funnel's
#: end-to-end correct (answerable questions only).
_LABELS = {
    "answered": "answered (all questions)",
    "correct": "correct (+ refused unanswerable)",
}


def _means(summary: dict[str, Any], judged: RunJudged | None) -> list[Section]:
    """The means table with judged@k after the retrieval means of its level, and the
    warnings."""
    means = summary["metrics"]
    if not means:
        return []
    values = [(_LABELS.get(name, name), v, summary["n_scored"][name]) for name, v in means.items()]
    levels = () if judged is None else ((judged.chunk, "chunk_"), (judged.doc, ""))
    for coverage, prefix in levels:  # after the last retrieval mean it qualifies
        at = [i for i, (name, _, _) in enumerate(values) if _retrieval(name, prefix)]
        if coverage is not None and at:
            row = (f"{prefix}judged@k (labelled share)", coverage.mean, coverage.n_queries)
            values.insert(at[-1] + 1, row)
    blocks: list[Block] = [_means_table("metric", tuple(values))]
    blocks += [
        Text((f"unjudged: {w}",), style="note") for w in (judged.warnings() if judged else ())
    ]
    return [Section("Mean over questions where defined (macro)", tuple(blocks))]


def import_report(
    file: str,
    saved: SavedRun,
    summary: dict[str, Any],
    saved_to: str | None,
    judged: RunJudged | None = None,
) -> Report:
    """What ``ragaudit import`` found in a valid saved run; ``judged``: its judged@k."""
    n_retrieved = [len(q.retrieved) for q in saved.questions]
    depth = f"{min(n_retrieved)}-{max(n_retrieved)}" if n_retrieved else "0"
    head = Text(
        (
            f"{file}: valid ragaudit.run v1, name {saved.name!r}",
            f"{summary['n']} questions ({summary['n_answerable']} answerable, "
            f"{summary['n_unanswerable']} unanswerable; {summary['n_generation_errors']} "
            f"generation errors, {summary['n_judge_errors']} judge errors)",
            f"k={saved.k}, retrieved per question: {depth}",
        )
    )
    sections = [Section("", (head,))]
    sections += _means(summary, judged)
    if saved_to is not None:
        sections.append(Section("", (Text((f"saved: {saved_to}",)),)))
    data = {"file": file, "name": saved.name, "valid": True, "summary": summary, "saved": saved_to,
            "judged": None if judged is None else judged.to_dict()}  # fmt: skip
    return Report("", tuple(sections), data=data)


def foreign_import_report(
    layout: str,
    results: list[tuple[str, Any, dict[str, Any]]],
    judged: list[RunJudged] | None = None,
) -> Report:
    """What ``ragaudit import --from LAYOUT`` made of each file: how its contexts matched the
    corpus's chunks, the saved run's means with judged@k, and where it was written.

    ``results`` holds ``(file, ImportResult, summary)`` per file; ``judged`` each run's
    judged@k, in the same order.
    """
    sections = []
    data = []
    for i, (file, result, summary) in enumerate(results):
        run_judged = None if judged is None else judged[i]
        saved = result.saved
        head = Text(
            (
                f"{file}: {summary['n']} questions from {layout} -> saved run {saved.name!r} "
                f"(k={saved.k})",
                f"contexts: {result.n_contexts}; matched to a chunk by exact text "
                f"{result.exact}, by token overlap >= {result.min_overlap:g} {result.overlap}; "
                f"unmatched (dropped) {result.unmatched}; same chunk twice (kept once) "
                f"{result.repeated}",
            )
        )
        blocks: list[Any] = [head]
        if result.unmatched_ids:
            shown = ", ".join(result.unmatched_ids[:10])
            more = (
                f" (+{len(result.unmatched_ids) - 10} more)"
                if len(result.unmatched_ids) > 10
                else ""
            )
            blocks.append(Text((f"questions with unmatched contexts: {shown}{more}",)))
        answerable = [row for row in saved.rows if row.get("answerable", True)]
        if answerable and not any(row.get("gold_docs") for row in answerable):
            blocks.append(Text((NO_GOLD.format(n=len(answerable)),)))
        sections.append(Section("", tuple(blocks)))
        sections += _means(summary, run_judged)
        sections.append(Section("", (Text((f"saved: {saved.path}",)),)))
        data.append(
            {
                "file": file,
                "from": layout,
                "name": saved.name,
                "saved": str(saved.path),
                "contexts": {
                    "total": result.n_contexts,
                    "exact": result.exact,
                    "overlap": result.overlap,
                    "unmatched": result.unmatched,
                    "repeated": result.repeated,
                    "min_overlap": result.min_overlap,
                    "questions_with_unmatched": list(result.unmatched_ids),
                },
                "summary": summary,
                "judged": None if run_judged is None else run_judged.to_dict(),
            }
        )
    return Report("", tuple(sections), data={"imports": data})
