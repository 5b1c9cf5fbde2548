"""The rows msgspec decoded (:mod:`.fast_types`), checked and built a batch at a time, by column.

:class:`StructRows` finishes what the Structs' types started: it checks what the schema
demands beyond types (the judges' verdicts, each metric's range, ids unique across the
file, at most ``config.k`` contexts, every key written once) and builds the same
:class:`~.model.QuestionResult` values :class:`~.build.QuestionBuilder` builds from dicts.
Each field is read across the batch as a column (``map`` in C) and the questions are made by
one ``map`` over the columns, so the Python work per question is the model's own
constructor.  Any failed check raises :class:`Doubt`: the caller then reads the file with
the standard library, which words the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, NamedTuple, cast

from ragaudit.data.saved_run.batch_check import _column_check, _metrics_valid
from ragaudit.data.saved_run.build import QuestionBuilder, each
from ragaudit.data.saved_run.mappings import _EMPTY, Judgments, _frozen
from ragaudit.data.saved_run.model import QuestionResult
from ragaudit.data.saved_run.schema import saved_run_schema

__all__ = ["CheckedBatch", "Doubt", "StructRows"]


class Doubt(Exception):
    """Anything the fast path does not vouch for: the standard-library path reads the file."""


@lru_cache(maxsize=1)
def _judges_check() -> Callable[[list[Any]], bool]:
    row = saved_run_schema()["properties"]["rows"]["items"]
    return _column_check(row["properties"]["judges"])


_id, _retrieved = attrgetter("id"), attrgetter("retrieved")
_chunk_id, _doc_id = attrgetter("chunk_id"), attrgetter("doc_id")
_score, _rank = attrgetter("score"), attrgetter("rank")

#: The value of each key a row or retrieved entry may leave out, as the model reads it.
DEFAULTS: dict[str, Any] = {
    "question": "", "answerable": True, "reference_answer": None, "keywords": (),
    "gold_docs": (), "tags": None, "context_ids": None, "answer": None, "abstained": None,
    "citations": None, "judges": {}, "latency_ms": None, "generation_error": None,
    "error": None, "usage": None, "metrics": {}, "score": None, "rank": None,
}  # fmt: skip


class StructRows(QuestionBuilder):
    """Checks and builds the batches of rows of one file (ids are unique across batches;
    repeated strings are held once across the whole run, as :class:`QuestionBuilder` does).

    Parameters
    ----------
    unset : object
        ``msgspec.UNSET``: the value of a key the row does not hold.
    """

    def __init__(self, unset: Any) -> None:
        from ragaudit.data.saved_run.fast_types import OPTIONAL

        super().__init__()
        self.unset = unset
        self.unset_type = type(unset)
        self.most_contexts = 0  # at most config.k, checked with the top level
        self.ids: set[str] = set()
        self.fields = {name: attrgetter(name) for name in OPTIONAL}
        self.kinds: dict[str, set[type]] = {}  # the types in each column of the last batch

    # -- columns ---------------------------------------------------------------------------

    def _fields(self, rows: Sequence[Any]) -> tuple[dict[str, list[Any]], dict[str, int]]:
        """Each field of ``rows`` as a column, an absent key read as its default
        (:data:`DEFAULTS`), and how many rows hold each key."""
        columns = {name: list(map(get, rows)) for name, get in self.fields.items()}
        entries = list(chain.from_iterable(map(_retrieved, rows)))
        columns["chunk_id"] = list(map(_chunk_id, entries))  # required: always held
        columns["doc_id"] = list(map(_doc_id, entries))
        columns["score"] = list(map(_score, entries))
        columns["rank"] = list(map(_rank, entries))
        held = {"entries": 2 * len(entries)}
        unset, unset_type = self.unset, self.unset_type
        for name, default in DEFAULTS.items():
            column = columns[name]
            kinds = set(map(type, column))
            held[name] = len(column)
            if unset_type in kinds:
                held[name] -= column.count(unset)
                columns[name] = [default if v is unset else v for v in column]
                kinds.discard(unset_type)
                kinds.add(type(default))
            self.kinds[name] = kinds
        return columns, held

    # -- the checks ------------------------------------------------------------------------

    def add_ids(self, ids: list[str]) -> None:
        """Raise :class:`Doubt` if an id of the batch was seen before (the walk names both
        rows)."""
        before = len(self.ids)
        self.ids.update(ids)
        if len(self.ids) != before + len(ids):
            raise Doubt

    def check(
        self, rows: list[Any], text: bytes | bytearray | memoryview, ids_seen: bool = False
    ) -> dict[str, list[Any]]:
        """Raise :class:`Doubt` unless ``rows`` (decoded from ``text``) pass every check of
        :func:`~.check.find_problems` that the Structs' types do not make (but ``config.k``,
        checked against :attr:`most_contexts` at the end); return their columns.

        A key written twice: msgspec keeps its last value silently, so the keys the rows
        hold are counted and compared with the text.  Every key is followed by one colon;
        when the text has as many colons as counted keys, no key was lost (nor is any colon
        inside a string).  Otherwise (colons in strings, keys deeper than counted) the keys
        written ``"key":`` must be as many, and none written ``"key" :``.  ``ids_seen``: the
        ids of ``rows`` went through :meth:`add_ids` already.
        """
        if not ids_seen:
            self.add_ids(list(map(_id, rows)))
        columns, held = self._fields(rows)
        judges = [j for j in columns["judges"] if j]  # UNSET is false too
        if judges and not _judges_check()(judges):
            raise Doubt
        metrics = [m for m in columns["metrics"] if m]
        if metrics and not _metrics_valid(metrics):
            raise Doubt
        keys = 2 * len(rows) + sum(held.values())  # id and retrieved are required
        keys += sum(map(len, judges))
        keys += sum(len(v) for j in judges for v in j.values() if type(v) is dict)
        keys += sum(map(len, metrics))
        for name in ("latency_ms", "usage"):
            keys += sum(len(v) for v in columns[name] if v)
        whole: bytes | bytearray
        if isinstance(text, memoryview):  # a view of a buffer from its start (_Rows.slices)
            whole, size = cast(bytearray, text.obj), text.nbytes
        else:
            whole, size = text, len(text)
        colons = whole.count(b":", 0, size)
        if keys != colons and (keys != whole.count(b'":', 0, size) or _loose_key(text)):
            raise Doubt
        contexts = [c for c in columns["context_ids"] if c]
        self.most_contexts = max(self.most_contexts, *map(len, contexts), 0)
        return columns

    # -- the build -------------------------------------------------------------------------

    def batch(self, rows: Sequence[Any], columns: dict[str, list[Any]]) -> CheckedBatch:
        """What :meth:`build_batch` needs of checked ``rows`` and the ``columns`` :meth:`check`
        returned: plain lists, dicts and strings (a helper process sends it by pickle)."""
        return CheckedBatch(
            list(map(_id, rows)),
            list(map(len, map(_retrieved, rows))),
            columns,
            self.kinds["score"],
            self.kinds["rank"],
        )

    def build_rows(
        self, rows: Sequence[Any], columns: dict[str, list[Any]]
    ) -> list[QuestionResult]:
        """The questions of checked ``rows`` whose ``columns`` :meth:`check` returned."""
        return self.build_batch(self.batch(rows, columns))

    def build_batch(self, batch: CheckedBatch) -> list[QuestionResult]:
        """The questions of a checked batch: the values :meth:`QuestionBuilder.build` makes
        of the same rows parsed as dicts."""
        columns = batch.columns
        retrieved = self._columns(
            batch.sizes,
            columns["chunk_id"],
            columns["doc_id"],
            columns["score"],
            columns["rank"],
            batch.score_kinds,
            batch.rank_kinds,
        )
        contexts = columns["context_ids"]  # null (or absent) context_ids stay None
        contexts = each(contexts, self._shared) if None in contexts else self._shared_all(contexts)
        errors = columns["generation_error"]
        if None in errors:  # the key's old name, read as generation_error
            legacy = columns["error"]
            errors = [old if e is None else e for e, old in zip(errors, legacy, strict=True)]
        return QuestionResult._many(
            batch.ids,
            retrieved,
            columns["question"],
            columns["answerable"],
            columns["reference_answer"],
            self._shared_all(columns["keywords"]),
            self._shared_all(columns["gold_docs"]),
            each(columns["tags"], tuple),
            contexts,
            columns["answer"],
            columns["abstained"],
            each(columns["citations"], tuple),
            Judgments._adopt_all(self._keyed_all(columns["judges"])),
            each(columns["latency_ms"], _frozen),
            errors,
            each(columns["usage"], _frozen),
            self._keyed_all(columns["metrics"], metrics=True),
            repeat(_EMPTY),
        )


class CheckedBatch(NamedTuple):
    """A batch of rows that passed :meth:`StructRows.check`, ready for
    :meth:`StructRows.build_batch`: the ids, each row's number of retrieved entries, the columns
    (an absent key read as its default; the entries' four columns flat) and the types seen
    in the entries' scores and ranks."""

    ids: list[str]
    sizes: list[int]
    columns: dict[str, list[Any]]
    score_kinds: set[type]
    rank_kinds: set[type]


def _loose_key(text: bytes | bytearray | memoryview) -> bool:
    """A key written with white space before its colon (``"key" :``)."""
    import re

    return re.search(rb'"[ \t\n\r]+:', text) is not None
