"""Golden sets: the questions, their reference answers and the documents that hold the answer.

A golden set is a YAML, JSON, JSON Lines or CSV file, or a pandas DataFrame.  In YAML it is a
list of questions or ``{questions: [...]}``; each question::

    - id: q01                       # unique string
      question: How many days of annual leave do I get?
      answer: 25 days per calendar year.
      sources: [03-leave-policy]    # document ids (file stems of the corpus)
      answerable: true              # optional, default true
      keywords: ["25 days"]         # optional: what a correct answer must contain
      tags: [lookup]                # optional
      reference_contexts: [...]     # optional: passages that hold the answer (text)
      evidence_from_each_source: false  # optional: evidence must come from every source

``sources`` label retrieval relevance; evidence is every fact of the reference anywhere in
the context, unless ``evidence_from_each_source: true`` asks for a fact of each source.

JSON holds a list of such objects (or ``{questions: [...]}``), JSON Lines one object per line,
CSV one question per row (a list cell is a JSON list, a Python list literal as pandas writes
it, or ``;``-separated).  Other tools' column names are recognised (``user_input``,
``reference``, ``expected_output``, ``reference_context_ids``, ...; the table is
:data:`~ragaudit.data.golden_fields.GOLDEN_COLUMNS`) and ``columns`` (``--map``) overrides
the guess.  Without an id column questions are numbered ``q1``, ``q2``, ...

Unanswerable questions (``answerable: false``) have no sources and the answer may be empty.
An answerable question needs sources, or reference contexts from which a corpus gives them
(:func:`ragaudit.data.context_match.sources_from_contexts`).  A misspelt key (``keyword``
for ``keywords``: :func:`~ragaudit.data.golden_fields.misspelt_key`) is refused, naming the
key it misspells; other unknown keys are kept in :attr:`GoldenQuestion.extra`.  Every
validation error names the file, the line (in YAML the value's own line) and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from ragaudit._io import read_file_bytes
from ragaudit.data.context_match import ContextIndex
from ragaudit.data.formats.yaml_ import compose_yaml, construct_yaml
from ragaudit.data.golden_fields import (
    misspelt_key,
    question_fields,
    resolve_columns,
    type_name,
    unknown_key_message,
)
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import FormatError, InputError

__all__ = [
    "GoldenQuestion",
    "GoldenSet",
    "golden_from_dataframe",
    "golden_from_records",
    "load_golden",
    "parse_golden",
    "sources_from_contexts",
]

_type_name = type_name


@dataclass(frozen=True)
class GoldenQuestion:
    """One golden question (see the module docstring for the fields)."""

    id: str
    question: str
    answer: str
    sources: tuple[str, ...]
    answerable: bool = True
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    reference_contexts: tuple[str, ...] = ()
    #: Evidence must come from each source document (off: every fact anywhere in the context).
    evidence_from_each_source: bool = False
    line: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class GoldenSet(Sequence[GoldenQuestion]):
    """An ordered, validated golden set.

    Attributes
    ----------
    questions : tuple of GoldenQuestion
    path : str or None
    sha256 : str
        Hash of the file's bytes (recorded in saved runs so results name their golden set).
    """

    questions: tuple[GoldenQuestion, ...]
    path: str | None = None
    sha256: str = ""

    def __len__(self) -> int:
        return len(self.questions)

    def __getitem__(self, index: Any) -> Any:
        return self.questions[index]

    def __iter__(self) -> Iterator[GoldenQuestion]:
        return iter(self.questions)

    def by_id(self) -> dict[str, GoldenQuestion]:
        """``{id: question}``."""
        return {q.id: q for q in self.questions}

    def to_pandas(self) -> Any:
        """One row per question (index ``id``): question, answer, sources, answerable,
        keywords, tags, reference contexts.  Needs the ``pandas`` extra."""
        from ragaudit._frames import records_frame

        return records_frame(
            [
                {
                    "id": q.id, "question": q.question, "answer": q.answer,
                    "sources": list(q.sources), "answerable": q.answerable,
                    "keywords": list(q.keywords), "tags": list(q.tags),
                    "reference_contexts": list(q.reference_contexts),
                }
                for q in self.questions
            ],
            index="id",
        )  # fmt: skip

    def qrels(self) -> Qrels:
        """Document-level labels: every source of an answerable question gets grade 1.

        Unanswerable questions and questions without sources are left out (no relevant
        item means no retrieval metric).
        """
        return Qrels(
            {
                q.id: dict.fromkeys(q.sources, 1)
                for q in self.questions
                if q.answerable and q.sources
            },
            unit="doc",
            name=self.path,
        )


def sources_from_contexts(golden: GoldenSet, index: ContextIndex) -> GoldenSet:
    """Give each question that has reference contexts but no sources the documents of the
    chunks its contexts match (:class:`~ragaudit.data.context_match.ContextIndex`).

    Raises
    ------
    FormatError
        An answerable question none of whose reference contexts matches a chunk.

    Examples
    --------
    >>> from ragaudit.data.chunks import Chunk
    >>> golden = golden_from_records([(1, {"question": "Leave?", "answer": "25 days.",
    ...     "reference_contexts": ["Staff get 25 days of leave."]})])
    >>> index = ContextIndex([Chunk("c1", "leave", 0, "Staff get 25 days of leave.")])
    >>> sources_from_contexts(golden, index)[0].sources
    ('leave',)
    """
    questions = []
    for q in golden:
        if q.sources or not q.reference_contexts:
            questions.append(q)
            continue
        matches = [index.match(text) for text in q.reference_contexts]
        docs = tuple(dict.fromkeys(m.doc_id for m in matches if m.doc_id is not None))
        if q.answerable and not docs:
            best = max(m.overlap for m in matches)
            raise FormatError(
                f"question {q.id!r}: none of its {len(matches)} reference contexts matches a "
                f"chunk of the corpus (best overlap {best:.2f} < {index.min_overlap:g}); give "
                "sources, or check --corpus and the chunking",
                path=golden.path,
                line=q.line,
                field="reference_contexts",
            )
        questions.append(replace(q, sources=docs))
    return GoldenSet(tuple(questions), golden.path, golden.sha256)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _construct(node: yaml.Node, path: str | None) -> Any:
    return construct_yaml(node, path)


def parse_golden(
    text: str,
    *,
    path: str | None = None,
    doc_ids: Collection[str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> GoldenSet:
    """Validate golden-set YAML text (see :func:`load_golden`).

    Examples
    --------
    >>> golden = parse_golden('''
    ... - id: q1
    ...   question: How many leave days?
    ...   answer: 25 days.
    ...   sources: [leave]
    ...   keywords: [25 days]
    ... - {id: q2, question: "Who runs Mars?", answerable: false}
    ... ''')
    >>> [(q.id, q.answerable, q.sources) for q in golden]
    [('q1', True, ('leave',)), ('q2', False, ())]
    >>> golden.qrels()["q1"]
    {'leave': 1}
    >>> parse_golden("- {id: q1, question: Why, answer: x, sources: [nope]}",
    ...              path="g.yaml", doc_ids={"leave"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.FormatError: g.yaml:1: sources[0]: question 'q1': 'nope' names no ...
    """
    root = compose_yaml(text, path)
    if root is None:
        raise FormatError("expected a list of questions, found an empty file", path=path)
    items_node: yaml.Node = root
    if isinstance(root, yaml.MappingNode):
        found = [
            v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "questions"
        ]
        if not found:
            raise FormatError(
                "expected a list of questions or a mapping with a 'questions' list, "
                "found a mapping without 'questions'",
                path=path,
                line=_line(root),
            )
        items_node = found[0]
    if not isinstance(items_node, yaml.SequenceNode):
        raise FormatError(
            f"expected a list of questions, found {_type_name(_construct(items_node, path))}",
            path=path,
            line=_line(items_node),
            field="questions",
        )
    if not items_node.value:
        raise FormatError(
            "expected at least one question, found none", path=path, line=_line(items_node)
        )
    items = [_yaml_fields(node, position, path) for position, node in enumerate(items_node.value)]
    names = [key for fields in items for key in fields]
    resolved = resolve_columns(names, columns, path=path)
    questions = []
    for position, (node, fields) in enumerate(zip(items_node.value, items, strict=True)):
        questions.append(_yaml_question(node, fields, resolved, position, path, doc_ids))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return _golden_set(questions, path, digest)


def _golden_set(questions: Sequence[GoldenQuestion], path: str | None, digest: str) -> GoldenSet:
    seen: dict[str, int] = {}
    for question in questions:
        if question.id in seen:
            raise FormatError(
                f"duplicate question id {question.id!r} (first used on line {seen[question.id]}); "
                "ids must be unique",
                path=path,
                line=question.line,
                field="id",
            )
        seen[question.id] = question.line or 0
    return GoldenSet(tuple(questions), path, digest)


def _yaml_fields(node: yaml.Node, position: int, path: str | None) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise FormatError(
            f"question #{position + 1}: expected a mapping with id, question, answer, sources; "
            f"found {_type_name(_construct(node, path))}",
            path=path,
            line=_line(node),
        )
    fields: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
        if key in fields:
            raise FormatError(
                f"question #{position + 1}: field given twice",
                path=path,
                line=_line(key_node),
                field=key,
            )
        fields[key] = value_node
    return fields


def _yaml_question(
    node: yaml.Node,
    fields: Mapping[str, yaml.Node],
    resolved: Mapping[str, str],
    position: int,
    path: str | None,
    doc_ids: Collection[str] | None,
) -> GoldenQuestion:
    nodes = {field: fields[column] for field, column in resolved.items() if column in fields}
    values = {field: _construct(value, path) for field, value in nodes.items()}

    def line_of(name: str) -> int:
        base, _, index = name.partition("[")
        value_node = nodes.get(base)
        if value_node is None:
            return _line(node)
        if index and isinstance(value_node, yaml.SequenceNode):
            return _line(value_node.value[int(index.rstrip("]"))])
        return _line(value_node)

    used = set(resolved.values())
    for key_node, _ in node.value:
        key = str(key_node.value)
        nearest = misspelt_key(key, used)
        if nearest is not None:
            raise FormatError(
                unknown_key_message(key, nearest), path=path, line=_line(key_node), field=key
            )
    checked = question_fields(
        values, line_of, position, path=path, doc_ids=doc_ids, integer_ids=False
    )
    extra = {k: _construct(v, path) for k, v in fields.items() if k not in used}
    return GoldenQuestion(**checked, line=_line(node), extra=extra)


def golden_from_records(
    records: Iterable[tuple[int | None, Mapping[str, Any]]],
    *,
    path: str | None = None,
    columns: Mapping[str, str] | None = None,
    doc_ids: Collection[str] | None = None,
    text_cells: bool = False,
    require_sources: bool = True,
    require_answer: bool = True,
    sha256: str = "",
) -> GoldenSet:
    """A golden set from flat records ``(line, {column: value})`` (JSON, JSONL, CSV, frames).

    Columns are recognised through :data:`~ragaudit.data.golden_fields.GOLDEN_COLUMNS`
    (``columns`` overrides, as ``--map`` does).  Without an id column the questions are
    numbered ``q1``, ``q2``, ... in file order.

    Examples
    --------
    >>> golden = golden_from_records([(1, {"user_input": "Why?", "reference": "Because.",
    ...                                    "reference_context_ids": ["A"]})])
    >>> golden[0].id, golden[0].answer, golden[0].sources
    ('q1', 'Because.', ('A',))
    """
    rows = list(records)
    if not rows:
        raise FormatError("expected at least one question, found none", path=path)
    for line, record in rows:
        if not isinstance(record, Mapping):
            raise FormatError(
                f"expected an object of question fields, found {_type_name(record)}",
                path=path,
                line=line,
            )
    names = [str(key) for _, record in rows for key in record]
    resolved = resolve_columns(names, columns, path=path)
    used = set(resolved.values())
    for key in dict.fromkeys(names):
        nearest = misspelt_key(key, used)
        if nearest is not None:
            line = next(ln for ln, record in rows if key in record)
            raise FormatError(unknown_key_message(key, nearest), path=path, line=line, field=key)
    questions = []
    for position, (line, record) in enumerate(rows):
        values = {field: record[column] for field, column in resolved.items() if column in record}
        if "id" not in resolved:
            values["id"] = f"q{position + 1}"
        checked = question_fields(
            values,
            _fixed_line(line),
            position,
            path=path,
            doc_ids=doc_ids,
            text_cells=text_cells,
            require_sources=require_sources,
            require_answer=require_answer,
        )
        extra = {str(k): v for k, v in record.items() if k not in used}
        questions.append(GoldenQuestion(**checked, line=line, extra=extra))
    return _golden_set(questions, path, sha256)


def _fixed_line(line: int | None) -> Callable[[str], int | None]:
    def line_of(_field: str) -> int | None:
        return line

    return line_of


def golden_from_dataframe(
    frame: Any,
    *,
    columns: Mapping[str, str] | None = None,
    doc_ids: Collection[str] | None = None,
    name: str = "DataFrame",
) -> GoldenSet:
    """A golden set from a pandas DataFrame (one row per question; NaN = missing).

    Columns are recognised as in :func:`golden_from_records`; messages name the row as its
    1-based position (``DataFrame:3: answer: ...``).  List cells may be lists, tuples or arrays,
    or text as in a CSV file (a frame from ``pd.read_csv`` holds the ``"['a', 'b']"`` that
    ``to_csv`` wrote), and ``"true"``/``"false"`` text is a boolean.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"input": ["Why?"], "expected_output": ["So."], "doc_ids": [["A"]]})
    >>> golden_from_dataframe(frame)[0].sources
    ('A',)
    >>> golden_from_dataframe(frame.assign(doc_ids=["['A', 'B']"]))[0].sources
    ('A', 'B')
    """
    records = getattr(frame, "to_dict", None)
    if records is None:
        raise InputError(f"{name}: expected a pandas DataFrame, found {type(frame).__name__}")
    rows = [(i + 1, _plain_cells(row)) for i, row in enumerate(frame.to_dict("records"))]
    return golden_from_records(rows, path=name, columns=columns, doc_ids=doc_ids, text_cells=True)


def _plain_cells(row: Mapping[Any, Any]) -> dict[str, Any]:
    """numpy scalars and arrays as Python values (a frame's cells are numpy types)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if hasattr(value, "tolist"):
            value = value.tolist()
        out[str(key)] = value
    return out


_JSON = (".json", ".jsonl", ".ndjson")


def load_golden(
    path: str | Path,
    *,
    doc_ids: Collection[str] | None = None,
    columns: Mapping[str, str] | None = None,
    require_sources: bool = True,
) -> GoldenSet:
    """Load and validate a golden-set file: YAML, JSON, JSON Lines or CSV (by extension).

    ``.json``/``.jsonl``/``.ndjson`` and ``.csv`` go through the shared readers of
    :mod:`ragaudit.data.formats`; anything else is YAML, unless its first character is ``{``
    (JSON Lines under another name).

    Parameters
    ----------
    path : str or Path
    doc_ids : collection of str, optional
        The corpus's document ids; when given, every source must name one of them.
    columns : mapping, optional
        ``{field: column}`` overriding the recognised column names (``--map``).
    require_sources : bool, default True
        An answerable question needs sources or reference contexts.

    Returns
    -------
    GoldenSet

    Raises
    ------
    FormatError
        ``FILE:LINE: FIELD: message`` for a file that does not parse, an unrecognised layout
        (listing the columns found and the names accepted), a missing field, a value of the
        wrong type, a duplicate id, or a source naming no document.
    """
    from ragaudit.data.formats import read_text

    file = Path(path)
    raw = read_file_bytes(file)
    digest = hashlib.sha256(raw).hexdigest()
    suffix = file.suffix.lower()
    if (
        suffix in _JSON
        or suffix == ".csv"
        or (suffix not in (".yaml", ".yml") and raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"))
    ):
        from ragaudit.data.formats.records import read_records

        records, text_cells = read_records(file)
        return golden_from_records(
            records, path=str(file), columns=columns, doc_ids=doc_ids, text_cells=text_cells,
            require_sources=require_sources, sha256=digest,
        )  # fmt: skip
    return parse_golden(read_text(file), path=str(file), doc_ids=doc_ids, columns=columns)
