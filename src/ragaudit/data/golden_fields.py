"""The fields of a golden question, the column names other tools give them, and their checks.

One table, :data:`GOLDEN_COLUMNS`, says which column names stand for which field; every golden
reader (YAML, JSON, JSONL, CSV, a pandas DataFrame) resolves a file's columns through
:func:`resolve_columns` and checks each question through :func:`question_fields`, so the same
question gives the same :class:`~ragaudit.data.golden.GoldenQuestion` and the same message
whatever the file format.

=====================  ===============================================================
field                  accepted column names (first choice first)
=====================  ===============================================================
``id``                 ``id``, ``question_id``, ``qid``, ``query_id``
``question``           ``question``, ``user_input`` (RAGAS), ``input`` (DeepEval)
``answer``             ``answer``, ``ground_truth``, ``reference`` (RAGAS),
                       ``expected_output`` (DeepEval)
``sources``            ``sources``, ``reference_context_ids`` (RAGAS), ``doc_ids``
``reference_contexts`` ``reference_contexts`` (RAGAS), ``contexts``, ``context`` (DeepEval)
``answerable``         ``answerable``
``keywords``           ``keywords``
``tags``               ``tags``
``evidence_from_each_  ``evidence_from_each_source`` (boolean, default false): the
source``               evidence judge asks for a fact of the reference from *each* source
                       document, not only every fact somewhere in the context
=====================  ===============================================================

A file that holds two names of one field (``answer`` and ``ground_truth``) is refused unless
``--map answer=ground_truth`` says which one to use; ``--map`` also names columns that are not
in the table at all.

A key that is none of these names but close to one (:func:`misspelt_key`: ``difflib`` ratio
of the lower-cased names >= :data:`MISSPELLING_SIMILARITY`, so ``keyword``, ``qestion``,
``sorces``, ``unanswerable``) is a misspelling and refused, naming the nearest accepted name:
silently ignoring ``keyword:`` would leave the question without its keywords.  Other keys
(``difficulty``, a RAGAS file's ``retrieved_contexts``) are kept as the question's own
metadata; ``ragaudit golden check`` lists them all.
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from ragaudit._text import shown_id
from ragaudit.data.formats import shorten
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "GOLDEN_COLUMNS",
    "MISSPELLING_SIMILARITY",
    "accepted_names",
    "cell_list",
    "is_list_literal",
    "known_keys",
    "misspelt_key",
    "nearest_key",
    "parse_column_map",
    "question_fields",
    "resolve_columns",
    "type_name",
    "unknown_key_message",
]

#: Accepted column names of each golden-set field, first choice first.
GOLDEN_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid", "query_id"),
    "question": ("question", "user_input", "input"),
    "answer": ("answer", "ground_truth", "reference", "expected_output"),
    "sources": ("sources", "reference_context_ids", "doc_ids"),
    "reference_contexts": ("reference_contexts", "contexts", "context"),
    "answerable": ("answerable",),
    "keywords": ("keywords",),
    "tags": ("tags",),
    "evidence_from_each_source": ("evidence_from_each_source",),
}

_LISTS = ("sources", "reference_contexts", "keywords", "tags")

#: A key at least this similar to an accepted name (difflib ratio, lower case) is a typo.
MISSPELLING_SIMILARITY = 0.8


def known_keys() -> tuple[str, ...]:
    """Every accepted column name, fields first (``id``, ``question``, ``answer``, ...)."""
    return tuple(
        dict.fromkeys([*GOLDEN_COLUMNS, *(n for ns in GOLDEN_COLUMNS.values() for n in ns)])
    )


def nearest_key(key: str, cutoff: float = 0.6) -> str | None:
    """The accepted name most similar to ``key`` (``difflib`` ratio >= ``cutoff``), or None.

    >>> nearest_key("keyword"), nearest_key("Question"), nearest_key("difficulty")
    ('keywords', 'question', None)
    """
    lower = {name.lower(): name for name in known_keys()}
    found = difflib.get_close_matches(str(key).lower(), list(lower), n=1, cutoff=cutoff)
    return lower[found[0]] if found else None


def misspelt_key(key: str, used: Collection[str] = ()) -> str | None:
    """The accepted name ``key`` misspells, or None when it is accepted, used (``--map``) or
    not close to any (similarity below :data:`MISSPELLING_SIMILARITY`).

    >>> misspelt_key("keyword"), misspelt_key("keywords"), misspelt_key("retrieved_contexts")
    ('keywords', None, None)
    """
    if key in used or key in known_keys():
        return None
    return nearest_key(key, MISSPELLING_SIMILARITY)


def unknown_key_message(key: str, nearest: str | None) -> str:
    """The one message for an unknown key (``run`` refuses it; ``golden check`` lists it).

    >>> unknown_key_message("keyword", "keywords")
    "expected a golden-set field (id, question, answer, sources, reference_contexts, \
answerable, keywords, tags, evidence_from_each_source), found the unknown key 'keyword'; did you \
mean 'keywords'? Rename it"
    """
    fields = ", ".join(GOLDEN_COLUMNS)
    fix = (
        f"did you mean {nearest!r}? Rename it"
        if nearest
        else "it is kept as the question's own metadata, which ragaudit does not read"
    )
    return f"expected a golden-set field ({fields}), found the unknown key {key!r}; {fix}"


LineOf = Callable[[str], "int | None"]


def _corpus_spelling(
    sources: tuple[str, ...],
    doc_ids: Iterable[str],
    where: str,
    fail: Callable[[str, str], Exception],
) -> tuple[str, ...]:
    """Each source as the corpus spells it.  Ids are compared in Unicode NFC on both sides, so
    ``café`` typed in a golden set (NFC) names the file macOS saved as ``cafe`` + U+0301 (NFD);
    a source naming no document is an error listing the known ids, invisible characters
    escaped (:func:`~ragaudit._text.shown_id`).

    >>> _corpus_spelling(("cafe\u0301",), ["caf\u00e9", "tea"], "", ValueError)
    ('café',)
    """
    known = set(doc_ids)
    if all(source in known for source in sources):
        return sources
    by_nfc = {unicodedata.normalize("NFC", doc): doc for doc in known}
    spelled = []
    for i, source in enumerate(sources):
        match = source if source in known else by_nfc.get(unicodedata.normalize("NFC", source))
        if match is None:
            listing = ", ".join(map(shown_id, sorted(known)[:8]))
            listing += ", ..." if len(known) > 8 else ""
            raise fail(
                f"{where}{source!r} names no document in the corpus (known: {listing})",
                f"sources[{i}]",
            )
        spelled.append(match)
    return tuple(spelled)


def accepted_names() -> str:
    """``question (question/user_input/input); answer (...)...``: for messages."""
    return "; ".join(f"{field}: {'/'.join(names)}" for field, names in GOLDEN_COLUMNS.items())


def parse_column_map(pairs: Sequence[str]) -> dict[str, str]:
    """``["answer=expected_output"]`` -> ``{"answer": "expected_output"}`` (``--map``).

    >>> parse_column_map(["answer=expected_output", "question = prompt"])
    {'answer': 'expected_output', 'question': 'prompt'}
    >>> parse_column_map(["colour=x"])
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: --map: expected FIELD=COLUMN with FIELD one of id, question, \
answer, sources, reference_contexts, answerable, keywords, tags, evidence_from_each_source; \
found 'colour=x'
    """
    mapping: dict[str, str] = {}
    for pair in pairs:
        field, sep, column = (part.strip() for part in pair.partition("="))
        if not sep or field not in GOLDEN_COLUMNS or not column:
            raise InputError(
                f"--map: expected FIELD=COLUMN with FIELD one of {', '.join(GOLDEN_COLUMNS)}; "
                f"found {pair!r}"
            )
        mapping[field] = column
    return mapping


def resolve_columns(
    found: Sequence[str], mapping: Mapping[str, str] | None = None, *, path: str | None = None
) -> dict[str, str]:
    """Which column holds each field: ``{field: column}`` for the fields the file has.

    ``mapping`` (``--map``) wins; otherwise a field is the one of its accepted names present.

    Raises
    ------
    FormatError
        No question column, a ``--map`` column the file lacks, or two names of one field.

    Examples
    --------
    >>> resolve_columns(["user_input", "reference", "reference_contexts"])
    {'question': 'user_input', 'answer': 'reference', 'reference_contexts': 'reference_contexts'}
    >>> resolve_columns(["q", "a"], {"question": "q", "answer": "a"})
    {'question': 'q', 'answer': 'a'}
    """
    columns = list(dict.fromkeys(found))
    listing = ", ".join(columns) if columns else "none"
    mapping = dict(mapping or {})
    for field, column in mapping.items():
        if column not in columns:
            raise FormatError(
                f"--map {field}={column}: expected a column of the file, found columns {listing}",
                path=path,
                field=field,
            )
    resolved: dict[str, str] = {}
    for field, names in GOLDEN_COLUMNS.items():
        if field in mapping:
            resolved[field] = mapping[field]
            continue
        present = [n for n in names if n in columns and n not in mapping.values()]
        if len(present) > 1:
            raise FormatError(
                f"columns {' and '.join(map(repr, present))} both name the {field}; pass "
                f"--map {field}={present[0]} (or another column) to say which one",
                path=path,
                field=field,
            )
        if present:
            resolved[field] = present[0]
    own_layout = any(name in columns for name in ("answer", "sources", "answerable", "keywords"))
    if "question" not in resolved and not own_layout:
        # ragaudit's own layout missing a question is reported per question, with its line.
        raise FormatError(
            f"unrecognised golden-set layout: expected a question column, found columns "
            f"{listing}; accepted names: {accepted_names()} (or pass --map question=COLUMN)",
            path=path,
            line=1,
            field="question",
        )
    return resolved


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def is_list_literal(value: str) -> bool:
    """Whether a CSV cell holds a JSON or Python list literal (``[...]``) that parses."""
    text = value.strip()
    if not text.startswith("["):
        return False
    try:
        json.loads(text)
    except ValueError:
        try:
            ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False
    return True


def cell_list(value: str, field: str) -> Any:
    """A list written into one CSV cell: a JSON list, a Python list literal (what pandas'
    ``to_csv`` writes), or ``;``-separated items (``reference_contexts``: one text)."""
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            pass
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    if field == "reference_contexts":
        return [value]
    return [part.strip() for part in value.split(";") if part.strip()]


_BOOLEANS = ("answerable", "evidence_from_each_source")
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


def _from_cell(value: Any, field: str) -> Any:
    """A CSV cell (always text) as the value its field expects."""
    if not isinstance(value, str):
        return value
    if field in _LISTS:
        return cell_list(value, field)
    if field in _BOOLEANS and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def question_fields(
    values: Mapping[str, Any],
    line_of: LineOf,
    position: int,
    *,
    path: str | None,
    doc_ids: Collection[str] | None = None,
    text_cells: bool = False,
    integer_ids: bool = True,
    require_sources: bool = True,
    require_answer: bool = True,
) -> dict[str, Any]:
    """Check one question's fields; the keyword arguments of a ``GoldenQuestion``.

    Parameters
    ----------
    values : mapping
        ``{field: value}`` (fields named as in :data:`GOLDEN_COLUMNS`; absent = not given).
    line_of : callable
        ``line_of("sources[1]")`` -> the line to name in a message (None: the question's).
    position : int
        0-based position (``question #3`` in messages when the id is not known yet).
    path : str or None
    doc_ids : collection of str, optional
        When given, every source must name one of them.
    text_cells : bool, default False
        Values are CSV text: lists and booleans are parsed from it.
    integer_ids : bool, default True
        Accept an integer id (as its decimal string); YAML refuses it (``017`` would be 17).
    require_sources : bool, default True
        An answerable question needs sources or reference contexts.
    require_answer : bool, default True
        An answerable question needs a reference answer.

    Examples
    --------
    >>> question_fields({"id": "q1", "question": "Why?", "answer": "x", "sources": ["A"]},
    ...                 lambda f: 1, 0, path=None)["sources"]
    ('A',)
    """
    values = {k: (None if _missing(v) else v) for k, v in values.items()}
    if text_cells:
        values = {k: _from_cell(v, k) for k, v in values.items()}

    def fail(message: str, field: str | None) -> FormatError:
        line = line_of(field or "") if field else line_of("")
        return FormatError(message, path=path, line=line, field=field)

    qid = values.get("id")
    if qid is None and "id" not in values:
        raise fail(f"question #{position + 1}: missing required field", "id")
    if integer_ids and isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        hint = ' (quote it: id: "17")' if isinstance(qid, int | float) else ""
        raise fail(f"expected a non-empty string, found {shorten(qid)}{hint}", "id")
    where = f"question {qid!r}: "

    def scalar(name: str, kind: type, required: bool, default: Any) -> Any:
        value = values.get(name)
        if value is None:
            if required:
                raise fail(f"{where}missing required field", name)
            return default
        blank = isinstance(value, str) and required and not value.strip()
        if not isinstance(value, kind) or blank:
            expected = "a non-empty string" if kind is str else type_name(kind())
            raise fail(
                f"{where}expected {expected}, found {type_name(value)} {shorten(value)}", name
            )
        return value

    def strings(name: str) -> tuple[str, ...]:
        value = values.get(name)
        if value is None:
            return ()
        if isinstance(value, tuple) or type(value).__name__ == "ndarray":
            value = list(value)
        if not isinstance(value, list):
            raise fail(f"{where}expected a list of strings, found {type_name(value)}", name)
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise fail(
                    f"{where}expected a non-empty string, found {shorten(item)}", f"{name}[{i}]"
                )
        return tuple(value)

    text = scalar("question", str, True, "")
    answerable = scalar("answerable", bool, False, True)
    each_source = scalar("evidence_from_each_source", bool, False, False)
    answer = scalar("answer", str, answerable and require_answer, "")
    sources = strings("sources")
    contexts = strings("reference_contexts")
    keywords = strings("keywords")
    tags = strings("tags")
    if require_sources and answerable and not sources and not contexts:
        raise fail(
            f"{where}an answerable question needs at least one source document, found "
            + ("an empty list" if values.get("sources") is not None else "no 'sources' field")
            + " (or set answerable: false, or give reference_contexts)",
            "sources",
        )
    if not answerable and sources:
        raise fail(
            f"{where}an unanswerable question must have no sources, found {len(sources)}", "sources"
        )
    if doc_ids is not None:
        sources = _corpus_spelling(sources, doc_ids, where, fail)
    return {
        "id": qid,
        "question": text,
        "answer": answer,
        "sources": sources,
        "answerable": answerable,
        "keywords": keywords,
        "tags": tags,
        "reference_contexts": contexts,
        "evidence_from_each_source": each_source,
    }
