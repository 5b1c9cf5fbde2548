"""Golden sets: the questions, their reference answers and the documents that hold the answer.

A golden file is YAML: either a list of questions or ``{questions: [...]}``.  Each question::

    - id: q01                       # unique string
      question: How many days of annual leave do I get?
      answer: 25 days per calendar year.
      sources: [03-leave-policy]    # document ids (file stems of the corpus)
      answerable: true              # optional, default true
      keywords: ["25 days"]         # optional: what a correct answer must contain
      tags: [lookup]                # optional

Unanswerable questions (``answerable: false``) have no sources and the answer may be empty.
Unknown keys are kept in :attr:`GoldenQuestion.extra`.  Every validation error names the
file, the line (taken from the YAML node marks) and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragaudit.data.formats._source import shorten
from ragaudit.data.formats.yaml_ import compose_yaml, construct_yaml
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import FormatError, unreadable

__all__ = ["GoldenQuestion", "GoldenSet", "load_golden", "parse_golden"]

_KNOWN = ("id", "question", "answer", "sources", "answerable", "keywords", "tags")


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


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _type_name(value: Any) -> str:
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


def _construct(node: yaml.Node, path: str | None) -> Any:
    return construct_yaml(node, path)


def _string_list(node: yaml.Node, name: str, where: str, path: str | None) -> tuple[str, ...]:
    value = _construct(node, path)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise FormatError(
            f"{where}expected a list of strings, found {_type_name(value)}",
            path=path,
            line=_line(node),
            field=name,
        )
    assert isinstance(node, yaml.SequenceNode)
    for i, (item, item_node) in enumerate(zip(value, node.value, strict=True)):
        if not isinstance(item, str) or not item.strip():
            raise FormatError(
                f"{where}expected a non-empty string, found {shorten(item)}",
                path=path,
                line=_line(item_node),
                field=f"{name}[{i}]",
            )
    return tuple(value)


def parse_golden(
    text: str, *, path: str | None = None, doc_ids: Collection[str] | None = None
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
    questions: list[GoldenQuestion] = []
    seen: dict[str, int] = {}
    for position, node in enumerate(items_node.value):
        question = _parse_question(node, position, path, doc_ids)
        if question.id in seen:
            raise FormatError(
                f"duplicate question id {question.id!r} (first used on line {seen[question.id]}); "
                "ids must be unique",
                path=path,
                line=question.line,
                field="id",
            )
        seen[question.id] = question.line or 0
        questions.append(question)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return GoldenSet(tuple(questions), path, digest)


def _parse_question(
    node: yaml.Node, position: int, path: str | None, doc_ids: Collection[str] | None
) -> GoldenQuestion:
    line = _line(node)
    if not isinstance(node, yaml.MappingNode):
        raise FormatError(
            f"question #{position + 1}: expected a mapping with id, question, answer, sources; "
            f"found {_type_name(_construct(node, path))}",
            path=path,
            line=line,
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
    if "id" not in fields:
        raise FormatError(
            f"question #{position + 1}: missing required field", path=path, line=line, field="id"
        )
    qid = _construct(fields["id"], path)
    if not isinstance(qid, str) or not qid.strip():
        hint = ' (quote it: id: "17")' if isinstance(qid, int | float) else ""
        raise FormatError(
            f"expected a non-empty string, found {shorten(qid)}{hint}",
            path=path,
            line=_line(fields["id"]),
            field="id",
        )
    where = f"question {qid!r}: "

    def scalar(name: str, kind: type, required: bool, default: Any) -> Any:
        if name not in fields:
            if required:
                raise FormatError(
                    f"{where}missing required field", path=path, line=line, field=name
                )
            return default
        value = _construct(fields[name], path)
        if value is None and not required:
            return default
        blank = isinstance(value, str) and required and not value.strip()
        if not isinstance(value, kind) or blank:
            expected = "a non-empty string" if kind is str else _type_name(kind())
            raise FormatError(
                f"{where}expected {expected}, found {_type_name(value)} {shorten(value)}",
                path=path,
                line=_line(fields[name]),
                field=name,
            )
        return value

    text = scalar("question", str, True, "")
    answerable = scalar("answerable", bool, False, True)
    answer = scalar("answer", str, answerable, "")
    sources = _string_list(fields["sources"], "sources", where, path) if "sources" in fields else ()
    keywords = (
        _string_list(fields["keywords"], "keywords", where, path) if "keywords" in fields else ()
    )
    tags = _string_list(fields["tags"], "tags", where, path) if "tags" in fields else ()
    if answerable and not sources:
        raise FormatError(
            f"{where}an answerable question needs at least one source document, found "
            + ("an empty list" if "sources" in fields else "no 'sources' field")
            + " (or set answerable: false)",
            path=path,
            line=_line(fields.get("sources", node)),
            field="sources",
        )
    if not answerable and sources:
        raise FormatError(
            f"{where}an unanswerable question must have no sources, found {len(sources)}",
            path=path,
            line=_line(fields["sources"]),
            field="sources",
        )
    if doc_ids is not None:
        known = set(doc_ids)
        for i, source in enumerate(sources):
            if source not in known:
                listing = ", ".join(sorted(known)[:8]) + (", ..." if len(known) > 8 else "")
                source_node = fields["sources"].value[i]
                raise FormatError(
                    f"{where}{source!r} names no document in the corpus (known: {listing})",
                    path=path,
                    line=_line(source_node),
                    field=f"sources[{i}]",
                )
    extra = {k: _construct(v, path) for k, v in fields.items() if k not in _KNOWN}
    return GoldenQuestion(
        id=qid,
        question=text,
        answer=answer,
        sources=sources,
        answerable=answerable,
        keywords=keywords,
        tags=tags,
        line=line,
        extra=extra,
    )


def load_golden(path: str | Path, *, doc_ids: Collection[str] | None = None) -> GoldenSet:
    """Load and validate a golden-set YAML file.

    Parameters
    ----------
    path : str or Path
    doc_ids : collection of str, optional
        The corpus's document ids; when given, every source must name one of them.

    Returns
    -------
    GoldenSet

    Raises
    ------
    FormatError
        ``FILE:LINE: FIELD: message`` for invalid YAML, a missing field, a value of the wrong
        type, a duplicate id, or a source naming no document.
    """
    file = Path(path)
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(file, exc) from None
    return parse_golden(text, path=str(file), doc_ids=doc_ids)
