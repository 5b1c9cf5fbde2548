"""The audit page's data: the dashboard, the funnel, the failing questions, the comparison.

:func:`build_audit` takes saved runs and computes everything ``ragaudit report`` shows, from
the same functions the single-purpose commands use (``funnel``, ``labels bias``, ``compare``),
so the page and their JSON agree; the dashboard numbers are documented in
:mod:`ragaudit.reports.html_dashboard`.  With several runs, each later run is compared with the
first, and Holm-Bonferroni adjusts the p-values across every row of every pair shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.data.saved_run import QuestionResult, SavedRun
from ragaudit.data.saved_run_summary import count_judge_errors
from ragaudit.diagnose.calibration import Calibration, calibrate
from ragaudit.diagnose.funnel import FunnelResult, compute_funnel
from ragaudit.diagnose.label_bias import BiasResult, compute_label_bias
from ragaudit.diagnose.noise import ClusteredComparison, clustered_means
from ragaudit.exceptions import InputError
from ragaudit.reports.html_dashboard import DashboardRow, dashboard_rows
from ragaudit.reports.stats import method_labels
from ragaudit.stats.compare import Comparison, compare_runs
from ragaudit.stats.multiple import holm_bonferroni

__all__ = [
    "COMPARED_METRICS",
    "Audit",
    "ChunkView",
    "PairView",
    "QuestionView",
    "RunAudit",
    "answer_chunk_sets",
    "build_audit",
    "question_stages",
    "question_view",
]

#: Metrics the paired comparison tests (when both runs have them).
COMPARED_METRICS: tuple[str, ...] = ("recall@k", "ndcg@k", "precision@k", "correct", "faithfulness")


@dataclass(frozen=True)
class ChunkView:
    """A retrieved chunk as the drill-down shows it."""

    rank: int
    chunk_id: str
    doc_id: str
    gold_doc: bool
    answer_chunk: bool | None
    text: str | None


@dataclass(frozen=True)
class QuestionView:
    """One question's drill-down: what was asked, retrieved, answered and judged."""

    qid: str
    stage: str
    question: str
    reference_answer: str
    answer: str
    keywords: tuple[str, ...]
    chunks: tuple[ChunkView, ...]
    judges: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RunAudit:
    """Everything the page shows about one run."""

    name: str
    k: int
    config: tuple[tuple[str, str], ...]
    dashboard: tuple[DashboardRow, ...]
    funnel: FunnelResult
    bias: BiasResult | None
    failures: tuple[QuestionView, ...]
    answered: int
    n_answerable: int
    notes: tuple[str, ...] = ()
    generation_errors: tuple[str, ...] = ()  # ids of the questions with no answer
    judge_errors: Mapping[str, int] = field(default_factory=dict)  # failures per judge

    @property
    def errors(self) -> str:
        """The generation and judge errors in one sentence ("" when there are none)."""
        if not self.generation_errors and not self.judge_errors:
            return ""
        failed = self.generation_errors
        return (
            f"errors: {len(failed)} generation errors"
            + (f" (no answer: {', '.join(failed)})" if failed else "")
            + "; judge errors: "
            + (", ".join(f"{j} {n}" for j, n in self.judge_errors.items()) or "none")
            + "; such questions are left out of the numbers they have no verdict for"
        )

    clustered: ClusteredComparison | None = None
    calibration: Calibration | None = None


@dataclass(frozen=True)
class PairView:
    """Run ``b`` compared with run ``a`` (diff = b - a), with Holm-adjusted p-values."""

    a: int
    b: int
    comparison: Comparison
    holm: tuple[float, ...]
    discordant: tuple[tuple[QuestionView, QuestionView], ...]


@dataclass(frozen=True)
class Audit:
    """The whole page: one :class:`RunAudit` per run, pairs against the first run."""

    runs: tuple[RunAudit, ...]
    pairs: tuple[PairView, ...]
    seed: int
    version: str
    n_resamples: int
    summary: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    def dashboard_label(self, i: int) -> str:
        """Label of dashboard row ``i``: ``recall@3`` when every run has k=3, else ``recall@k``."""
        label = self.runs[0].dashboard[i].label
        if len({run.k for run in self.runs}) > 1:
            label = label.replace(f"@{self.runs[0].k}", "@k")
        return label


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


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
    return tuple((key, _show(config[key])) for key in order)


def answer_chunk_sets(labels: Any) -> dict[str, set[str]]:
    """``{qid: answer chunk ids}`` of chunk labels (grade 2), for the drill-down."""
    questions = getattr(labels, "questions", None)
    if questions is None:
        return {}
    return {
        str(qid): {str(c) for c in getattr(entry, "answer_chunks", ())}
        for qid, entry in questions.items()
    }


def question_view(
    q: QuestionResult,
    stage: str,
    k: int,
    chunk_texts: Mapping[str, str] | None,
    answer_chunks: Mapping[str, set[str]],
) -> QuestionView:
    """The drill-down of one saved-run question at cut-off ``k``."""
    gold = set(q.gold_docs)
    answers = answer_chunks.get(q.id)
    chunks = tuple(
        ChunkView(
            rank=entry.rank or i + 1,
            chunk_id=entry.chunk_id,
            doc_id=entry.doc_id,
            gold_doc=entry.doc_id in gold,
            answer_chunk=None if answers is None else entry.chunk_id in answers,
            text=None if chunk_texts is None else chunk_texts.get(entry.chunk_id),
        )
        for i, entry in enumerate(q.ranked[:k])
    )
    return QuestionView(
        qid=q.id,
        stage=stage,
        question=q.question,
        reference_answer=q.reference_answer or "",
        answer=q.answer or ("" if not q.generation_error else f"(no answer: {q.generation_error})"),
        keywords=q.keywords,
        chunks=chunks,
        judges=tuple((str(key), _show(value)) for key, value in q.judges.items()),
    )


