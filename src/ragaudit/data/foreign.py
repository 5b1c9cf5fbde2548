"""Other tools' per-question results: the question, the retrieved contexts as text, the answer.

``ragaudit import --from LAYOUT`` reads these files (JSON, JSON Lines or CSV, through
:func:`~ragaudit.data.formats.records.read_records`).  The column names are the ones each
tool documents for its exports; neither tool is a dependency.

==============  ===========================  ======================  ====================
field           ``ragas``                    ``deepeval``            ``jsonl`` (ragaudit)
==============  ===========================  ======================  ====================
question        ``user_input``, ``question``  ``input``              ``question``
contexts        ``retrieved_contexts``,      ``retrieval_context``   ``contexts``
                ``contexts``
answer          ``response``, ``answer``     ``actual_output``       ``answer``
reference       ``reference``,               ``expected_output``     ``reference``
                ``ground_truth``
ref. contexts   ``reference_contexts``       ``context``             ``reference_contexts``
sources         ``reference_context_ids``    --                      ``sources``
id              ``id``                       ``id``, ``name``        ``id``
==============  ===========================  ======================  ====================

RAGAS: ``SingleTurnSample`` / ``EvaluationDataset`` (0.2+) and the 0.1 ``question``,
``contexts``, ``answer``, ``ground_truth`` columns.  DeepEval: ``LLMTestCase`` fields
(``retrieval_context`` is what the retriever returned; ``context`` the ideal context).
A JSON document may wrap the list as ``{"test_cases": [...]}`` (also ``goldens``,
``samples``, ``questions``).  Other columns (metric scores) are ignored.

In CSV every cell is text, so a list of contexts is either a JSON or Python list literal
(what pandas' ``to_csv`` writes for RAGAS) or its items joined by a delimiter: DeepEval's
``save_as`` joins with ``|`` (``deepeval.dataset.utils.DELIMITER``), the other layouts with
``;`` (:data:`LIST_DELIMITERS`).  A joined cell is ambiguous when a context holds the delimiter
itself (a markdown table holds many ``|``), so the raw cell is kept
(:attr:`ForeignQuestion.joined`) and ``import`` cuts it where the pieces are whole chunks of the
corpus (:meth:`~ragaudit.data.context_match.ContextIndex.segment`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.data.formats.records import read_records
from ragaudit.data.golden_fields import cell_list, is_list_literal, type_name
from ragaudit.exceptions import FormatError, InputError

__all__ = ["LAYOUTS", "LIST_DELIMITERS", "ForeignQuestion", "read_foreign", "sniff_layout"]

#: ``{layout: {field: accepted column names, first choice first}}``.
LAYOUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "ragas": {
        "question": ("user_input", "question"),
        "contexts": ("retrieved_contexts", "contexts"),
        "answer": ("response", "answer"),
        "reference": ("reference", "ground_truth"),
        "reference_contexts": ("reference_contexts",),
        "sources": ("reference_context_ids",),
        "id": ("id",),
    },
    "deepeval": {
        "question": ("input",),
        "contexts": ("retrieval_context",),
        "answer": ("actual_output",),
        "reference": ("expected_output",),
        "reference_contexts": ("context",),
        "id": ("id", "name"),
    },
    "jsonl": {
        "question": ("question",),
        "contexts": ("contexts",),
        "answer": ("answer",),
        "reference": ("reference",),
        "reference_contexts": ("reference_contexts",),
        "sources": ("sources",),
        "id": ("id",),
    },
}
#: ``{layout: the delimiter that joins a list into one CSV cell}``.  DeepEval 4.x writes and
#: reads ``|`` (``deepeval.dataset.utils.DELIMITER``, used by ``EvaluationDataset.save_as``).
LIST_DELIMITERS: dict[str, str] = {"ragas": ";", "deepeval": "|", "jsonl": ";"}
_REQUIRED = ("question", "contexts", "answer")
_LISTS = ("contexts", "reference_contexts", "sources")


@dataclass(frozen=True)
class ForeignQuestion:
    """One question of another tool's results.

    Attributes
    ----------
    line : int or None
        Where it is in the file.
    id : str or None
        The file's id, when it has one.
    question : str
    contexts : tuple of str
        The retrieved contexts, best first.
    answer : str or None
        None when the tool recorded no answer.
    reference : str or None
    reference_contexts, sources : tuple of str
    joined : tuple of (field, cell, delimiter)
        The CSV cells whose list was joined by a delimiter (not a list literal), as read: the
        field's items above are the cell split at every delimiter, which cuts a context that
        holds the delimiter itself; ``import`` re-cuts the cell at chunk boundaries instead.
    """

    line: int | None
    id: str | None
    question: str
    contexts: tuple[str, ...]
    answer: str | None
    reference: str | None = None
    reference_contexts: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    joined: tuple[tuple[str, str, str], ...] = ()

    def joined_cell(self, field: str) -> tuple[str, str] | None:
        """``(cell, delimiter)`` when ``field`` was one delimiter-joined CSV cell, else None."""
        for name, cell, delimiter in self.joined:
            if name == field:
                return cell, delimiter
        return None


def _columns(layout: str, found: Sequence[str], path: str) -> dict[str, str]:
    names = LAYOUTS[layout]
    resolved = {}
    for field, accepted in names.items():
        present = [n for n in accepted if n in found]
        if present:
            resolved[field] = present[0]
    missing = [f for f in _REQUIRED if f not in resolved]
    if missing:
        wanted = "; ".join(f"{f}: {'/'.join(names[f])}" for f in _REQUIRED)
        others = ", ".join(n for n in LAYOUTS if n != layout)
        raise FormatError(
            f"not a {layout} layout: expected columns {wanted}; found columns "
            f"{', '.join(found) or 'none'} (another --from? {others})",
            path=path,
            line=1,
            field=missing[0],
        )
    return resolved


def sniff_layout(path: str | Path) -> tuple[str, list[str]] | None:
    """The layout whose question, contexts and answer columns the file's first record has,
    with those columns (``ragaudit import`` names it when a file is not a saved run), or None.

    >>> import json, pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> _ = file.write_text(json.dumps({"user_input": "Q?", "retrieved_contexts": ["c"],
    ...                                 "response": "A."}) + "\\n")
    >>> sniff_layout(file)
    ('ragas', ['user_input', 'retrieved_contexts', 'response'])
    """
    try:
        rows, _ = read_records(path)
    except (FormatError, InputError, OSError, RecursionError):
        return None
    first = rows[0][1] if rows else None
    if not isinstance(first, Mapping):
        return None
    for layout, names in LAYOUTS.items():
        columns = [next((n for n in names[f] if n in first), None) for f in _REQUIRED]
        if all(columns):
            return layout, [str(c) for c in columns]
    return None


def _value(record: Mapping[str, Any], column: str | None) -> Any:
    if column is None:
        return None
    value = record.get(column)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def read_foreign(path: str | Path, layout: str) -> list[ForeignQuestion]:
    """Read another tool's per-question results (see the module docstring for the columns).

    Raises
    ------
    FormatError
        ``FILE:LINE: FIELD: ...`` for a file that does not parse, a layout lacking the
        question, contexts or answer column, or a value of the wrong type.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "ragas.jsonl"
    >>> _ = file.write_text(json.dumps({"user_input": "Leave?", "response": "25 days.",
    ...     "retrieved_contexts": ["Staff get 25 days."], "reference": "25 days."}))
    >>> read_foreign(file, "ragas")[0].contexts
    ('Staff get 25 days.',)
    """
    if layout not in LAYOUTS:
        raise InputError(f"--from: expected one of {', '.join(LAYOUTS)}, found {layout!r}")
    name = str(path)
    rows, text_cells = read_records(path)
    if not rows:
        raise FormatError("expected at least one question, found none", path=name)
    for line, record in rows:
        if not isinstance(record, Mapping):
            raise FormatError(
                f"expected an object per question, found {type_name(record)}", path=name, line=line
            )
    found = list(dict.fromkeys(str(k) for _, record in rows for k in record))
    columns = _columns(layout, found, name)
    delimiter = LIST_DELIMITERS[layout]
    out = []
    for line, record in rows:
        joined: list[tuple[str, str, str]] = []

        def get(
            field: str,
            kind: str,
            line: int | None = line,
            record: Any = record,
            joined: list[tuple[str, str, str]] = joined,
        ) -> Any:
            value = _value(record, columns.get(field))
            if value is None:
                return None
            if field in _LISTS:
                if text_cells and isinstance(value, str):
                    if not is_list_literal(value):
                        joined.append((field, value, delimiter))
                    if delimiter == ";" or is_list_literal(value):
                        value = cell_list(value, field)
                    else:
                        value = [p.strip() for p in value.split(delimiter) if p.strip()]
                if isinstance(value, str):
                    value = [value]  # one context written as a string
                if not isinstance(value, list | tuple) or not all(
                    isinstance(v, str) for v in value
                ):
                    raise FormatError(
                        f"expected a list of strings, found {shorten(value)}",
                        path=name,
                        line=line,
                        field=columns[field],
                    )
                return tuple(value)
            if isinstance(value, int) and not isinstance(value, bool) and field == "id":
                value = str(value)
            if not isinstance(value, str):
                raise FormatError(
                    f"expected {kind}, found {type_name(value)} {shorten(value)}",
                    path=name,
                    line=line,
                    field=columns[field],
                )
            return value

        question = get("question", "a string")
        if question is None or not question.strip():
            raise FormatError(
                "expected a non-empty question, found none",
                path=name,
                line=line,
                field=columns["question"],
            )
        out.append(
            ForeignQuestion(
                line=line,
                id=get("id", "a string"),
                question=question,
                contexts=get("contexts", "a list") or (),
                answer=get("answer", "a string"),
                reference=get("reference", "a string"),
                reference_contexts=get("reference_contexts", "a list") or (),
                sources=get("sources", "a list") or (),
                joined=tuple(joined),
            )
        )
    return out
