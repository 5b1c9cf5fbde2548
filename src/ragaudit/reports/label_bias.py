"""The label-bias report: per-question doc vs chunk scores, the optimism bias, graded nDCG."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.diagnose.label_bias import (
    VERDICT_ABSENT,
    BiasResult,
    QuestionBias,
)
from ragaudit.reports.judged import with_judged_runs
from ragaudit.reports.report import Report, ScatterPlot, Section, Table, Text

__all__ = [
    "bias_report",
    "inflation_plot",
    "per_question_table",
    "summary_table",
]


def _f2(x: float) -> str:
    return f"{x:.2f}"


def _f3(x: float) -> str:
    return f"{x:.3f}"


def per_question_table(
    result: BiasResult, questions: Sequence[QuestionBias] | None = None
) -> Table:
    """Doc- vs chunk-level scores of ``questions`` (default: every question of ``result``).

    Examples
    --------
    >>> from ragaudit.data.qrels import Qrels
    >>> from ragaudit.diagnose.label_bias import compute_label_bias
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> per_question_table(compute_label_bias(run, Qrels({"q1": {"D#0": 2}}, unit="chunk"))).rows
    (('q1', '1.00', '1.00', '0.00', '0.00', '0.00', '<- doc-level says HIT, the answer chunk is absent'),)
    """  # noqa: E501
    return Table(
        ("id", "doc hit", "doc rec", "chunk hit", "chunk rec", "chunk MRR", "verdict"),
        tuple(
            (
                q.qid,
                _f2(q.doc_hit),
                _f2(q.doc_recall),
                _f2(q.chunk_hit),
                _f2(q.chunk_recall),
                _f2(q.chunk_mrr),
                ("<- " + q.verdict) if q.verdict == VERDICT_ABSENT else q.verdict,
            )
            for q in (result.questions if questions is None else questions)
        ),
        align="lrrrrrl",
    )


def summary_table(result: BiasResult) -> Table:
    """Hit rate and recall at document and chunk level, and the inflation (doc - chunk)."""
    k = result.k
    return Table(
        ("metric", "doc-level", "chunk-level", "inflation"),
        (
            (
                f"hit rate@{k}",
                _f3(result.doc_hit_rate),
                _f3(result.chunk_hit_rate),
                f"{result.hit_inflation:+.3f}",
            ),
            (
                f"recall@{k}",
                _f3(result.doc_recall),
                _f3(result.chunk_recall),
                f"{result.recall_inflation:+.3f}",
            ),
        ),
    )


def inflation_plot(result: BiasResult) -> ScatterPlot | None:
    """Recall inflation against the gold documents' chunk count, one point per question, with
    the Spearman rho as its caption (None without candidate counts).  The HTML page draws the
    points; every format prints the caption.

    Examples
    --------
    Plain qrels carry no candidate counts (chunk labels from ``labels build`` do):

    >>> from ragaudit.data.qrels import Qrels
    >>> from ragaudit.diagnose.label_bias import compute_label_bias
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> inflation_plot(compute_label_bias(run, Qrels({"q1": {"D#0": 2}}, unit="chunk"))) is None
    True
    """
    if not result.by_candidates:
        return None
    k = result.k
    rho = "undefined (no variation)" if result.spearman is None else f"{result.spearman:+.3f}"
    return ScatterPlot(
        title=f"Recall inflation vs chunks in the gold document(s) (k={k})",
        x_label="candidate chunks (n_candidate_chunks)",
        y_label=f"recall@{k} inflation (doc - chunk)",
        points=tuple(
            (float(q.n_candidate_chunks or 0), q.doc_recall - q.chunk_recall)
            for q in result.questions
        ),
        point_labels=tuple(q.qid for q in result.questions),
        caption=f"Spearman rho (candidate chunks vs recall inflation): {rho}",
    )


def bias_report(result: BiasResult) -> Report:
    """Build the report of a label-bias comparison (the HTML form draws the scatter plot).

    Examples
    --------
    >>> from ragaudit.data.qrels import Qrels
    >>> from ragaudit.diagnose.label_bias import compute_label_bias
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> report = bias_report(compute_label_bias(run, Qrels({"q1": {"D#0": 2}}, unit="chunk")))
    >>> [s.title for s in report.sections][:2]
    ['Per question (k=1)', 'Optimism bias of document-level labels (k=1, n=1 questions)']
    """
    k = result.k
    phantom = Text(
        (
            "document labels report a retrieval that never happened (doc hit, answer chunk "
            "absent): " + (", ".join(result.phantom_hits) or "none"),
            "chunk-level relevance = answer chunks (grade 2); inflation = doc-level - chunk-level",
        )
    )
    sections = [
        Section(f"Per question (k={k})", (per_question_table(result),)),
        Section(
            f"Optimism bias of document-level labels (k={k}, n={result.n} questions)",
            (summary_table(result), phantom),
        ),
    ]
    plot = inflation_plot(result)
    if plot is not None:
        group_table = Table(
            ("candidate chunks", "questions", "mean hit inflation", "mean recall inflation"),
            tuple(
                (
                    str(g.n_candidate_chunks),
                    str(g.n),
                    f"{g.mean_hit_inflation:+.3f}",
                    f"{g.mean_recall_inflation:+.3f}",
                )
                for g in result.by_candidates
            ),
            align="rrrr",
        )
        sections.append(Section("Inflation by gold-document size", (group_table, plot)))
    graded_lines = [
        f"mean nDCG@{k}, binary (answer chunks = 1):       {result.ndcg_binary:.3f}",
        f"mean nDCG@{k}, graded gains 2/1/0:               {result.ndcg_graded:.3f}",
        f"mean nDCG_exp@{k}, exponential gains 2^g - 1:    {result.ndcg_exp:.3f}",
    ]
    graded_blocks: list[Table | Text] = [Text(tuple(graded_lines), monospace=True)]
    if result.rank_shifts:
        graded_blocks.append(
            Table(
                ("id", "nDCG binary", "nDCG_exp", "rank binary", "rank graded", "shift"),
                tuple(
                    (
                        r.qid,
                        _f3(r.ndcg_binary),
                        _f3(r.ndcg_exp),
                        f"{r.binary_rank:g}",
                        f"{r.graded_rank:g}",
                        f"{r.shift:+g}",
                    )
                    for r in result.rank_shifts
                ),
            )
        )
        graded_blocks.append(
            Text(("rank 1 = best, ties share the best rank; shift > 0: higher once graded",))
        )
    else:
        graded_blocks.append(Text(("no question changes rank between binary and graded nDCG",)))
    sections.append(Section(f"Graded labels (k={k})", tuple(graded_blocks)))
    name = f": {result.run_name}" if result.run_name else ""
    report = Report(
        f"ragaudit labels bias{name}",
        tuple(sections),
        data=result.to_dict(),
        notes=tuple(result.notes),
    )
    return with_judged_runs(report, result.judged)  # how much of both levels rests on labels
