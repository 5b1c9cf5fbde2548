"""pandas DataFrames of labels and runs (the ``pandas`` extra, imported when used)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaudit._io import require
from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run
from ragaudit.exceptions import InputError

__all__ = ["qrels_from_dataframe", "qrels_to_dataframe", "run_from_dataframe", "run_to_dataframe"]


def _pandas() -> Any:
    return require("pandas", extra="pandas", feature="DataFrame conversion")


def qrels_to_dataframe(qrels: Qrels) -> Any:
    """Qrels as a DataFrame with columns ``qid, docid, grade``."""
    pd = _pandas()
    rows = [(q, d, g) for q, items in qrels.items() for d, g in items.items()]
    return pd.DataFrame(rows, columns=["qid", "docid", "grade"])


def qrels_from_dataframe(frame: Any, unit: str = "doc") -> Qrels:
    """Qrels from a DataFrame with columns ``qid, docid, grade``."""
    _require_columns(frame, ("qid", "docid", "grade"))
    labels: dict[str, dict[str, int]] = {}
    for qid, item, grade in zip(frame["qid"], frame["docid"], frame["grade"], strict=True):
        labels.setdefault(str(qid), {})[str(item)] = grade
    return Qrels(labels, unit=unit)


def run_to_dataframe(run: Run) -> Any:
    """A run as a DataFrame with columns ``qid, docid, rank, score`` (score NaN if absent)."""
    pd = _pandas()
    rows = []
    for qid in run:
        scores = run.scores(qid)
        for rank, item in enumerate(run[qid], start=1):
            rows.append((qid, item, rank, float("nan") if scores is None else scores[rank - 1]))
    return pd.DataFrame(rows, columns=["qid", "docid", "rank", "score"])


def run_from_dataframe(
    frame: Any, unit: str = "doc", order: str = "score", duplicates: str = "error"
) -> Run:
    """A run from a DataFrame with columns ``qid, docid, score`` (or ``qid, docid, rank``)."""
    if "score" in getattr(frame, "columns", ()):
        _require_columns(frame, ("qid", "docid", "score"))
        rankings: dict[str, Any] = {}
        for qid, item, score in zip(frame["qid"], frame["docid"], frame["score"], strict=True):
            rankings.setdefault(str(qid), []).append((str(item), float(score)))
        return Run(rankings, unit=unit, order=order, duplicates=duplicates)
    _require_columns(frame, ("qid", "docid", "rank"))
    ordered = frame.sort_values(["qid", "rank"], kind="stable")
    ranked: dict[str, Any] = {}
    for qid, item in zip(ordered["qid"], ordered["docid"], strict=True):
        ranked.setdefault(str(qid), []).append(str(item))
    return Run(ranked, unit=unit, order="given", duplicates=duplicates)


def _require_columns(frame: Any, columns: Sequence[str]) -> None:
    have = list(getattr(frame, "columns", ()))
    missing = [c for c in columns if c not in have]
    if missing:
        raise InputError(
            f"DataFrame: expected columns {', '.join(columns)}, missing {', '.join(missing)}"
        )
