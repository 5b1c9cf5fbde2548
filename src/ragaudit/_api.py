"""Small public wrappers: a result object with ``to_dict`` and ``to_pandas`` where the
underlying function returns plain rows, and file paths where the library layer takes loaded
objects (``stats`` reads no files).  ``ragaudit.compare_runs`` lives in
:mod:`ragaudit.diagnose.compare`, where ``ragaudit compare`` calls it too."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit._frames import records_frame
from ragaudit._present import short_repr
from ragaudit._validate import check_fraction, check_int
from ragaudit.exceptions import InputError
from ragaudit.stats.options import PLAN_DISAGREEMENTS, PLAN_SIZES
from ragaudit.stats.power import PlanningRow, planning_table

if TYPE_CHECKING:
    from ragaudit.data.qrels import Qrels
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.audit_result import Audit
    from ragaudit.diagnose.label_bias import BiasResult
    from ragaudit.labels.format import ChunkLabels
    from ragaudit.reports.report import Report

__all__ = ["Plan", "audit", "label_bias", "plan"]


@dataclass(frozen=True, repr=False)
class Plan:
    """Minimum detectable effects of a paired 0/1 comparison (see :func:`plan`).

    Attributes
    ----------
    rows : tuple of PlanningRow
        ``(n, disagree, mde)``, n-major; ``mde`` None when nothing is detectable.
    power, alpha : float
    """

    rows: tuple[PlanningRow, ...]
    power: float
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"power", "alpha", "rows": [{"n", "disagree", "mde"}, ...]}``."""
        return {
            "power": self.power,
            "alpha": self.alpha,
            "rows": [{"n": r.n, "disagree": r.disagree, "mde": r.mde} for r in self.rows],
        }

    def to_pandas(self) -> Any:
        """One row per (n, disagree) pair (needs the ``pandas`` extra)."""
        return records_frame(self.to_dict()["rows"])

    def to_report(self) -> Report:
        """The table ``ragaudit plan`` prints."""
        from ragaudit.reports.stats import plan_report

        return plan_report(list(self.rows), self.power, self.alpha)

    def _repr_html_(self) -> str:
        from ragaudit.reports.renderer import render_html_fragment

        return render_html_fragment(self.to_report())

    def __repr__(self) -> str:
        def mde(row: PlanningRow) -> str:
            return "-" if row.mde is None else f"{row.mde:.3f}"

        return short_repr(
            f"Plan(power={self.power:g}, alpha={self.alpha:g}, rows={len(self.rows)})",
            [f"n={r.n} disagree={r.disagree:g}: mde {mde(r)}" for r in self.rows],
        )


def plan(
    ns: Sequence[int] = PLAN_SIZES,
    disagree: Sequence[float] = PLAN_DISAGREEMENTS,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
) -> Plan:
    """How many questions a golden set needs: the smallest paired effect McNemar's exact test
    detects with ``power`` at level ``alpha``, for each ``n`` and disagreement rate.

    A thin wrapper of :func:`ragaudit.stats.power.planning_table` (which documents the
    computation and cites its references); the defaults are ``ragaudit plan``'s.

    Parameters
    ----------
    ns : sequence of int, default (20, 42, 100, 300, 1000)
        Golden-set sizes.
    disagree : sequence of float in (0, 1), default (0.1, 0.2, 0.3)
        Shares of questions where the two systems differ.
    power, alpha : float in (0, 1)

    Examples
    --------
    >>> p = plan([50, 200], [0.1])
    >>> [row["n"] for row in p.to_dict()["rows"]]
    [50, 200]
    >>> len(plan().rows)   # ragaudit plan's table: 5 sizes x 3 rates
    15
    """
    sizes = [check_int(n, "ns[]") for n in _sequence(ns, "ns", "golden-set sizes, e.g. [50, 200]")]
    rates = [
        check_fraction(d, "disagree[]")
        for d in _sequence(disagree, "disagree", "disagreement rates, e.g. [0.1, 0.2]")
    ]
    power, alpha = check_fraction(power, "power"), check_fraction(alpha, "alpha")
    rows = planning_table(sizes, rates, power=power, alpha=alpha)
    return Plan(tuple(rows), power, alpha)


