"""What :func:`ragaudit.compare_runs` adds around the paired statistics of
:func:`ragaudit.stats.compare.compare_runs`: retrieval runs scored against labels (``qrels=``),
questions clustered by a shared source (``cluster_by=``) and judge noise (``judge_repeats=``).

Each is one function from loaded inputs to what the comparison needs: per-question values
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
from pathlib import Path
from typing import Any

from ragaudit.data.formats import read_qrels
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import load_saved_run
from ragaudit.data.runs import Run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.judge_noise import (
    JudgeNoiseComparison,
    judge_noise_comparison,
    repeat_scores,
)
from ragaudit.diagnose.noise import ClusteredComparison, clustered_comparison
from ragaudit.exceptions import InputError
from ragaudit.metrics.evaluate import Evaluation, evaluate
from ragaudit.metrics.judged import (
    JUDGED_MARGIN,
    JUDGED_THRESHOLD,
    judged_coverage,
    judged_names,
    warn_unjudged,
)
from ragaudit.metrics.score_file import DEFAULT_METRICS, score_run_file

__all__ = ["noise_analyses", "saved_run_for", "score_against_qrels"]

#: A retrieval run for ``qrels=``: a run file (TREC, JSONL or JSON) or a loaded :class:`Run`.
RetrievalRun = str | os.PathLike[str] | Run


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
