"""The saved-run row as msgspec Structs: what :mod:`.fast` decodes each batch of rows into.

Imported only when ``msgspec`` is installed (the ``fast`` extra).  The types are the JSON
Schema of a row (``data/schemas/saved-run.schema.json``) as far as types and integer bounds
go, so msgspec refuses in C what the schema refuses there: a row that is not an object, a
missing ``id`` or ``retrieved``, an empty id, a ``chunk_id`` that is not a string, a ``rank``
below 1, a metric that is a string.  What types cannot say (metric ranges, the judges'
verdicts, unique ids, ``config.k``) :mod:`.fast` checks by column.

Every optional key defaults to ``UNSET``, not to the model's default, so that the keys a row
holds can be counted (a key written twice is kept once by msgspec, and the count against the
text finds it).  A key no field names (an unknown key, kept in ``extra`` by the model) is
refused: such a file is read by the standard-library path, which keeps it.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import UNSET, Meta, Struct, UnsetType

__all__ = ["Entry", "Row", "RowId"]

_INT_LIMIT = 2**31 - 1  # the schema's bound on counts and cut-offs (trec_eval's C int)

Rank = Annotated[int, Meta(ge=1, le=_INT_LIMIT)]
Number = int | float  # JSON's number: an int stays an int, as json.loads keeps it


class Entry(Struct, forbid_unknown_fields=True, gc=False):
    """One entry of ``rows[i].retrieved``."""

    chunk_id: str
    doc_id: str
    score: Number | UnsetType | None = UNSET
    rank: Rank | UnsetType = UNSET


class Row(Struct, forbid_unknown_fields=True, gc=False):
    """One row of ``rows``: the keys of ``QuestionResult.KEYS`` and the legacy ``error``."""

    id: Annotated[str, Meta(min_length=1)]
    retrieved: list[Entry]
    question: str | UnsetType = UNSET
    answerable: bool | UnsetType = UNSET
    reference_answer: str | UnsetType | None = UNSET
    keywords: list[str] | UnsetType = UNSET
    gold_docs: list[str] | UnsetType = UNSET
    tags: list[Any] | UnsetType | None = UNSET
    context_ids: list[str] | UnsetType = UNSET
    answer: str | UnsetType | None = UNSET
    abstained: bool | UnsetType | None = UNSET
    citations: list[Any] | UnsetType | None = UNSET
    judges: dict[str, Any] | UnsetType = UNSET
    latency_ms: dict[str, Number | None] | UnsetType | None = UNSET
    generation_error: str | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET
    usage: dict[str, Any] | UnsetType | None = UNSET
    metrics: dict[str, Number | bool | None] | UnsetType = UNSET


class RowId(Struct, gc=False):
    """A row read for its id only (``ragaudit show RUN q7``: the other keys are skipped)."""

    id: Annotated[str, Meta(min_length=1)]


#: The optional fields of :class:`Row`, each counted when present.
OPTIONAL = tuple(name for name in Row.__struct_fields__ if name not in ("id", "retrieved"))