def _sequence(value: Any, name: str, what: str) -> list[Any]:
    """``value`` as a list when it is a list-like of values (a string or a number is not)."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InputError(f"{name}: expected a list of {what}, found {value!r:.60}")
    return list(value)


def audit(
    runs: SavedRun | str | os.PathLike[str] | Sequence[SavedRun | str | os.PathLike[str]],
    *,
    labels: ChunkLabels | Qrels | str | os.PathLike[str] | None = None,
    corpus: str | os.PathLike[str] | None = None,
    chunk_texts: Mapping[str, str] | None = None,
    cluster_by: str | None = None,
    human: Sequence[Mapping[str, float] | str | os.PathLike[str] | None] = (),
    seed: int = 0,
    n_resamples: int = 2000,
    compare_resamples: int = 10_000,
    allow_different_data: bool = False,
    judged_threshold: float = 0.5,
    judged_margin: float = 0.1,
) -> Audit:
    """The whole audit of one or more saved runs: what ``ragaudit report`` shows, as an object.

    The dashboard (six numbers with 95% intervals, n and the MDE), each run's funnel, label
    bias (with chunk ``labels``), clustered intervals (``cluster_by``), calibration
    (``human``) and the paired comparison of each later run with the first, Holm-adjusted.
    :func:`ragaudit.diagnose.audit.build_audit` computes it (its docstring gives the methods);
    this wrapper also reads a chunk-label file and the corpus.  ``audit(...).to_dict()`` equals
    ``ragaudit report RUNS --format json`` with the same options.

    Parameters
    ----------
    runs : SavedRun, path, or a sequence of them
    labels : ChunkLabels, Qrels (chunk unit) or path of a chunk-label file, optional
    corpus : path, optional
        The runs' corpus directory (``report --corpus``): the drill-down shows the retrieved
        chunks' texts, rebuilt with the first run's chunking (its corpus hash is checked),
        and the golden questions the first run carries are checked against it
        (``audit.golden_check``: the findings and validity checks of ``golden check``).
    chunk_texts : mapping, optional
        ``{chunk_id: text}`` for the drill-down, instead of ``corpus``.
    cluster_by : str, optional
        ``source``, ``tag`` or a row field.
    human : sequence of mappings or paths, optional
        Human verdicts on ``correct``, one per run in order.
    seed, n_resamples, compare_resamples : int
        As ``ragaudit report --seed --resamples`` (the comparison uses 10,000, as ``compare``).
    allow_different_data : bool, default False
        ``report --allow-different-data``: compare runs whose corpus or golden set differ.
    judged_threshold, judged_margin : float, default 0.5 and 0.1
        ``report --judged-threshold --judged-margin``: judged@k warnings.

    Returns
    -------
    Audit
        ``print`` it, show it in a notebook, or call ``to_report()``, ``to_dict()``,
        ``to_pandas()``.

    Examples
    --------
    >>> import ragaudit
    >>> row = {"id": "q1", "answerable": True, "gold_docs": ["G"],
    ...        "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
    ...        "judges": {"abstained": False, "correct": True, "evidence_in_context": True}}
    >>> a = ragaudit.audit(ragaudit.SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...                                                 "rows": [row]}), n_resamples=10)
    >>> a.runs[0].funnel.correct_end_to_end, a.to_dict()["runs"][0]["name"]
    (1.0, 'r')
    """
    from ragaudit.diagnose.audit import build_audit

    if isinstance(labels, str | os.PathLike):
        from ragaudit.labels.format import load_chunk_labels

        labels = load_chunk_labels(labels)
    loaded: list[Any] = []
    if corpus is not None:
        from ragaudit.data.records import load_saved_run
        from ragaudit.data.saved_run import SavedRun as Saved
        from ragaudit.pipeline.corpus import chunk_texts as texts_of

        listed = list(runs) if isinstance(runs, Sequence) and not isinstance(runs, str) else [runs]
        loaded = [r if isinstance(r, Saved) else load_saved_run(os.fspath(r)) for r in listed]
        if chunk_texts is None and loaded:
            chunk_texts = texts_of(os.fspath(corpus), loaded[0].config)
        runs = loaded
    found = build_audit(
        runs,
        labels=labels,
        chunk_texts=chunk_texts,
        seed=seed,
        n_resamples=n_resamples,
        compare_resamples=compare_resamples,
        cluster_by=cluster_by,
        human=human,
        allow_different_data=allow_different_data,
        judged_threshold=judged_threshold,
        judged_margin=judged_margin,
    )
    if corpus is not None and loaded:
        from dataclasses import replace

        from ragaudit.pipeline.golden_check import run_golden_check

        found = replace(found, golden_check=run_golden_check(loaded[0], os.fspath(corpus)))
    return found


def label_bias(
    run: SavedRun | str | os.PathLike[str],
    labels: ChunkLabels | Qrels | str | os.PathLike[str],
    *,
    k: int | None = None,
    n_shifts: int = 5,
    judged_threshold: float = 0.5,
) -> BiasResult:
    """How much document-level labels flatter a run: ``ragaudit labels bias RUN --labels FILE``.

    The run and the chunk labels may both be files (or loaded objects);
    :func:`ragaudit.diagnose.label_bias.compute_label_bias` computes the result (its docstring
    gives the definitions), and ``judged`` holds the run's judged@k at ``k`` at document and
    chunk level, questions below ``judged_threshold`` named in its warnings
    (:func:`ragaudit.diagnose.judged_beside.judged_label_bias`).

    Examples
    --------
    >>> import ragaudit
    >>> run = {"config": {"k": 1}, "rows": [{"id": "q1", "answerable": True,
    ...        "gold_docs": ["D"], "retrieved": [{"chunk_id": "D#1", "doc_id": "D", "rank": 1}]}]}
    >>> labels = ragaudit.Qrels({"q1": {"D#0": 2}}, unit="chunk")
    >>> label_bias(ragaudit.SavedRun.from_dict(run), labels).hit_inflation  # doc hit, no chunk hit
    1.0
    """
    from ragaudit.diagnose.judged_beside import judged_label_bias

    if isinstance(labels, str | os.PathLike):
        from ragaudit.labels.format import load_chunk_labels

        labels = load_chunk_labels(labels)
    if isinstance(run, os.PathLike):
        run = os.fspath(run)
    return judged_label_bias(run, labels, k=k, n_shifts=n_shifts, threshold=judged_threshold)
