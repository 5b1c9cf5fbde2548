"""``evaluate``: score a run against relevance labels, per question and averaged.

The work is split the scikit-learn way: validate the arguments, line the run up with the
labels as one padded ``(n_questions, depth)`` matrix of grades (a vectorised hash join, no
per-question Python objects for runs read from TREC files), call the kernels of
:mod:`ragaudit.metrics.kernels` for each metric, then average.  The join and the kernels
run on slices of whole questions, so that their temporaries stay small whatever the run's
size (the grade matrix takes one byte per ranked item for grades up to 127).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit._frames import records_frame
from ragaudit._parallel import map_slices
from ragaudit._present import Presentable, short_repr
from ragaudit._validate import check_int
from ragaudit.data.formats import run_columns
from ragaudit.data.formats.strings import IntArray
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError, RagauditWarning, UndefinedMetricWarning
from ragaudit.metrics._join import (
    grade_matrix,
    ideal_grades,
    judged_grade_matrix,
    label_table,
)
from ragaudit.metrics.id_checks import drop_identical_ids, identical_id_rows
from ragaudit.metrics.kernels import KERNELS, RankedGrades
from ragaudit.metrics.lineup import line_up, name_ids, warn_if_no_overlap
from ragaudit.metrics.registry import MetricSpec, parse_metric

__all__ = ["Evaluation", "evaluate"]


@dataclass(frozen=True, repr=False)
class Evaluation(Presentable):
    """The result of :func:`evaluate`.

    Attributes
    ----------
    query_ids : tuple of str
        Evaluated questions, in the order of the labels.
    per_query : dict of str to ndarray
        Metric name as requested -> one value per question, aligned with ``query_ids``.
    means : dict of str to float
        Metric name as requested -> average over questions (``average``).
    unit : {"doc", "chunk"}
        What the labels and run items name.
    average : {"macro", "micro"}
        Macro: mean of per-question values.  Micro: counts pooled over questions first.
    relevance_threshold : int
        Minimum grade counted as relevant by the binary metrics.
    missing : {"zero", "skip"}
        What happened to labelled questions absent from the run.
    specs : dict of str to MetricSpec
        Metric name as requested -> parsed metric.
    tied_groups : int
        Groups of items sharing a score within a question in the run (order inside a group
        is arbitrary: trec_eval's rule breaks it by id, descending).  Scores are compared as
        32-bit floats, as trec_eval stores them.
    float32_tied_groups : int
        How many of those groups tie only as 32-bit floats (their 64-bit scores differ).
    identical_ids : int
        Run items named like their own question (a question retrieving itself); dropped
        when ``ignored_identical_ids``.
    ignored_identical_ids : bool
        Whether they were dropped (BEIR's ``ignore_identical_ids``).
    dropped_duplicates : int
        Repeats of an item within one question's ranking that reading the run dropped
        (``duplicates="first"`` keeps the first of each; trec_eval refuses such a run).
    """

    query_ids: tuple[str, ...]
    per_query: dict[str, npt.NDArray[np.float64]]
    means: dict[str, float]
    unit: str
    average: str
    relevance_threshold: int
    missing: str
    specs: dict[str, MetricSpec] = field(default_factory=dict)
    tied_groups: int = 0
    float32_tied_groups: int = 0
    identical_ids: int = 0
    ignored_identical_ids: bool = False
    dropped_duplicates: int = 0

    @property
    def n_queries(self) -> int:
        """Number of evaluated questions."""
        return len(self.query_ids)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready summary; ``per_query=True`` adds ``{qid: {metric: value}}``.

        Examples
        --------
        >>> ev = evaluate(Qrels({"q1": {"A": 1}}), Run({"q1": ["A"]}), ["hit@1"])
        >>> ev.to_dict()
        {'metrics': {'hit@1': 1.0}, 'n_queries': 1, 'unit': 'doc', 'average': 'macro', \
'relevance_threshold': 1, 'missing': 'zero', 'tied_groups': 0, 'float32_tied_groups': 0}
        """
        out: dict[str, Any] = {
            "metrics": dict(self.means),
            "n_queries": self.n_queries,
            "unit": self.unit,
            "average": self.average,
            "relevance_threshold": self.relevance_threshold,
            "missing": self.missing,
            "tied_groups": self.tied_groups,
            "float32_tied_groups": self.float32_tied_groups,
        }
        if self.identical_ids or self.ignored_identical_ids:
            out["identical_ids"] = self.identical_ids
            out["ignored_identical_ids"] = self.ignored_identical_ids
        if self.dropped_duplicates:
            out["dropped_duplicates"] = self.dropped_duplicates
        if per_query:
            columns = {name: values.tolist() for name, values in self.per_query.items()}
            out["per_query"] = {
                qid: {name: columns[name][i] for name in columns}
                for i, qid in enumerate(self.query_ids)
            }
        return out

    def to_pandas(self) -> Any:
        """Per-question values: one row per question (index ``qid``), one column per metric.

        Needs the ``pandas`` extra.
        """
        columns = {name: values.tolist() for name, values in self.per_query.items()}
        return records_frame(
            [
                {"qid": qid, **{name: columns[name][i] for name in columns}}
                for i, qid in enumerate(self.query_ids)
            ],
            index="qid",
        )

    def to_per_question(
        self, name: str = "evaluation", path: str | None = None
    ) -> PerQuestionMetrics:
        """Per-question values as :func:`ragaudit.compare_runs` pairs them (NaN -> None).

        >>> ev = evaluate(Qrels({"q1": {"A": 1}}), Run({"q1": ["A"]}), ["hit@1"])
        >>> ev.to_per_question("bm25").values
        {'q1': {'hit@1': 1.0}}
        """
        return PerQuestionMetrics.from_columns(name, self.query_ids, self.per_query, path)

    def __repr__(self) -> str:
        return short_repr(
            f"Evaluation(n_queries={self.n_queries}, unit={self.unit!r}, average={self.average!r})",
            [f"{name}: {value:.4f}" for name, value in self.means.items()],
            limit=12,
        )


def _metric_specs(
    qrels: Qrels, metrics: Sequence[str] | str, relevance_threshold: int, missing: str
) -> dict[str, MetricSpec]:
    """The checks :func:`evaluate` and ``evaluate_stream`` share; requested name -> metric."""
    if not isinstance(qrels, Qrels):
        raise InputError(f"qrels: expected a ragaudit Qrels, found {type(qrels).__name__}")
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise InputError("metrics: expected at least one metric name, e.g. ['ndcg@10']")
    specs = {name: parse_metric(name) for name in metrics}
    check_int(relevance_threshold, "relevance_threshold")
    if missing not in ("zero", "skip"):
        raise InputError(f"missing: expected 'zero' or 'skip', found {missing!r}")
    return specs


def _evaluate_iv(
    qrels: Qrels,
    run: Run,
    metrics: Sequence[str] | str,
    relevance_threshold: int,
    missing: str,
    average: str,
) -> dict[str, MetricSpec]:
    """Validate the arguments; return requested name -> parsed metric."""
    specs = _metric_specs(qrels, metrics, relevance_threshold, missing)
    if not isinstance(run, Run):
        raise InputError(f"run: expected a ragaudit Run, found {type(run).__name__}")
    if average not in ("macro", "micro"):
        raise InputError(f"average: expected 'macro' or 'micro', found {average!r}")
    if average == "micro":
        rank_based = [name for name, spec in specs.items() if not spec.info.micro]
        if rank_based:
            raise InputError(
                f"micro-averaging is undefined for rank metrics ({', '.join(rank_based)}); "
                "it pools counts and is defined for hit, recall, precision and f1 only; "
                "use average='macro' for these"
            )
    if run.unit != qrels.unit:
        if run.unit == "chunk":
            raise InputError(
                "the run ranks chunks but the labels are at document level; lift the run to "
                "documents with a chunk->document map (Run.to_docs, CLI: --chunk-map FILE)"
            )
        raise InputError(
            "the run ranks documents but the labels are at chunk level; document rankings "
            "cannot be scored against chunk labels: evaluate a chunk-level run"
        )
    if len(qrels) == 0:
        where = f"{qrels.name}: " if qrels.name else ""
        raise InputError(f"{where}the labels are empty: expected at least one labelled question")
    return specs


_KERNEL_CELLS = 1 << 19  # grade-matrix cells scored per step and thread (bounds float temporaries)


def _score(
    specs: Mapping[str, MetricSpec],
    grades: npt.NDArray[np.integer[Any]],
    n_relevant: IntArray,
    ideal: npt.NDArray[np.integer[Any]],
    threshold: int,
    micro: bool = False,
    judged: npt.NDArray[np.bool_] | None = None,
    n_ranked: IntArray | None = None,
    n_nonrelevant: IntArray | None = None,
) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, float]]:
    """Every metric's per-question values, and (``micro``: else zeros) the relevant items
    each found in its top k summed over questions, for micro averages.

    The kernels run on slices of questions: every question's value depends on its own row
    only, so slicing changes no number, and the kernels' float temporaries stay small.
    ``judged``, ``n_ranked`` and ``n_nonrelevant`` feed the measures for incomplete labels
    (:func:`needs_judged`).
    """
    n = grades.shape[0]
    step = max(1, _KERNEL_CELLS // max(grades.shape[1], ideal.shape[1], 1))
    per_query = {name: np.zeros(n, dtype=np.float64) for name in specs}
    found = dict.fromkeys(specs, 0.0)

    def score_slice(part: slice) -> dict[str, float]:
        prepared = RankedGrades(
            grades=grades[part],
            n_relevant=n_relevant[part],
            ideal_grades=ideal[part],
            threshold=threshold,
            judged=None if judged is None else judged[part],
            n_ranked=None if n_ranked is None else n_ranked[part],
            n_nonrelevant=None if n_nonrelevant is None else n_nonrelevant[part],
        )
        counts = dict.fromkeys(specs, 0.0)
        for name, spec in specs.items():
            per_query[name][part] = KERNELS[spec.family](prepared, spec.k)
            if micro:
                counts[name] = float(prepared.rel[:, : spec.k].sum())
        return counts

    # Two slices at once on two threads (each writes its own questions' values); the micro
    # counts are summed in slice order, so the totals do not depend on the threads.
    for counts in map_slices(score_slice, [slice(a, a + step) for a in range(0, n, step)]):
        for name, count in counts.items():
            found[name] += count
    return per_query, found


def needs_judged(specs: Mapping[str, MetricSpec]) -> bool:
    """True when a metric must tell unjudged items from judged non-relevant ones."""
    return any(spec.info.judged for spec in specs.values())


def scored_depth(specs: Mapping[str, MetricSpec], longest: int) -> int:
    """How many ranks the grade matrix needs: the longest ranking, or the largest cutoff
    when every metric has one and none looks below it (condensed lists do)."""
    if all(spec.k is not None and not spec.info.full_depth for spec in specs.values()):
        return min(longest, max(spec.k for spec in specs.values() if spec.k is not None))
    return longest


def _micro_means(
    specs: Mapping[str, MetricSpec],
    n: int,
    total_relevant: float,
    found: Mapping[str, float],
    per_query: Mapping[str, Any],
) -> dict[str, float]:
    """Pooled counts, by each metric's registry rule (:attr:`MetricInfo.micro`).

    ``recall`` = sum of relevant retrieved / sum of relevant, ``precision`` = the same over
    ``n * k``, ``f1`` their harmonic mean, ``mean`` the mean of the per-question values.
    """
    means: dict[str, float] = {}
    for name, spec in specs.items():
        k = spec.k
        recall = found[name] / total_relevant if total_relevant > 0 else 0.0
        precision = found[name] / (n * k) if n and k else 0.0
        rule = spec.info.micro
        if rule == "mean":
            means[name] = float(np.mean(per_query[name])) if n else 0.0
        elif rule == "recall":
            means[name] = recall
        elif rule == "precision":
            means[name] = precision
        elif rule == "f1":
            total = precision + recall
            means[name] = 2 * precision * recall / total if total > 0 else 0.0
        else:
            raise InputError(f"micro-averaging is not defined for {name}")
    return means


def evaluate(
    qrels: Qrels,
    run: Run,
    metrics: Sequence[str] | str,
    *,
    relevance_threshold: int = 1,
    missing: str = "zero",
    average: str = "macro",
    ignore_identical_ids: bool = False,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on each metric, per question and averaged.

    Parameters
    ----------
    qrels : Qrels
        Graded labels; their question order is the order of the results.
    run : Run
        Rankings at the same unit as the labels (lift chunks with ``Run.to_docs``).
    metrics : sequence of str
        Names such as ``"ndcg@10"``, ``"recall@5"``, ``"P@5"``, ``"map"`` (see
        :func:`~ragaudit.metrics.list_metrics`).
    relevance_threshold : int, default 1
        Binary metrics count an item as relevant when its grade is >= this.  nDCG and DCG
        use the grades as gains whatever the threshold (as trec_eval does).
    missing : {"zero", "skip"}, default "zero"
        Labelled questions absent from the run score 0 (trec_eval ``-c``) or are dropped
        (trec_eval's default).  Either way they are named in a warning when zero.
    average : {"macro", "micro"}, default "macro"
        Macro: ``mean_q metric(q)``, every question weighs the same.  Micro: pools the counts,
        e.g. ``recall = sum_q |rel found in top k| / sum_q |rel|``; defined for hit,
        recall, precision and f1 only.
    ignore_identical_ids : bool, default False
        Drop run items whose id is their question's id before scoring (BEIR's
        ``ignore_identical_ids``: a question that is also a document retrieves itself).
        Without it such items are scored as any other, and a warning counts them.

    Returns
    -------
    Evaluation

    Raises
    ------
    InputError
        Unknown metric, bad option, unit mismatch, empty run or labels, or a run that
        shares no question with the labels.

    Warns
    -----
    RagauditWarning
        Run questions without labels (ignored, as by trec_eval); labelled questions missing
        from the run (with ``missing="zero"``); items named like their own question (without
        ``ignore_identical_ids``).
    UndefinedMetricWarning
        Questions without any relevant item: they score 0 on every metric but judged@k (as
        in trec_eval).

    Examples
    --------
    The chapter's ``B *A* D *C* E`` ranking with A and C relevant:

    >>> qrels = Qrels({"q1": {"A": 1, "C": 1}})
    >>> run = Run({"q1": ["B", "A", "D", "C", "E"]})
    >>> ev = evaluate(qrels, run, ["nDCG@5", "map", "recall@5"])
    >>> {name: round(value, 4) for name, value in ev.means.items()}
    {'nDCG@5': 0.6509, 'map': 0.5, 'recall@5': 1.0}
    >>> ev.per_query["map"].tolist(), ev.query_ids
    ([0.5], ('q1',))
    """
    specs = _evaluate_iv(qrels, run, metrics, relevance_threshold, missing, average)
    cols = run_columns(run)
    same_rows, same_questions = identical_id_rows(cols)
    if len(same_rows) and ignore_identical_ids:
        run = drop_identical_ids(run)
        cols = run_columns(run)
    elif len(same_rows):
        named = [cols.qids[i] for i in dict.fromkeys(same_questions.tolist())]
        warnings.warn(
            f"{len(same_rows)} run item(s) carry the id of their own question (a question "
            f"that is also a document retrieves itself): {name_ids(named)}; pass "
            "ignore_identical_ids=True (--ignore-identical-ids) to drop them, as BEIR does",
            RagauditWarning,
            stacklevel=2,
        )
    if cols.n_rows == 0:
        where = f"{run.name}: " if run.name else ""
        raise InputError(f"{where}the run is empty: expected at least one ranked item")
    run_ids = cols.qids
    if tuple(qrels) == run_ids:  # the usual case, compared in C: no per-question dicts
        eval_ids = list(run_ids)
        eval_row_of_run_q: IntArray = np.arange(len(run_ids), dtype=np.int64)
    else:
        eval_ids, eval_row_of_run_q = line_up(qrels, run_ids, missing)
    n_eval = len(eval_ids)

    label_row, label_items, label_grade, label_hash = label_table(qrels, eval_ids)
    n_relevant = np.bincount(
        label_row[label_grade >= relevance_threshold], minlength=n_eval
    ).astype(np.int64)
    no_relevant = [eval_ids[i] for i in np.flatnonzero(n_relevant == 0).tolist()]
    if no_relevant:
        warnings.warn(
            f"{len(no_relevant)} question(s) have no relevant item (grade >= "
            f"{relevance_threshold}) and score 0 on every metric but judged@k, as in trec_eval: "
            f"{name_ids(no_relevant)}",
            UndefinedMetricWarning,
            stacklevel=2,
        )

    lengths = np.diff(cols.offsets)
    used = eval_row_of_run_q >= 0
    depth = scored_depth(specs, int(lengths[used].max(initial=0)))
    join = (cols, eval_row_of_run_q, label_row, label_items, label_grade, label_hash)
    judged = n_ranked = n_nonrelevant = None
    if needs_judged(specs):
        grades, judged = judged_grade_matrix(*join, n_eval, depth)
        n_ranked = np.zeros(n_eval, dtype=np.int64)
        n_ranked[eval_row_of_run_q[used]] = lengths[used]
        n_nonrelevant = np.bincount(
            label_row[label_grade < relevance_threshold], minlength=n_eval
        ).astype(np.int64)
    else:
        grades = grade_matrix(*join, n_eval, depth)
    if len(label_grade) and not grades.any():  # nothing relevant retrieved anywhere: why?
        warn_if_no_overlap(qrels, run, cols, label_items, label_hash)
    ideal = ideal_grades(label_row, label_grade, n_eval)
    per_query, found = _score(
        specs, grades, n_relevant, ideal, int(relevance_threshold), average == "micro",
        judged, n_ranked, n_nonrelevant,
    )  # fmt: skip
    del grades, ideal, judged
    if average == "micro":
        total_relevant = float(n_relevant.sum())
        means = _micro_means(specs, n_eval, total_relevant, found, per_query)
    else:
        means = {
            name: float(np.mean(values)) if n_eval else 0.0 for name, values in per_query.items()
        }
    return Evaluation(
        query_ids=tuple(eval_ids),
        per_query=per_query,
        means=means,
        unit=qrels.unit,
        average=average,
        relevance_threshold=int(relevance_threshold),
        missing=missing,
        specs=specs,
        tied_groups=run.tied_groups,
        float32_tied_groups=getattr(run, "float32_tied_groups", 0),
        identical_ids=len(same_rows),
        ignored_identical_ids=bool(ignore_identical_ids),
        dropped_duplicates=getattr(run, "dropped_duplicates", 0),
    )
