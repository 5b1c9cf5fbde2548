"""The dashboard's judged rows of a repeated run: one number per row, the mean over repeats.

A run made with ``--repeats R`` holds ``R`` generations of each question.  Its dashboard rows
that rest on the generation and its judges -- end-to-end correctness, faithfulness and the
two wrong-abstention rates -- are the mean over every (question, repeat) cell, with the
question as the unit of the interval (:func:`~ragaudit.stats.repeated_runs.cells_mean_interval`:
Korn and Graubard's beta interval on the cluster-robust variance, questions as clusters), so
the dashboard prints the very number and interval of the repeats section ("correct, mean of R
repeats").  Each cell is read as the funnel reads a run of one generation:

==================================  ==================================================
row                                 cell (question i, repeat r)
==================================  ==================================================
end-to-end correctness              1 correct, 0 not; undecided counts 0 (as the funnel)
faithfulness                        the repeat's faithfulness score; none: no value
wrong abstention: refused with      1 refused, 0 answered, among the cells whose
evidence                            evidence was in the context (funnel place past stage 2)
wrong abstention: answered          1 answered, 0 refused, over the unanswerable
unanswerable                        questions (the repeat's own funnel)
==================================  ==================================================

``n`` is the questions with at least one valued cell; ``decided`` counts (question, repeat)
cells the judge decided, of ``questions x R`` (``decided 160/162 cells``).  The MDE is that
of a comparison as ``compare`` makes it for repeated runs: on the per-question means
(:func:`~ragaudit.stats.mde.run_mde`, a shift of every question's mean).

The retrieval rows (recall, nDCG, precision, judged@k) read repeat 0: retrieval is the same
in every repeat unless an entry stores its own ``retrieved``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit_result import MDE_DISCORDANCE, DashboardRow
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.diagnose.repeats import RepeatsAnalysis
from ragaudit.exceptions import InputError
from ragaudit.stats.mde import run_mde
from ragaudit.stats.repeated_runs import cells_mean_interval

__all__ = ["repeated_judged_rows"]

#: Funnel places whose evidence never reached the context (stage 1 or 2, or undecided there).
_NO_EVIDENCE = frozenset(
    {"1-retrieval", "2-evidence", "unjudged at 1-retrieval", "unjudged at 2-evidence"}
)


def _row(base: DashboardRow, cells: np.ndarray, repeats: int, decided: int | None) -> DashboardRow:
    """``base`` (repeat 0's row) with the mean over the valued cells of ``cells``."""
    label = f"{base.label}, mean of {repeats} repeats"
    valued = ~np.isnan(cells)
    kept = cells[valued.any(axis=1)]
    if not kept.size:
        return replace(base, label=label, value=None, ci_low=None, ci_high=None, n=0,
                       count=None, interval="", mde=None, mde_assumption="")  # fmt: skip
    try:
        result = cells_mean_interval(kept, base.label)
    except InputError:  # fewer than 2 questions: no interval over questions
        return replace(base, label=label, value=float(np.nanmean(kept)), ci_low=None,
                       ci_high=None, n=len(kept), count=None, interval="", mde=None,
                       mde_assumption="")  # fmt: skip
    means = np.nanmean(kept, axis=1)
    found = run_mde(means.tolist(), discordance=MDE_DISCORDANCE)
    return replace(
        base,
        label=label,
        value=result.statistic,
        ci_low=result.confidence_interval.low,
        ci_high=result.confidence_interval.high,
        n=len(kept),
        count=None,
        interval=result.method,
        mde=found.mde,
        mde_assumption=found.assumption + "; on the per-question means over repeats",
        decided=None if decided is None else (decided, cells.size),
        decided_unit="cells" if decided is not None else "",
    )


def _unanswerable_cells(saved: SavedRun, k: int) -> np.ndarray:
    """``(u, R)``: 1 answered, 0 refused, NaN undecided, per unanswerable question and repeat
    (each repeat's own funnel, as :func:`~ragaudit.diagnose.abstention.abstention_rates`)."""
    found = [compute_funnel(saved.repeat(r), k=k).unanswerable for r in range(saved.repeats)]
    ids = sorted({qid for una in found for qid in (*una.answered_ids, *una.refused_ids)})
    out = np.full((len(ids), saved.repeats), np.nan)
    for r, una in enumerate(found):
        answered, refused = set(una.answered_ids), set(una.refused_ids)
        for i, qid in enumerate(ids):
            out[i, r] = 1.0 if qid in answered else 0.0 if qid in refused else np.nan
    return out


def repeated_judged_rows(
    saved: SavedRun, rows: tuple[DashboardRow, ...], analysis: RepeatsAnalysis | None, k: int
) -> tuple[DashboardRow, ...]:
    """``rows`` with the judged rows of a repeated run replaced by their means over repeats
    (module docstring); ``rows`` unchanged for an unrepeated run (``analysis`` None)."""
    if analysis is None or saved.repeats < 2:
        return rows
    repeats = saved.repeats
    answerable = np.asarray(saved.answerable_flags, dtype=bool)
    undecided = analysis.undecided
    cells: dict[str, tuple[np.ndarray, int | None]] = {
        "correct": (analysis.outcomes, analysis.outcomes.size - undecided),
    }
    try:
        faith = np.asarray(saved.repeat_outcomes("faithfulness"), dtype=float)[answerable]
        cells["faithfulness"] = (faith, int((~np.isnan(faith)).sum()))
    except InputError:  # no repeat has a faithfulness score: the row keeps its note
        pass
    if analysis.places is not None:
        places = analysis.places.astype(str)
        evidence = ~np.isin(places, list(_NO_EVIDENCE))
        refused = np.where(evidence, (places == "3-refusal").astype(float), np.nan)
        judged = ~np.char.startswith(places, "unjudged at 1") & ~np.char.startswith(
            places, "unjudged at 2")  # fmt: skip
        cells["over_refusal"] = (refused, int(judged.sum()))
    cells["answered_unanswerable"] = (_unanswerable_cells(saved, k), None)
    return tuple(
        _row(row, cells[row.key][0], repeats, cells[row.key][1]) if row.key in cells else row
        for row in rows
    )