def question_stages(funnel: FunnelResult) -> dict[str, str]:
    """``{question id: where it died}``: a stage key, ``ok``, ``... (correct by luck)``,
    ``unanswerable, answered`` or ``excluded (reason)`` (a generation or judge error; the
    drill-down's label, shared with ``ragaudit show``)."""
    stage = {qid: key for key, ids in funnel.died.items() for qid in ids}
    for reason, ids in funnel.excluded.items():
        stage.update(dict.fromkeys(ids, f"excluded ({reason})"))
    for qid in funnel.lucky:
        stage[qid] = stage.get(qid, "") + " (correct by luck)"
    for qid in funnel.ok_ids:
        stage[qid] = "ok"
    for qid in funnel.unanswerable.answered_ids:
        stage[qid] = "unanswerable, answered"
    return stage


def _run_audit(
    saved: SavedRun,
    labels: Any,
    chunk_texts: Mapping[str, str] | None,
    seed: int,
    resamples: int,
    cluster_by: str | None = None,
    human: Mapping[str, float] | None = None,
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
    funnel = compute_funnel(saved, labels=labels, seed=seed, n_resamples=resamples)
    notes = list(funnel.notes) + notes
    answer_chunks = answer_chunk_sets(labels) if labels is not None else {}
    stage = question_stages(funnel)
    failures = tuple(
        question_view(q, stage[q.id], funnel.k, chunk_texts, answer_chunks)
        for q in saved.questions
        if stage.get(q.id, "ok") != "ok"
    )
    answerable = [q for q in saved.questions if q.answerable]
    answered = sum(1 for q in answerable if q.metric("answered"))
    return RunAudit(
        name=str(saved.name),
        k=funnel.k,
        config=_config(saved.config),
        dashboard=dashboard_rows(saved, funnel, bias),
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
    )


def _sentence(pair: PairView, names: Sequence[str], alpha: float) -> str:
    moved, still = [], []
    for row, p_holm in zip(pair.comparison.metrics, pair.holm, strict=True):
        ci = row.confidence_interval
        excludes_zero = ci.low > 0 or ci.high < 0
        if p_holm < alpha and excludes_zero:
            level = f"{100 * pair.comparison.confidence:g}% CI, {method_labels(row)[0]}"
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


def build_audit(
    runs: Sequence[SavedRun],
    *,
    labels: Any = None,
    chunk_texts: Mapping[str, str] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
    compare_resamples: int = 10_000,
    cluster_by: str | None = None,
    human: Sequence[Mapping[str, float] | None] = (),
) -> Audit:
    """Compute the audit page of one or more saved runs.

    Parameters
    ----------
    runs : sequence of SavedRun
        Loaded saved runs; with two or more, each later run is compared with the first.
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
    human : sequence of mappings, optional
        Human verdicts ``{question id: 0 or 1}`` on ``correct``, one per run in order (None,
        or a shorter sequence, leaves a run uncalibrated): the run's correctness calibrated
        against them (PPI++, :func:`~ragaudit.diagnose.calibration.calibrate`).

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
    >>> [r.name for r in audit.runs], [d.value for d in audit.runs[1].dashboard][4]
    (['k1', 'k2'], 1.0)
    >>> "moved for real: nothing" in audit.summary[0], audit.summary[0].split(". ")[-1]
    (True, 'On correct, 1 of 1 questions changed between the runs.')
    """
    from ragaudit._version import version

    if not runs:
        raise InputError("report: expected at least one saved run, found none")
    if len(human) > len(runs):
        raise InputError(
            f"--human: expected at most one file of human verdicts per run ({len(runs)}), "
            f"found {len(human)}"
        )
    verdicts = [*human, *([None] * (len(runs) - len(human)))]
    audits = tuple(
        _run_audit(s, labels, chunk_texts, seed, n_resamples, cluster_by, h)
        for s, h in zip(runs, verdicts, strict=True)
    )
    names = [a.name for a in audits]
    raw: list[tuple[int, Comparison]] = []
    notes: list[str] = []
    for j in range(1, len(runs)):
        a, b = runs[0], runs[j]
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
        raw.append((j, comparison))
    pvalues = [m.pvalue for _, c in raw for m in c.metrics]
    adjusted = list(holm_bonferroni(pvalues)) if pvalues else []
    pairs: list[PairView] = []
    by_id = [s.by_id() for s in runs]
    stages = [question_stages(a.funnel) for a in audits]
    for j, comparison in raw:
        holm = tuple(float(adjusted.pop(0)) for _ in comparison.metrics)
        discordant = []
        for row in comparison.metrics:
            if row.metric == "correct" and row.mcnemar is not None:
                for qid in row.mcnemar.discordant_ids:
                    views = tuple(
                        question_view(
                            by_id[i][qid], stages[i].get(qid, ""), audits[i].k, chunk_texts, {}
                        )
                        for i in (0, j)
                    )
                    discordant.append((views[0], views[1]))
        pairs.append(PairView(0, j, comparison, holm, tuple(discordant)))
    alpha = 0.05
    summary = tuple(_sentence(p, names, alpha) for p in pairs)
    return Audit(audits, tuple(pairs), seed, version(), n_resamples, summary, tuple(notes))
