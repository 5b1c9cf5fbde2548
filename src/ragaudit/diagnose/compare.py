"""The comparison ``ragaudit compare`` prints: :func:`compare_runs` (``ragaudit.compare_runs``)
for two runs, :func:`compare_directory` for ``--all DIR``.

Around the paired statistics of :func:`ragaudit.stats.compare.compare_runs` (which take loaded
values), it reads files (saved runs, per-question values), names what differs between two
saved runs' configurations, and adds the three options of ``compare``: retrieval runs scored
against labels (``qrels=``), questions clustered by a shared source (``cluster_by=``) and judge
noise (``judge_repeats=``).

Each option is one function from loaded inputs to what the comparison needs: per-question values
(:func:`score_against_qrels`), cluster labels (:func:`saved_run_for`, then
:func:`~ragaudit.diagnose.noise.question_clusters`), and the clustered and judge-noise
analyses shown beside the comparison (:func:`noise_analyses`).  ``ragaudit compare`` reaches
them only through :func:`ragaudit.compare_runs`, so the command and the library give the same
numbers.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragaudit._validate import check_metric_names
from ragaudit.data.formats import read_qrels
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.per_question_files import (
    load_per_question_metrics,
    resolve_saved_runs,
    run_directory_files,
)
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import load_saved_run
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.confounding import comparison_differences
from ragaudit.diagnose.judge_noise import (
    JudgeNoiseComparison,
    judge_noise_comparison,
    repeat_scores,
)
from ragaudit.diagnose.judged_beside import JudgedRuns, directory_judged, saved_pair_judged
from ragaudit.diagnose.noise import ClusteredComparison, clustered_comparison, question_clusters
from ragaudit.exceptions import InputError, UnjudgedWarning
from ragaudit.metrics.evaluate import Evaluation, evaluate
from ragaudit.metrics.judged import (
    JUDGED_MARGIN,
    JUDGED_THRESHOLD,
    judged_coverage,
    judged_names,
    warn_unjudged,
)
from ragaudit.metrics.registry import resolve_saved_run_metrics
from ragaudit.metrics.score_file import DEFAULT_METRICS, score_run_file
from ragaudit.stats.compare import compare_runs as compare_loaded
from ragaudit.stats.comparison import Comparison, check_gates
from ragaudit.stats.pairwise import PairwiseMatrix, compare_all

__all__ = [
    "compare_directory",
    "compare_runs",
    "noise_analyses",
    "saved_run_for",
    "score_against_qrels",
]

#: What :func:`compare_runs` compares: a saved run, a file, per-question values or an
#: :class:`~ragaudit.metrics.Evaluation`.
RunInput = Any
#: A retrieval run for ``qrels=``: a run file (TREC, JSONL or JSON) or a loaded :class:`Run`.
RetrievalRun = str | os.PathLike[str] | Run


def compare_runs(
    run_a: RunInput,
    run_b: RunInput,
    metrics: str | Sequence[str] | None = None,
    *,
    qrels: Qrels | str | os.PathLike[str] | None = None,
    cluster_by: str | None = None,
    judge_repeats: bool = False,
    questions: str = "all",
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "auto",
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    exact_max_n: int = 20,
    allow_partial: bool = False,
    subsample_sizes: Sequence[int] = (10, 20),
    allow_different_data: bool = False,
    judged_threshold: float = JUDGED_THRESHOLD,
    judged_margin: float = JUDGED_MARGIN,
    fail_if_worse: Sequence[str] = (),
) -> Comparison:
    r"""Compare run B with run A question by question: saved runs, files, per-question values
    or evaluations; retrieval runs with ``qrels``.  What ``ragaudit compare`` does.

    Files (saved runs, JSON ``{question_id: {metric: value}}`` or JSONL) are read by
    :func:`ragaudit.data.per_question_files.read_per_question_metrics`, an
    :class:`~ragaudit.metrics.Evaluation` gives its per-question values, then
    :func:`ragaudit.stats.compare_runs` computes, per metric, :math:`\bar d = \frac1n \sum_i
    (b_i - a_i)` over the paired non-null questions with its interval, permutation p-value
    and verdict (its docstring gives the methods and references).  The three options that
    ``compare`` adds are computed by the helpers below.

    Parameters
    ----------
    run_a, run_b : SavedRun, path, PerQuestionMetrics or Evaluation
        With ``qrels``: retrieval runs (TREC, JSONL or JSON files, or :class:`~ragaudit.Run`).
    metrics : str or sequence of str, optional
        One metric (a string) or several; default every metric both runs hold.  With
        ``qrels``: the metrics to score (default ``evaluate``'s), all then compared.
    qrels : Qrels or path, optional
        ``compare --qrels``: score the two retrieval runs per question against these labels
        first, as ``evaluate`` does, with judged@k beside the metrics; a run whose top k is
        mostly unlabelled, and two runs whose judged@k differ by more than
        ``judged_margin``, are warned about (:class:`~ragaudit.exceptions.UnjudgedWarning`).
    cluster_by : {"source", "tag"} or a row field, optional
        ``compare --cluster-by`` (saved runs only): every verdict flips whole clusters
        (questions sharing a gold source, a first tag or the field's value), and
        ``noise["clustered"]`` adds naive and clustered intervals with the design effect.
    judge_repeats : bool, default False
        ``compare --judge-repeats`` (saved runs only): ``noise["judge_noise"]`` splits the
        variance of each judged metric into question sampling and judge noise, from the
        per-repeat verdicts of ``ragaudit judge --judge-repeats R``.
    questions : {"all", "answerable", "unanswerable"}, default "all"
        ``ragaudit compare --questions``.
    seed : int >= 0, default 0
    confidence : float in (0, 1), default 0.95
    method : {"auto", "score", "betting", "bootstrap", "percentile", "bca"}, default "auto"
        The interval (``compare --ci``): the one interval policy by default.
    n_resamples, n_permutations : int, default 10000
    exact_max_n : int, default 20
    allow_partial : bool, default False
        Allow runs that share fewer than half of their questions.
    subsample_sizes : sequence of int, default (10, 20)
    allow_different_data : bool, default False
        Compare saved runs whose corpus or golden-set fingerprints differ (refused otherwise:
        the questions are not the same experiment).
    judged_threshold, judged_margin : float, default 0.5 and 0.1
        ``compare --judged-threshold`` / ``--judged-margin``: with ``qrels`` against the
        labels, with saved runs against their gold documents.
    fail_if_worse : sequence of str, default ()
        ``compare --fail-if-worse``: the metrics a regression gate will read with
        :meth:`Comparison.regressions`; each must be compared, which is checked before any
        comparison (with ``metrics`` before the runs are read, else right after).

    Returns
    -------
    Comparison
        When both runs are saved runs, ``config_differences`` lists every configuration
        field that differs (:func:`ragaudit.diagnose.confounding.comparison_differences`);
        ``noise`` holds the ``cluster_by`` and ``judge_repeats`` analyses.  ``to_dict()`` is
        ``ragaudit compare --format json`` with the same options, ``to_report()`` what it
        prints.

    Examples
    --------
    >>> import ragaudit
    >>> a = ragaudit.SavedRun.from_dict({"name": "a", "config": {"k": 1}, "rows": [
    ...     {"id": f"q{i}", "retrieved": [], "metrics": {"correct": i < 4}} for i in range(8)]})
    >>> b = ragaudit.SavedRun.from_dict({"name": "b", "config": {"k": 1}, "rows": [
    ...     {"id": f"q{i}", "retrieved": [], "metrics": {"correct": True}} for i in range(8)]})
    >>> row = compare_runs(a, b, "correct").metrics[0]
    >>> row.statistic, row.pvalue   # 4 of 8 questions differ, all in B's favour: 2 * 0.5**4
    (0.5, 0.125)

    Retrieval runs scored against labels (``qrels``) and clustered saved runs:

    >>> labels = ragaudit.Qrels({f"q{i}": {"D": 1} for i in range(8)})
    >>> bm25 = ragaudit.Run({f"q{i}": ["x", "D"] for i in range(8)}, name="bm25")
    >>> dense = ragaudit.Run({f"q{i}": ["D", "x"] for i in range(8)}, name="dense")
    >>> c = compare_runs(bm25, dense, "mrr", qrels=labels)
    >>> [(m.metric, m.statistic) for m in c.metrics]   # 1/1 - 1/2 on each question
    [('mrr', 0.5), ('judged', 0.0)]
    >>> sourced = [ragaudit.SavedRun.from_dict({**run.to_dict(), "rows": [
    ...     {**row, "gold_docs": [f"doc{i // 2}"]} for i, row in enumerate(run.rows)]})
    ...     for run in (a, b)]
    >>> clustered = compare_runs(*sourced, "correct", cluster_by="source")
    >>> clustered.clustered, clustered.noise["clustered"].rows[0].result.n_clusters
    (True, 4)
    """
    names = check_metric_names(metrics)
    gates = check_metric_names(list(fail_if_worse), "fail_if_worse") or []
    check_gates(gates, names)
    judged = None
    # a saved-run file is read once, streamed, and the loaded run passed to every step below
    run_a, run_b = resolve_saved_runs(run_a, run_b)  # two large files: read at once
    if qrels is not None:
        if cluster_by or judge_repeats:
            raise InputError(
                "compare_runs: cluster_by and judge_repeats need saved runs; with qrels the "
                "runs are retrieval runs (--qrels takes neither --cluster-by nor --judge-repeats)"
            )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first, second = score_against_qrels(
                qrels, [run_a, run_b], names,
                judged_threshold=judged_threshold, judged_margin=judged_margin,
            )  # fmt: skip
        for w in caught:  # passed on; the judged@k ones are also kept in the result's JSON
            warnings.warn(w.message, w.category, stacklevel=2)
        unjudged = tuple(str(w.message) for w in caught if w.category is UnjudgedWarning)
        # judged@k itself is compared as a metric (a row of its own)
        judged = JudgedRuns((), (), judged_threshold, judged_margin, unjudged)
        names = None  # every scored metric, judged@k included
        check_gates(gates, None, first.metrics)
    else:
        first = load_per_question_metrics(run_a, "run_a")
        second = load_per_question_metrics(run_b, "run_b")
        # names are checked before anything is computed or warned about
        if names is None:  # every metric both runs hold is compared
            check_gates(gates, None, [m for m in first.metrics if m in set(second.metrics)])
        else:
            resolve_saved_run_metrics(names, list(dict.fromkeys(first.metrics + second.metrics)))
        # saved runs: judged@k of their top k against the gold documents, as the report shows
        judged = saved_pair_judged(
            run_a, run_b, threshold=judged_threshold, margin=judged_margin, metrics=names or ()
        )
        for message in () if judged is None else judged.warnings():
            warnings.warn(message, UnjudgedWarning, stacklevel=2)
    # what differs between the two saved runs' configurations; refuses different data
    differences = comparison_differences(run_a, run_b, allow_different_data=allow_different_data)
    option = "cluster_by" if cluster_by else "judge_repeats"
    saved = (
        [saved_run_for(run, option) for run in (run_a, run_b)]
        if cluster_by or judge_repeats
        else []
    )
    result = compare_loaded(
        first,
        second,
        names,
        questions=questions,
        seed=seed,
        confidence=confidence,
        method=method,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        exact_max_n=exact_max_n,
        allow_partial=allow_partial,
        subsample_sizes=subsample_sizes,
        # the verdicts flip whole clusters (run A's rows say who shares a source)
        clusters=question_clusters(saved[0], cluster_by) if cluster_by else None,
    )
    noise = {}
    if saved:  # the clustered and judge-noise tables shown beside the comparison
        noise = noise_analyses(
            saved[0], saved[1], [row.metric for row in result.metrics],
            cluster_by=cluster_by, judge_repeats=judge_repeats, metrics=names or (),
            questions=questions, confidence=result.confidence, allow_partial=allow_partial,
        )  # fmt: skip
    return replace(result, config_differences=differences, noise=noise, judged=judged)


def compare_directory(
    directory: str | os.PathLike[str],
    metric: str,
    *,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    method: str = "auto",
    seed: int = 0,
    exact_max_n: int = 20,
    allow_partial: bool = False,
    judged_threshold: float = JUDGED_THRESHOLD,
    judged_margin: float = JUDGED_MARGIN,
) -> PairwiseMatrix:
    """Every pair of the runs in ``directory`` compared on ``metric``, Holm-adjusted: what
    ``ragaudit compare --all DIR -m METRIC`` prints.

    The ``*.json`` / ``*.jsonl`` runs are read in file-name order, each once
    (:func:`~ragaudit.data.per_question_files.run_directory_files`), then compared by
    :func:`ragaudit.stats.pairwise.compare_all` (its docstring gives the methods); the options
    are :func:`compare_runs`'s.  When ``metric`` is a document-level retrieval metric, the
    saved runs' judged@k (each at its own k, every pair at its common depth) is in
    ``judged``, and a run with questions below ``judged_threshold``, or two runs further apart
    than ``judged_margin``, are warned about (:class:`~ragaudit.exceptions.UnjudgedWarning`).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name, k in (("a_base", 10), ("b_better", 25)):
    ...     rows = [{"id": f"q{i}", "hit": float(i < k)} for i in range(30)]
    ...     _ = (folder / f"{name}.jsonl").write_text("\\n".join(map(json.dumps, rows)))
    >>> compare_directory(folder, "hit", n_resamples=200).distinguishable   # 15 of 30 differ
    [('a_base', 'b_better')]
    """
    # a saved-run file is read once: its values and its judged@k from the same loaded run
    loaded = resolve_saved_runs(*run_directory_files(directory))
    runs = [load_per_question_metrics(run) for run in loaded]
    judged = directory_judged(loaded, metric, threshold=judged_threshold, margin=judged_margin)
    for message in () if judged is None else judged.warnings():
        warnings.warn(message, UnjudgedWarning, stacklevel=2)
    matrix = compare_all(
        runs,
        metric,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        confidence=confidence,
        method=method,
        seed=seed,
        exact_max_n=exact_max_n,
        allow_partial=allow_partial,
    )
    return replace(matrix, judged=judged)


def score_against_qrels(
    qrels: Qrels | str | os.PathLike[str],
    runs: Sequence[RetrievalRun],
    metrics: Sequence[str] | None = None,
    *,
    judged_threshold: float = JUDGED_THRESHOLD,
    judged_margin: float = JUDGED_MARGIN,
) -> list[PerQuestionMetrics]:
    """Each retrieval run scored per question against ``qrels``, as ``ragaudit evaluate``
    scores it, with judged@k beside the metrics.

    ``metrics`` default to ``evaluate``'s (:data:`~ragaudit.metrics.score_file.DEFAULT_METRICS`);
    one judged@k per cutoff is added (:func:`~ragaudit.metrics.judged.judged_names`).  The
    warnings of scoring (questions missing from a run, a top k mostly unlabelled, two runs
    whose judged@k differ by more than ``judged_margin``) are issued once each
    (:class:`~ragaudit.exceptions.UnjudgedWarning` and the scorer's own), however many runs
    raise them.

    Parameters
    ----------
    qrels : Qrels or path
        Relevance labels (a path is read by :func:`~ragaudit.data.formats.read_qrels`).
    runs : sequence of path or Run
        A file is named by its stem; a loaded :class:`Run` by its ``name`` (else ``run_a``,
        ``run_b``, ...).
    metrics : sequence of str, optional
    judged_threshold, judged_margin : float
        As ``compare --judged-threshold`` / ``--judged-margin``.

    Returns
    -------
    list of PerQuestionMetrics
        One per run, in order.

    Examples
    --------
    >>> labels = Qrels({"q1": {"A": 1}, "q2": {"B": 1}})
    >>> runs = [Run({"q1": ["A"], "q2": ["B"]}), Run({"q1": ["A"], "q2": ["x"]})]
    >>> a, b = score_against_qrels(labels, runs, ["hit@1"], judged_threshold=0, judged_margin=1)
    >>> a.values["q2"], b.values["q2"]   # judged@1 of q2 in run b: "x" has no label
    ({'hit@1': 1.0, 'judged@1': 1.0}, {'hit@1': 0.0, 'judged@1': 0.0})
    """
    labels = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    names = list(metrics or DEFAULT_METRICS)
    names += judged_names(names)
    scored, coverages = [], []
    with warnings.catch_warnings(record=True) as caught:  # each message once, as evaluate
        warnings.simplefilter("always")
        for i, run in enumerate(runs):
            name, path, ev = _score(labels, run, names, f"run_{'ab'[i] if i < 2 else i}")
            coverages.append(judged_coverage(ev, path or name, judged_threshold))
            scored.append(ev.to_per_question(name, path))
        warn_unjudged(coverages, judged_margin)
    for message in dict.fromkeys(str(w.message) for w in caught):
        category = next(w.category for w in caught if str(w.message) == message)
        warnings.warn(message, category, stacklevel=3)
    return scored


def _score(
    qrels: Qrels, run: RetrievalRun, names: list[str], default: str
) -> tuple[str, str | None, Evaluation]:
    """``(name, path, evaluation)`` of one retrieval run."""
    if isinstance(run, Run):
        return run.name or default, None, evaluate(qrels, run, names)
    if isinstance(run, str | os.PathLike):
        path = os.fspath(run)
        return Path(path).stem, path, score_run_file(qrels, path, names)
    raise InputError(
        f"{default}: with qrels, expected a retrieval run (a TREC, JSONL or JSON file, or a "
        f"ragaudit Run), found {type(run).__name__}"
    )


def saved_run_for(run: Any, option: str) -> SavedRun:
    """``run`` as a :class:`SavedRun` (loaded when it is a path) for ``option``, which reads
    the saved runs' rows; anything else is an :class:`InputError` naming the option.

    >>> saved_run_for({"q1": {"correct": 1.0}}, "cluster_by")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: cluster_by: expected saved runs (their rows name each question's sources, tags and judge repeats), found dict
    """  # noqa: E501
    if isinstance(run, SavedRun):
        return run
    if isinstance(run, str | os.PathLike):
        return load_saved_run(os.fspath(run))
    raise InputError(
        f"{option}: expected saved runs (their rows name each question's sources, tags and "
        f"judge repeats), found {type(run).__name__}"
    )


def noise_analyses(
    run_a: SavedRun,
    run_b: SavedRun,
    compared: Sequence[str],
    *,
    cluster_by: str | None = None,
    judge_repeats: bool = False,
    metrics: Sequence[str] = (),
    questions: str = "all",
    confidence: float = 0.95,
    allow_partial: bool = False,
) -> dict[str, ClusteredComparison | JudgeNoiseComparison]:
    """The clustered and judge-noise analyses of two saved runs, keyed for JSON output.

    ``clustered``: naive and clustered intervals of every ``compared`` metric
    (:func:`~ragaudit.diagnose.noise.clustered_comparison`).  ``judge_noise`` (or
    ``judge_noise_METRIC`` when several): the variance of each judged metric split into
    question sampling and judge noise
    (:func:`~ragaudit.diagnose.judge_noise.judge_noise_comparison`), for the compared metrics
    with per-repeat verdicts, else the requested ``metrics``, else ``correct``.

    Examples
    --------
    >>> row = {"id": "q1", "retrieved": [], "metrics": {"correct": True}}
    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [row]})
    >>> noise_analyses(run, run, ["correct"])   # neither option: nothing to add
    {}
    """
    out: dict[str, ClusteredComparison | JudgeNoiseComparison] = {}
    if cluster_by:
        out["clustered"] = clustered_comparison(
            run_a, run_b, cluster_by, list(compared),
            questions=questions, confidence=confidence, allow_partial=allow_partial,
        )  # fmt: skip
    if judge_repeats:
        judged = (
            [m for m in compared if repeat_scores(run_a, m) or repeat_scores(run_b, m)]
            or list(metrics)
            or ["correct"]
        )
        for metric in judged:
            key = "judge_noise" if len(judged) == 1 else f"judge_noise_{metric}"
            out[key] = judge_noise_comparison(run_a, run_b, metric, confidence=confidence)
    return out
