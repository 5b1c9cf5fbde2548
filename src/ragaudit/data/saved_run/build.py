"""Building the typed questions of a saved run from its validated rows, a batch at a time.

:func:`build_questions` is the one constructor of :class:`QuestionResult` from JSON rows
(:meth:`QuestionResult.from_dict` and :meth:`SavedRun.from_checked` both call it).  It is
written for runs of 100,000 questions and more:

* the retrieved entries of the whole batch (20 per question in a typical run) are read as
  columns, by ``map`` in C, and each question keeps its own slice of them as a
  :class:`~.retrieved.RetrievedList` (no object per entry); only an entry with keys of its
  own goes through :meth:`Retrieved.from_dict`;
* repeated strings are held once: chunk and document ids (a document is retrieved for many
  questions), gold documents, keywords, context ids, and the keys of every question's
  ``metrics`` and ``judges`` (a parser makes new key strings for every row);
* a question's ``judges`` and ``metrics`` dicts are adopted, not copied again.

A 100,000-question run (337 MB of JSON) held this way takes about as much memory as its file.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, chain, repeat
from operator import itemgetter, methodcaller
from types import MappingProxyType
from typing import Any

from ragaudit.data.saved_run.mappings import _EMPTY, Judgments, KeyedValues, _frozen
from ragaudit.data.saved_run.metrics import canonical_metric_name
from ragaudit.data.saved_run.model import _LEGACY_GENERATION_ERROR, QuestionResult
from ragaudit.data.saved_run.retrieved import (
    IN_ORDER,
    RETRIEVED_KEYS,
    Retrieved,
    RetrievedList,
    ranks_column,
)

__all__ = ["QuestionBuilder", "build_questions", "each"]


def _names(keys: tuple[str, ...], metrics: bool) -> list[str]:
    """The keys in their current spelling (metric names through :func:`canonical_metric_name`)."""
    return [canonical_metric_name(k) for k in keys] if metrics else list(keys)


_ROW_KEYS = frozenset({*QuestionResult.KEYS, _LEGACY_GENERATION_ERROR})
_chunk_of, _doc_of = itemgetter("chunk_id"), itemgetter("doc_id")


class QuestionBuilder:
    """Builds questions batch after batch, sharing repeated strings across the whole run.

    >>> builder = QuestionBuilder()
    >>> a, b = builder.build([{"id": "q1", "retrieved": [{"chunk_id": "d#0", "doc_id": "d"}]},
    ...                       {"id": "q2", "retrieved": [{"chunk_id": "d#0", "doc_id": "d"}]}])
    >>> a.retrieved[0].doc_id is b.retrieved[0].doc_id, a.answerable, b.metrics
    (True, True, mappingproxy({}))
    """

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._keys: dict[tuple[str, ...], dict[str, int]] = {}
        self._metric_keys: dict[tuple[str, ...], dict[str, int]] = {}

    def _shared(self, values: Sequence[str]) -> tuple[str, ...]:
        table = self._strings
        return tuple(map(table.setdefault, values, values))

    def _shared_all(self, lists: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        """:meth:`_shared` of each of ``lists``, the strings of the whole batch interned by
        one ``map`` (not one call per question)."""
        table = self._strings
        flat = list(chain.from_iterable(lists))
        flat = list(map(table.setdefault, flat, flat))
        ends = list(accumulate(map(len, lists)))
        return list(map(tuple, map(flat.__getitem__, map(slice, [0, *ends[:-1]], ends))))

    def _keyed_all(self, mappings: list[Any], metrics: bool = False) -> list[Mapping[str, Any]]:
        """:meth:`_keyed` of each of ``mappings`` (an empty or absent one: ``_EMPTY``).  The
        usual batch, dicts that all hold the same keys, is made in one pass."""
        alike = mappings and all(mappings) and set(map(type, mappings)) == {dict}
        if alike and len(set(map(tuple, mappings))) == 1:
            first = self._keyed(mappings[0], metrics)
            if type(first) is KeyedValues:
                return list(first._like(map(tuple, map(dict.values, mappings))))
        return [self._keyed(m, metrics) if m else _EMPTY for m in mappings]

    def _keyed(self, data: Mapping[str, Any], metrics: bool = False) -> Mapping[str, Any]:
        """``data`` as a :class:`KeyedValues` whose keys are shared with every other mapping of
        the run that has the same keys (metric names in their current spelling,
        :func:`canonical_metric_name`)."""
        keys = tuple(data)
        cache = self._metric_keys if metrics else self._keys
        index = cache.get(keys)
        if index is None:
            names = self._shared(_names(keys, metrics))
            index = cache[keys] = dict(zip(names, range(len(names)), strict=True))
        if len(index) < len(keys):  # two old spellings of one metric: the last wins, as in a dict
            return MappingProxyType(dict(zip(_names(keys, metrics), data.values(), strict=True)))
        return KeyedValues(index, tuple(data.values()))

    def _retrieved(self, rows: Sequence[Mapping[str, Any]]) -> list[Sequence[Retrieved]]:
        """Each row's retrieved entries as a :class:`RetrievedList` (columns: no object per
        entry), built from the columns of the whole batch."""
        lists = [row.get("retrieved") or () for row in rows]
        flat = list(chain.from_iterable(lists))
        if not (set(map(type, flat)) <= {dict} and all(map(RETRIEVED_KEYS.issuperset, flat))):
            # an entry with keys of its own, or a mapping that is not a dict
            return [RetrievedList.of([Retrieved.from_dict(e) for e in found]) for found in lists]
        chunks = list(map(_chunk_of, flat))
        docs = list(map(_doc_of, flat))
        scores = list(map(dict.get, flat, repeat("score")))
        ranks = list(map(dict.get, flat, repeat("rank")))
        return self._columns(list(map(len, lists)), chunks, docs, scores, ranks)

    def _columns(
        self,
        sizes: list[int],
        chunks: list[str],
        docs: list[str],
        scores: list[Any],
        ranks: list[Any],
        score_kinds: set[type] | None = None,
        rank_kinds: set[type] | None = None,
    ) -> list[Sequence[Retrieved]]:
        """One :class:`RetrievedList` per question, from the columns of a whole batch (the
        entries of question i are the next ``sizes[i]`` values of each column; the kinds:
        the types in the scores and the ranks, when known already)."""
        table = self._strings
        chunks = list(map(table.setdefault, chunks, chunks))
        docs = list(map(table.setdefault, docs, docs))
        ends = list(accumulate(sizes))
        spans = list(map(slice, [0, *ends[:-1]], ends))  # question i's entries: spans[i]
        size = sizes[0] if sizes else 0
        if size and sizes.count(size) == len(sizes):
            # The usual batch: as many entries for every question, grouped by zip in C
            # (listed: zip reuses a result tuple nobody else holds).
            chunk_ids: Any = list(zip(*[iter(chunks)] * size, strict=True))
            doc_ids: Any = list(zip(*[iter(docs)] * size, strict=True))
        else:
            chunk_ids = map(tuple, map(chunks.__getitem__, spans))
            doc_ids = map(tuple, map(docs.__getitem__, spans))
        # Each question's columns depend on its own entries only (not on the batch it was
        # read in): scores in an array('d') when all are floats, ranks IN_ORDER when they
        # are the ints 1, 2, 3, ...  The usual batch is decided in one pass.
        if (set(map(type, scores)) if score_kinds is None else score_kinds) <= {float}:
            score_column: Any = map(array("d", scores).__getitem__, spans)
        else:
            score_column = [_scores(scores[span]) for span in spans]
        in_order = chain.from_iterable(map(range, repeat(1), [n + 1 for n in sizes]))
        all_ints = (set(map(type, ranks)) if rank_kinds is None else rank_kinds) <= {int}
        if all_ints and ranks == list(in_order):
            rank_column: Any = repeat(IN_ORDER)
        else:
            rank_column = [_ranks(ranks[span]) for span in spans]
        return list(map(RetrievedList, chunk_ids, doc_ids, score_column, rank_column))

    def build(self, rows: Sequence[Mapping[str, Any]]) -> list[QuestionResult]:
        """The questions of ``rows`` (validated rows: see :mod:`.check`), in order.  Each key
        is read across the batch as a column, and the questions are made by one ``map``."""

        def column(key: str, default: Any = None) -> list[Any]:
            return list(map(methodcaller("get", key, default), rows))

        shared, keyed = self._shared, self._keyed
        errors = column("generation_error")
        if None in errors:  # the key's old name, read as generation_error
            legacy = column(_LEGACY_GENERATION_ERROR)
            errors = [old if e is None else e for e, old in zip(errors, legacy, strict=True)]
        if all(map(_ROW_KEYS.issuperset, rows)):
            extras: Any = repeat(_EMPTY)
        else:
            extras = [
                _EMPTY
                if row.keys() <= _ROW_KEYS
                else _frozen({k: v for k, v in row.items() if k not in _ROW_KEYS})
                for row in rows
            ]
        return QuestionResult._many(
            list(map(itemgetter("id"), rows)),
            self._retrieved(rows),
            column("question", ""),
            column("answerable", True),
            column("reference_answer"),
            [shared(k or ()) for k in column("keywords")],
            [shared(g or ()) for g in column("gold_docs")],
            each(column("tags"), tuple),
            each(column("context_ids"), shared),
            column("answer"),
            column("abstained"),
            each(column("citations"), tuple),
            [Judgments._adopt(keyed(j) if j else _EMPTY) for j in column("judges")],
            each(column("latency_ms"), _frozen),
            each(errors, str),
            each(column("usage"), _frozen),
            [keyed(m, True) if m else _EMPTY for m in column("metrics")],
            extras,
        )


def build_questions(rows: Sequence[Mapping[str, Any]]) -> list[QuestionResult]:
    """The questions of validated ``rows`` (:meth:`QuestionBuilder.build` of one batch).

    >>> [q.id for q in build_questions([{"id": "q1", "retrieved": []}])]
    ['q1']
    """
    return QuestionBuilder().build(rows)


def _scores(scores: list[Any]) -> Any:
    """One question's scores: an ``array('d')`` when all are floats, else a tuple."""
    return array("d", scores) if set(map(type, scores)) <= {float} else tuple(scores)


def _ranks(ranks: list[Any]) -> Any:
    """One question's ranks: ``IN_ORDER`` for the ints 1, 2, 3, ...; None when there is
    none; else a tuple."""
    if set(map(type, ranks)) <= {int} and ranks == list(range(1, len(ranks) + 1)):
        return IN_ORDER
    return ranks_column(ranks) if any(r is not None for r in ranks) else None


def each(column: list[Any], convert: Callable[[Any], Any]) -> list[Any]:
    """``convert`` of each value of ``column``, None kept as None.

    >>> each([["a"], None], tuple)
    [('a',), None]
    """
    if None in column:
        return [None if v is None else convert(v) for v in column]
    return list(map(convert, column))
