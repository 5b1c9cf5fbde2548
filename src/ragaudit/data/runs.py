"""Runs: per question, a ranked list of retrieved item ids, optionally with scores.

Ordering follows trec_eval so that numbers agree with it: when scores are present the ranking
is by score descending, ties broken by item id descending (string order), and the number of
tied groups is recorded so a report can warn that order inside a tie is arbitrary.
``order="given"`` keeps the order in which items were supplied instead.

Large inputs are held as integer-coded columns (:class:`ragaudit.data.formats.RunColumns`,
sorted for all questions at once with numpy); per-question Python lists are built the first
time something asks for them.  Inputs the columnar path does not cover exactly (mixed ranking
kinds, non-string ids, NaN scores) take the per-question path; both give the same run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from ragaudit._validate import check_int
from ragaudit.data.qrels import Unit, check_unit
from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    from ragaudit.data.formats import RunColumns

__all__ = ["DuplicatePolicy", "Order", "RankingInput", "Run"]

Order = Literal["score", "given"]
DuplicatePolicy = Literal["error", "first"]
# A ranking may be given as ids in rank order, (id, score) pairs, or {id: score}.
RankingInput = Sequence[str] | Sequence[tuple[str, float]] | Mapping[str, float]


def _split(ranking: RankingInput) -> tuple[list[str], list[float] | None]:
    if isinstance(ranking, Mapping):
        return [str(k) for k in ranking], [float(v) for v in ranking.values()]
    items = list(ranking)
    if not items:
        return [], None
    if all(isinstance(x, str) for x in items):
        return [str(x) for x in items], None
    ids: list[str] = []
    scores: list[float] = []
    for entry in items:
        if isinstance(entry, str) or len(entry) != 2:
            raise InputError(
                f"ranking entry: expected an id or an (id, score) pair, found {entry!r}"
            )
        ids.append(str(entry[0]))
        scores.append(float(entry[1]))
    return ids, scores


class Run(Mapping[str, list[str]]):
    """Ranked retrieval results for a set of questions.

    Parameters
    ----------
    rankings : mapping of str to ranking
        ``{question_id: ranking}`` where a ranking is a list of ids in rank order, a list of
        ``(id, score)`` pairs, or a ``{id: score}`` mapping.
    unit : {"doc", "chunk"}, default "doc"
        What the item ids name.
    order : {"score", "given"}, default "score"
        With scores, ``"score"`` sorts by score descending and breaks ties by id descending
        (trec_eval's rule); ``"given"`` keeps the supplied order.  Without scores the supplied
        order is always kept.
    duplicates : {"error", "first"}, default "error"
        A repeated id within one ranking is an error, or ``"first"`` keeps its first occurrence.
    name : str, optional
        Where the run came from, used in messages.

    Attributes
    ----------
    tied_groups : int
        Number of groups of two or more items that share a score within one question.  Scores
        are compared as trec_eval compares them, as 32-bit floats.
    float32_tied_groups : int
        How many of those groups tie only as 32-bit floats (their 64-bit scores differ).

    Examples
    --------
    >>> run = Run({"q1": {"A": 0.5, "B": 0.9, "C": 0.5}})
    >>> run["q1"], run.tied_groups
    (['B', 'C', 'A'], 1)
    >>> Run({"q1": ["X", "Y"]})["q1"]
    ['X', 'Y']
    """

    def __init__(
        self,
        rankings: Mapping[str, RankingInput],
        *,
        unit: str = "doc",
        order: str = "score",
        duplicates: str = "error",
        name: str | None = None,
    ) -> None:
        self.unit: Unit = check_unit(unit)
        if order not in ("score", "given"):
            raise InputError(f"order: expected 'score' or 'given', found {order!r}")
        if duplicates not in ("error", "first"):
            raise InputError(f"duplicates: expected 'error' or 'first', found {duplicates!r}")
        self.name = name
        self.order = order
        self._rankings: dict[str, list[str]] = {}
        self._scores: dict[str, list[float]] = {}
        self.tied_groups = 0
        self.float32_tied_groups = 0
        self.dropped_duplicates = 0  # repeats of an item in one ranking (duplicates="first")
        self.columns: RunColumns | None = None
        self._built = True
        # Imported here: formats builds on this module (the columns share its sort rules).
        from ragaudit.data.formats import columns_from_rankings

        columns = columns_from_rankings(rankings, order=order, duplicates=duplicates, name=name)
        if columns is not None:
            self._attach(columns)
            return
        for qid, ranking in rankings.items():
            ids, scores = _split(ranking)
            ids, scores = self._dedupe(str(qid), ids, scores, duplicates)
            if scores is not None:
                self._check_finite(str(qid), ids, scores)
                groups, float32_only = _count_tied_groups(scores)
                self.tied_groups += groups
                self.float32_tied_groups += float32_only
                if order == "score":
                    # (float32 score, id) descending, as trec_eval; ids are unique here
                    keys = np.asarray(scores, dtype=np.float64).astype(np.float32).tolist()
                    triples = sorted(zip(keys, ids, scores, strict=True), reverse=True)
                    scores = [t[2] for t in triples]
                    ids = [t[1] for t in triples]
                self._scores[str(qid)] = scores
            self._rankings[str(qid)] = ids

    def _check_finite(self, qid: str, ids: list[str], scores: list[float]) -> None:
        for item, score in zip(ids, scores, strict=True):
            if not math.isfinite(score):
                where = f"{self.name}: " if self.name else ""
                raise InputError(
                    f"{where}question {qid!r}, item {item!r}: expected a finite score, "
                    f"found {score}"
                )

    def _dedupe(
        self, qid: str, ids: list[str], scores: list[float] | None, policy: str
    ) -> tuple[list[str], list[float] | None]:
        if len(set(ids)) == len(ids):
            return ids, scores
        seen: set[str] = set()
        keep: list[int] = []
        for i, item in enumerate(ids):
            if item in seen:
                if policy == "error":
                    where = f"{self.name}: " if self.name else ""
                    raise InputError(
                        f"{where}question {qid!r}: item {item!r} appears more than once in the "
                        "ranking; pass duplicates='first' (--duplicates first) to keep the first"
                    )
                continue
            seen.add(item)
            keep.append(i)
        self.dropped_duplicates += len(ids) - len(keep)
        return [ids[i] for i in keep], (None if scores is None else [scores[i] for i in keep])

    def _attach(self, columns: RunColumns) -> None:
        """Hold ``columns``; the per-question lists are built on first use (:meth:`_build`)."""
        self.columns = columns
        self.tied_groups = columns.tied_groups
        self.float32_tied_groups = columns.float32_tied_groups
        self.dropped_duplicates = columns.dropped_duplicates
        self._rankings = {}
        self._scores = {}
        self._built = False

    def _build(self) -> None:
        if self._built or self.columns is None:
            return
        cols = self.columns
        ids = cols.items.decode(cols.row_order)
        scores = cols.scores.tolist() if cols.scores is not None else None
        offsets = cols.offsets.tolist()
        for index, qid in enumerate(cols.qids):
            a, b = offsets[index], offsets[index + 1]
            self._rankings[qid] = ids[a:b]
            if scores is not None:
                self._scores[qid] = scores[a:b]
        self._built = True

    def __getitem__(self, qid: str) -> list[str]:
        self._build()
        return self._rankings[qid]

    def __iter__(self) -> Iterator[str]:
        if not self._built and self.columns is not None:
            return iter(self.columns.qids)
        return iter(self._rankings)

    def __len__(self) -> int:
        if not self._built and self.columns is not None:
            return len(self.columns.qids)
        return len(self._rankings)

    def __contains__(self, qid: object) -> bool:
        self._build()
        return qid in self._rankings

    def __repr__(self) -> str:
        return f"Run({len(self)} questions, unit={self.unit!r})"

    @property
    def has_scores(self) -> bool:
        """Whether scores were supplied."""
        if not self._built and self.columns is not None:
            return self.columns.scores is not None and self.columns.n_rows > 0
        return bool(self._scores)

    def scores(self, qid: str) -> list[float] | None:
        """Scores of ``qid`` aligned with ``self[qid]``, or None when the run has no scores."""
        self._build()
        return self._scores.get(qid)

    def to_dict(self) -> dict[str, dict[str, float]] | dict[str, list[str]]:
        """``{question: {id: score}}`` when every question is scored, else ``{question: [ids]}``.

        A run that mixes scored and unscored rankings comes back as ranked id lists: inventing
        scores for the unscored ones would claim more than the input said.

        >>> Run({"q1": [("a", 2.0)], "q2": ["b", "c"]}).to_dict()
        {'q1': ['a'], 'q2': ['b', 'c']}
        """
        self._build()
        if self._scores and all(q in self._scores for q in self._rankings):
            return {
                q: dict(zip(ids, self._scores[q], strict=True)) for q, ids in self._rankings.items()
            }
        return {q: list(ids) for q, ids in self._rankings.items()}

    def truncate(self, k: int) -> Run:
        """A copy keeping the top ``k`` items of every ranking."""
        k = check_int(k, "k")
        self._build()
        rankings: dict[str, RankingInput] = {}
        for qid, ids in self._rankings.items():
            sc = self._scores.get(qid)
            # A dict keeps an empty scored ranking scored (an empty list would read as ids).
            rankings[qid] = list(ids[:k]) if sc is None else dict(zip(ids[:k], sc[:k], strict=True))
        return Run(rankings, unit=self.unit, order="given", name=self.name)

    def to_docs(self, chunk_to_doc: Mapping[str, str]) -> Run:
        """Lift a chunk-level run to documents: each document at the rank of its first chunk.

        Raises
        ------
        InputError
            If chunk ids are missing from ``chunk_to_doc`` (the message counts them all).

        Examples
        --------
        >>> run = Run({"q1": ["c1", "c2", "c3"]}, unit="chunk")
        >>> run.to_docs({"c1": "D2", "c2": "D2", "c3": "D1"})["q1"]
        ['D2', 'D1']
        """
        if self.unit != "chunk":
            raise InputError("to_docs: the run is already at document level")
        self._build()
        absent = [
            (qid, chunk)
            for qid, ids in self._rankings.items()
            for chunk in ids
            if chunk not in chunk_to_doc
        ]
        if absent:
            questions = len({qid for qid, _ in absent})
            first = ", ".join(f"{chunk!r} (question {qid!r})" for qid, chunk in absent[:3])
            raise InputError(
                f"{len(absent)} run item(s) of {questions} question(s) are not in the "
                f"chunk->document map, e.g. {first}; the map must cover every chunk the run "
                "ranks (rebuild it from the same chunking as the run)"
            )
        lifted: dict[str, RankingInput] = {}
        for qid, ids in self._rankings.items():
            docs: list[str] = []
            seen: set[str] = set()
            for chunk in ids:
                doc = chunk_to_doc[chunk]
                if doc not in seen:
                    seen.add(doc)
                    docs.append(doc)
            lifted[qid] = docs
        return Run(lifted, unit="doc", order="given", name=self.name)


def _count_tied_groups(scores: list[float]) -> tuple[int, int]:
    """Groups of >= 2 equal float32 scores, and how many hold distinct float64 scores."""
    groups: dict[float, set[float]] = {}
    counts: dict[float, int] = {}
    keys = np.asarray(scores, dtype=np.float64).astype(np.float32).tolist()
    for key, score in zip(keys, scores, strict=True):
        groups.setdefault(key, set()).add(score)
        counts[key] = counts.get(key, 0) + 1
    tied = [key for key, count in counts.items() if count > 1]
    return len(tied), sum(1 for key in tied if len(groups[key]) > 1)
