"""judged@k beside the retrieval metrics of commands that print several saved runs:
``compare RUN_A RUN_B``, ``compare --all DIR``, ``funnel A B``, ``labels bias`` and
``baseline update``.

Every retrieval number of a saved run is scored against the golden set's gold documents, and
every other document retrieved was never judged and counts as non-relevant (pooling bias;
Buckley & Voorhees 2004).  :func:`runs_judged` measures each run's judged@k with
:func:`~ragaudit.diagnose.unjudged.run_judged` (ir_measures' Judged@k) and each compared pair
at their common depth with :func:`~ragaudit.diagnose.unjudged.pair_coverages`;
:class:`JudgedRuns` holds them with the warnings, worded by :mod:`ragaudit.metrics.judged` as
``evaluate``, ``compare`` and the dashboard word them.  The functions below it are what each
command calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragaudit.data.per_question_files import (
    BaselineUpdate,
    resolve_saved_run,
    saved_run_or_none,
    update_baseline,
)
from ragaudit.data.records import as_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.label_bias import BiasResult, compute_label_bias
from ragaudit.diagnose.unjudged import RunJudged, pair_coverages, retrieval_metric, run_judged
from ragaudit.exceptions import InputError
from ragaudit.metrics.judged import JUDGED_MARGIN, JUDGED_THRESHOLD, JudgedCoverage, judged_gap

__all__ = [
    "JudgedRuns",
    "PairJudged",
    "baseline_update",
    "directory_judged",
    "judged_label_bias",
    "runs_judged",
    "saved_pair_judged",
]


@dataclass(frozen=True)
class PairJudged:
    """Two runs' document-level judged@k at their common depth.

    Attributes
    ----------
    a, b : JudgedCoverage
        Run A's and run B's, at the same ``k``.
    margin : float
        A gap ``|b - a|`` above it is warned about (:func:`~ragaudit.metrics.judged.judged_gap`).
    """

    a: JudgedCoverage
    b: JudgedCoverage
    margin: float = JUDGED_MARGIN

    @property
    def gap(self) -> float:
        """``mean_b - mean_a`` (B - A, as a comparison's differences)."""
        return self.b.mean - self.a.mean

    def message(self) -> str | None:
        """The warning when the gap is more than the margin, else None."""
        return judged_gap(self.a, self.b, self.margin)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the runs, the depth, both means, the gap, the margin and the warning."""
        return {
            "run_a": self.a.run,
            "run_b": self.b.run,
            "metric": self.a.metric,
            "k": self.a.k,
            "unit": self.a.unit or None,
            "mean_a": self.a.mean,
            "mean_b": self.b.mean,
            "gap": self.gap,
            "margin": self.margin,
            "warning": self.message(),
        }


@dataclass(frozen=True)
class JudgedRuns:
    """judged@k of the saved runs a command prints retrieval metrics of, and its warnings.

    Attributes
    ----------
    runs : tuple of RunJudged
        Each run's (:func:`~ragaudit.diagnose.unjudged.run_judged`), in the command's order.
    pairs : tuple of PairJudged
        The compared pairs, at their common depth.
    threshold, margin : float
        Questions below ``threshold`` are named; pairs further apart than ``margin`` warned.
    scored : tuple of str, default ()
        Warnings of judged@k measured elsewhere: ``compare --qrels`` scores judged@k as a
        metric of each retrieval run and words its warnings with
        :func:`~ragaudit.metrics.judged.unjudged_messages` (``runs`` then empty).
    """

    runs: tuple[RunJudged, ...]
    pairs: tuple[PairJudged, ...] = ()
    threshold: float = JUDGED_THRESHOLD
    margin: float = JUDGED_MARGIN
    scored: tuple[str, ...] = ()

    @property
    def measured(self) -> bool:
        """Whether any run has a judged@k (a run without gold documents or chunk labels has
        none)."""
        return any(run.doc is not None or run.chunk is not None for run in self.runs)

    def warnings(self) -> tuple[str, ...]:
        """Each run's (questions below the threshold, items absent from the corpus), then each
        pair's gap beyond the margin."""
        gaps = (pair.message() for pair in self.pairs)
        own = (w for run in self.runs for w in run.warnings())
        return (*own, *(g for g in gaps if g), *self.scored)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the threshold and margin, each run's judged@k per level, each pair, and
        the warnings."""
        return {
            "threshold": self.threshold,
            "margin": self.margin,
            "runs": [run.to_dict() for run in self.runs],
            "pairs": [pair.to_dict() for pair in self.pairs],
            "warnings": list(self.warnings()),
        }


def _check_shares(threshold: float, margin: float) -> None:
    for name, share in (("threshold", threshold), ("margin", margin)):
        if not 0.0 <= share <= 1.0:
            raise InputError(
                f"judged {name}: expected a share in [0, 1], found {share}; pass "
                f"--judged-{name} between 0 and 1"
            )


def runs_judged(
    runs: Sequence[SavedRun],
    *,
    labels: Any = None,
    k: int | None = None,
    threshold: float = JUDGED_THRESHOLD,
    margin: float = JUDGED_MARGIN,
    pairs: str = "first",
    known: Sequence[RunJudged | None] = (),
) -> JudgedRuns:
    """judged@k of each saved run and of each compared pair.

    Per question ``judged@k = |labelled documents in the top k| / min(k, |ranking|)``
    (ir_measures' Judged@k; the top k chunks lifted to their documents), averaged over the
    questions with gold documents; with chunk ``labels``, at chunk level too.  Each run is
    measured at ``k`` (default its own); each pair at ``k`` (default ``min(k_a, k_b)``), so
    runs of different depths are compared on the same top.

    Parameters
    ----------
    runs : sequence of SavedRun
    labels : ChunkLabels or Qrels, optional
        Chunk labels made for the runs' chunking (:func:`~ragaudit.diagnose.unjudged.run_judged`).
    k : int, optional
    threshold : float in [0, 1], default 0.5
    margin : float in [0, 1], default 0.1
    pairs : {"first", "all", "none"}, default "first"
        Which pairs are compared: each later run with the first, every pair, or none.
    known : sequence of RunJudged or None
        Runs already measured at their depth (not measured again).

    Examples
    --------
    >>> def run(name, docs):
    ...     row = {"id": "q1", "gold_docs": ["G"], "retrieved": [
    ...         {"chunk_id": d + "0", "doc_id": d, "rank": i + 1} for i, d in enumerate(docs)]}
    ...     return SavedRun.from_dict({"name": name, "config": {"k": 2}, "rows": [row]})
    >>> judged = runs_judged([run("a", ["G", "X"]), run("b", ["X", "Y"])])
    >>> [r.doc.mean for r in judged.runs], judged.pairs[0].gap   # 1/2 and 0/2
    ([0.5, 0.0], -0.5)
    >>> [w[:33] for w in judged.warnings()]
    ['b: judged@2 (document level) is 0', 'judged@2 (document level) differs']
    """
    _check_shares(threshold, margin)
    if pairs not in ("first", "all", "none"):
        raise InputError(f"pairs: expected 'first', 'all' or 'none', found {pairs!r}")
    measured = tuple(
        own if own is not None else run_judged(run, labels, k=k, threshold=threshold)
        for run, own in zip(runs, [*known, *([None] * (len(runs) - len(known)))], strict=True)
    )
    n = len(runs)
    wanted = (
        [(i, j) for i in range(n) for j in range(i + 1, n)]
        if pairs == "all"
        else [(0, j) for j in range(1, n)]
        if pairs == "first"
        else []
    )
    compared = []
    for i, j in wanted:
        both = pair_coverages(runs[i], runs[j], k=k, known=(measured[i], measured[j]))
        if both is not None:
            compared.append(PairJudged(*both, margin))
    return JudgedRuns(measured, tuple(compared), threshold, margin)


def saved_pair_judged(
    run_a: Any,
    run_b: Any,
    *,
    threshold: float = JUDGED_THRESHOLD,
    margin: float = JUDGED_MARGIN,
    metrics: Sequence[str] = (),
) -> JudgedRuns | None:
    """judged@k of two compared saved runs (``ragaudit compare RUN_A RUN_B``): each at its
    own k, the pair at the common depth.  None unless both are saved runs (objects or files),
    when ``metrics`` (the compared metrics; empty: all) name no document-level retrieval
    metric, or when neither run names a gold document.

    >>> row = {"id": "q1", "gold_docs": ["G"], "retrieved": [{"chunk_id": "G0", "doc_id": "G"}]}
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [row]})
    >>> saved_pair_judged(run, run, metrics=["correct"]) is None   # no retrieval metric
    True
    >>> saved_pair_judged(run, run).pairs[0].gap
    0.0
    """
    _check_shares(threshold, margin)
    if metrics and not any(retrieval_metric(name) for name in metrics):
        return None
    a, b = saved_run_or_none(run_a), saved_run_or_none(run_b)
    if a is None or b is None:
        return None
    judged = runs_judged([a, b], threshold=threshold, margin=margin)
    return judged if judged.measured else None


def judged_label_bias(
    saved: SavedRun | Mapping[str, Any] | str,
    labels: Any,
    *,
    k: int | None = None,
    n_shifts: int = 5,
    threshold: float = JUDGED_THRESHOLD,
) -> BiasResult:
    """``ragaudit labels bias``: :func:`~ragaudit.diagnose.label_bias.compute_label_bias`, with
    the run's judged@k at its ``k`` at document and chunk level in ``judged`` (how much of
    each level's numbers rests on labelled items; questions below ``threshold`` named).

    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "gold_docs": ["D"],
    ...        "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> from ragaudit.data.qrels import Qrels
    >>> bias = judged_label_bias(run, Qrels({"q1": {"D#0": 2}}, unit="chunk"))
    >>> bias.judged.runs[0].doc.mean, bias.judged.runs[0].chunk.mean  # D labelled, D#1 not
    (1.0, 0.0)
    """
    run = as_saved_run(saved)
    result = compute_label_bias(run, labels, k=k, n_shifts=n_shifts)
    judged = runs_judged([run], labels=labels, k=result.k, threshold=threshold)
    return replace(result, judged=judged)


def directory_judged(
    runs: Sequence[Any],
    metric: str,
    *,
    threshold: float = JUDGED_THRESHOLD,
    margin: float = JUDGED_MARGIN,
) -> JudgedRuns | None:
    """judged@k of the saved runs among ``runs`` (``compare --all``: the loaded runs of a
    directory, saved runs or other files' per-question values), every pair compared; None
    when ``metric`` is not a document-level retrieval metric or no run is a saved run."""
    _check_shares(threshold, margin)
    if not retrieval_metric(metric):
        return None
    saved = [run for run in runs if isinstance(run, SavedRun)]
    if not saved:
        return None
    judged = runs_judged(saved, threshold=threshold, margin=margin, pairs="all")
    return judged if judged.measured else None


def _previous(target: str | os.PathLike[str]) -> SavedRun | None:
    """The baseline about to be replaced, when it is a saved run that still reads."""
    if not Path(target).is_file():
        return None
    try:
        return saved_run_or_none(target)
    except (InputError, OSError):
        return None  # a broken previous baseline is simply replaced


def baseline_update(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    threshold: float = JUDGED_THRESHOLD,
    margin: float = JUDGED_MARGIN,
) -> tuple[BaselineUpdate, JudgedRuns | None]:
    """``ragaudit baseline update``: :func:`~ragaudit.data.per_question_files.update_baseline`,
    with judged@k of the previous baseline and of the new one when they are saved runs with
    retrieval metrics (named ``TARGET (previous)`` and ``SOURCE``; the pair at their common
    depth): the judged@k a later ``compare --baseline`` will rest on.

    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.json").write_text(json.dumps({"q1": {"hit": 1.0}}))
    >>> done, judged = baseline_update(folder / "run.json", folder / "baseline.json")
    >>> done.unchanged, judged   # per-question values: no ranking to measure
    (False, None)
    """
    _check_shares(threshold, margin)
    before = _previous(target)
    loaded = resolve_saved_run(source)  # each file loaded once, for the means and judged@k
    now = loaded if isinstance(loaded, SavedRun) else None
    done = update_baseline(source, target, loaded=(now, before))
    if now is None or not any(retrieval_metric(name) for name in done.new.means()):
        return done, None  # no ranking, or no retrieval metric printed: nothing to show
    runs = [now.replace(name=os.fspath(source))]
    if before is not None and not done.unchanged:
        runs.insert(0, before.replace(name=f"{os.fspath(target)} (previous)"))
    judged = runs_judged(runs, threshold=threshold, margin=margin)
    return done, judged if judged.measured else None
