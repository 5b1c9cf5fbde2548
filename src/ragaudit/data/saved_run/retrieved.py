"""What one question retrieved: :class:`Retrieved` entries, held compactly in columns.

A saved run lists about 20 retrieved chunks per question, so a 200,000-question run has four
million entries.  As objects (a named tuple and its score) they take about 110 bytes each,
more than the JSON they came from.  :class:`RetrievedList` holds a question's entries as
columns instead: the chunk ids and document ids (strings shared across the run), the scores
in a ``array('d')`` when they are all floats, the ranks only when they are not simply
1, 2, 3, ... (about 35 bytes an entry).  It is a read-only sequence of :class:`Retrieved`:
an entry is made when it is read, so ``q.retrieved[:k]`` makes only k of them.
"""

from __future__ import annotations

from array import array  # noqa: F401  (the examples make score columns with it)
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any, NamedTuple, overload

from ragaudit.data.saved_run.mappings import _EMPTY, _frozen, _plain

__all__ = ["RETRIEVED_KEYS", "Retrieved", "RetrievedList"]

#: The keys of a retrieved entry that have fields; any other is kept in ``extra``.
RETRIEVED_KEYS = frozenset({"chunk_id", "doc_id", "score", "rank"})


class Retrieved(NamedTuple):
    """One retrieved chunk of a question (``rows[i].retrieved[j]``).

    Attributes
    ----------
    chunk_id, doc_id : str
    score : float or None, default None
    rank : int or None, default None
        1-based; when every entry of a row has one, :attr:`QuestionResult.ranked` sorts by it.
    extra : mapping
        Unknown keys, preserved.

    Examples
    --------
    >>> r = Retrieved.from_dict({"chunk_id": "a#0", "doc_id": "a", "score": 2.5, "x": 1})
    >>> r.doc_id, r.rank, dict(r.extra), r.to_dict()
    ('a', None, {'x': 1}, {'chunk_id': 'a#0', 'doc_id': 'a', 'score': 2.5, 'x': 1})
    """

    chunk_id: str
    doc_id: str
    score: float | None = None
    rank: int | None = None
    extra: Mapping[str, Any] = _EMPTY

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Retrieved:
        """Build from a validated entry."""
        plain = data.keys() <= RETRIEVED_KEYS
        return cls(
            chunk_id=data["chunk_id"],
            doc_id=data["doc_id"],
            score=data.get("score"),
            rank=data.get("rank"),
            extra=_EMPTY
            if plain
            else _frozen({k: v for k, v in data.items() if k not in RETRIEVED_KEYS}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry (``score`` and ``rank`` omitted when absent)."""
        out: dict[str, Any] = {"chunk_id": self.chunk_id, "doc_id": self.doc_id}
        if self.score is not None:
            out["score"] = self.score
        if self.rank is not None:
            out["rank"] = self.rank
        out.update(_plain(self.extra))
        return out


#: ``ranks`` of a list whose entries are ranked 1, 2, 3, ... in order.
IN_ORDER = "in order"


class RetrievedList(Sequence[Retrieved]):
    """A question's retrieved entries, as columns; a read-only sequence of :class:`Retrieved`.

    Equal to the tuple of the same entries; slicing returns a tuple.

    >>> found = RetrievedList(("a#0", "b#1"), ("a", "b"), array("d", [2.0, 1.5]), IN_ORDER)
    >>> found[1], found[:1] == (Retrieved("a#0", "a", 2.0, 1),), len(found)
    (Retrieved(chunk_id='b#1', doc_id='b', score=1.5, rank=2, extra=mappingproxy({})), True, 2)
    >>> found.doc_ids, found.in_rank_order
    (('a', 'b'), True)
    """

    __slots__ = ("_extras", "_ranks", "_scores", "chunk_ids", "doc_ids")

    def __init__(
        self,
        chunk_ids: tuple[str, ...],
        doc_ids: tuple[str, ...],
        scores: Sequence[float | None],
        ranks: Sequence[int | None] | str | None = None,
        extras: tuple[Mapping[str, Any], ...] | None = None,
    ) -> None:
        self.chunk_ids = chunk_ids
        self.doc_ids = doc_ids
        self._scores = scores
        self._ranks = ranks  # None: no ranks; IN_ORDER: 1, 2, 3, ...; else one per entry
        self._extras = extras

    @classmethod
    def of(cls, entries: Sequence[Retrieved]) -> RetrievedList:
        """The list of ``entries`` (``Retrieved`` objects).

        >>> RetrievedList.of([Retrieved("a#0", "a")]) == (Retrieved("a#0", "a"),)
        True
        """
        ranks = [r.rank for r in entries]
        extras = tuple(r.extra for r in entries)
        return cls(
            tuple(r.chunk_id for r in entries),
            tuple(r.doc_id for r in entries),
            tuple(r.score for r in entries),
            None if set(ranks) <= {None} else ranks_column(ranks),
            None if all(e is _EMPTY for e in extras) else extras,
        )

    def _rank(self, i: int) -> int | None:
        ranks = self._ranks
        if ranks is None:
            return None
        if ranks is IN_ORDER:
            return i + 1
        return ranks[i]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @overload
    def __getitem__(self, index: int) -> Retrieved: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Retrieved, ...]: ...

    def __getitem__(self, index: int | slice) -> Retrieved | tuple[Retrieved, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        i = range(len(self))[index]  # negative indices; IndexError as a tuple raises it
        return Retrieved(
            self.chunk_ids[i],
            self.doc_ids[i],
            self._scores[i],
            self._rank(i),
            _EMPTY if self._extras is None else self._extras[i],
        )

    def __iter__(self) -> Iterator[Retrieved]:
        n = len(self)
        ranks = self._ranks
        if ranks is None:
            rank_column: Any = repeat(None, n)
        elif ranks is IN_ORDER:
            rank_column = range(1, n + 1)
        else:
            rank_column = ranks
        extras = repeat(_EMPTY, n) if self._extras is None else self._extras
        return map(Retrieved, self.chunk_ids, self.doc_ids, self._scores, rank_column, extras)

    @property
    def in_rank_order(self) -> bool:
        """Every entry has a rank and they are 1, 2, 3, ... as written."""
        return self._ranks is IN_ORDER

    @property
    def all_ranked(self) -> bool:
        """Every entry has a rank."""
        ranks = self._ranks
        return ranks is IN_ORDER or (ranks is not None and len(self) > 0 and None not in ranks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RetrievedList | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (RetrievedList, (self.chunk_ids, self.doc_ids, self._scores, self._ranks,
                                self._extras))  # fmt: skip


def ranks_column(ranks: Sequence[int | None]) -> Sequence[int | None] | str:
    """``IN_ORDER`` when ``ranks`` are 1, 2, 3, ..., else a tuple of them.

    >>> ranks_column([1, 2, 3]), ranks_column([2, 1])
    ('in order', (2, 1))
    """
    # Only ints count (not True or 1.0): the ranks are written back as they were found.
    in_order = list(ranks) == list(range(1, len(ranks) + 1))
    return IN_ORDER if len(ranks) and in_order and set(map(type, ranks)) == {int} else tuple(ranks)
