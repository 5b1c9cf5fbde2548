"""Relevance labels ("qrels"): per question, item id -> non-negative integer grade.

Grades follow the chapter's convention: 0 not relevant, 1 related, 2 contains the answer; any
non-negative integer is allowed.  Labels declare their *unit*: ``"doc"`` when whole documents
are labelled, ``"chunk"`` when retrieval units are.  Every score ragaudit prints names the unit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from ragaudit.exceptions import InputError

__all__ = ["Qrels", "Unit"]

Unit = Literal["doc", "chunk"]
UNITS: tuple[str, ...] = ("doc", "chunk")


def check_unit(unit: str) -> Unit:
    """Validate a unit name."""
    if unit not in UNITS:
        raise InputError(f"unit: expected one of {', '.join(UNITS)}, found {unit!r}")
    return unit  # type: ignore[return-value]


class Qrels(Mapping[str, Mapping[str, int]]):
    """Graded relevance labels for a set of questions.

    Parameters
    ----------
    labels : mapping of str to mapping of str to int
        ``{question_id: {item_id: grade}}``.  Grades must be non-negative integers.
    unit : {"doc", "chunk"}, default "doc"
        What the item ids name.
    name : str, optional
        Where the labels came from (a file name), used in messages.

    Examples
    --------
    >>> qrels = Qrels({"q1": {"A": 2, "B": 0}, "q2": {"C": 1}})
    >>> len(qrels), qrels.unit, qrels["q1"]["A"]
    (2, 'doc', 2)
    >>> qrels.relevant("q1")
    ['A']
    """

    def __init__(
        self,
        labels: Mapping[str, Mapping[str, int]],
        *,
        unit: str = "doc",
        name: str | None = None,
    ) -> None:
        self.unit: Unit = check_unit(unit)
        self.name = name
        cleaned: dict[str, dict[str, int]] = {}
        for qid, items in labels.items():
            grades = items.values()
            # The common case checked in C: str ids with non-negative int grades (no bools).
            if (
                set(map(type, grades)) == {int}
                and set(map(type, items)) == {str}
                and min(grades) >= 0
            ):
                cleaned[str(qid)] = dict(items)
                continue
            row: dict[str, int] = {}
            for item, grade in items.items():
                if isinstance(grade, bool) or not isinstance(grade, int):
                    try:
                        as_float = float(grade)
                    except (TypeError, ValueError):
                        as_float = float("nan")
                    if not as_float.is_integer():
                        raise InputError(
                            f"{self._where()}question {qid!r}, item {item!r}: expected an integer "
                            f"grade, found {grade!r}"
                        )
                    grade = int(as_float)
                if grade < 0:
                    raise InputError(
                        f"{self._where()}question {qid!r}, item {item!r}: expected a grade >= 0, "
                        f"found {grade}"
                    )
                row[str(item)] = grade
            cleaned[str(qid)] = row
        self._labels = cleaned

    def _where(self) -> str:
        return f"{self.name}: " if self.name else ""

    def __getitem__(self, qid: str) -> Mapping[str, int]:
        return self._labels[qid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __repr__(self) -> str:
        return f"Qrels({len(self)} questions, unit={self.unit!r})"

    def to_dict(self) -> dict[str, dict[str, int]]:
        """A plain ``{question: {item: grade}}`` copy."""
        return {qid: dict(items) for qid, items in self._labels.items()}

    def relevant(self, qid: str, threshold: int = 1) -> list[str]:
        """Items of ``qid`` with grade >= ``threshold`` (in label order)."""
        return [item for item, grade in self._labels.get(qid, {}).items() if grade >= threshold]
