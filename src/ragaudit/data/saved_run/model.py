"""The typed saved-run model: what one pipeline configuration did, question by question.

A saved run (``docs/saved-run-format.md``) is read into frozen dataclasses:

* :class:`SavedRun`: ``name``, ``config`` (:class:`RunSettings`), ``questions`` (a tuple of
  :class:`QuestionResult`), the stored ``summary``, the ``path`` it came from;
* :class:`QuestionResult`: one row (question, answerable flag, gold documents, what was
  retrieved, the context, the answer, the judges' verdicts and the per-question metrics);
* :class:`Retrieved`: one retrieved chunk; :class:`Judgments`: the raw judge outputs
  with typed access to the verdicts ragaudit reads.

Every optional field has exactly one default, stated here and in the format documentation:
``answerable`` true, ``question`` ``""``, ``metrics`` ``{}``, ``judges`` ``{}``,
``gold_docs`` and ``keywords`` empty, ``context_ids`` absent (the top-k retrieved chunks are
the context), ``reference_answer``, ``answer``, ``latency_ms`` and ``generation_error`` null,
``repeats`` absent (one generation per question: see :mod:`.repeated` for R > 1).

A question whose answer could not be generated (the model endpoint failed after its retries)
has ``generation_error`` set (the reason), no answer, and null answer metrics; it is counted in
the summary's ``n_generation_errors``.  Files written before the key was named so call it
``error``; it is read under the new name (:func:`generation_error_of`).  A judge that failed on
a question records ``judge_error`` in ``judges`` (see :attr:`Judgments.failed`).

:meth:`SavedRun.from_dict` validates (schema, value ranges, unique ids) before it builds
anything; :func:`ragaudit.data.records.load_saved_run` reads a file through it.  Unknown keys
are kept in ``extra`` and written back by :meth:`SavedRun.to_dict`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import repeat
from typing import Any

from ragaudit.data.saved_run.convert import RunConversions
from ragaudit.data.saved_run.mappings import (
    Judgments,
    RunSettings,
    _empty,
    _frozen,
    _plain,
)
from ragaudit.data.saved_run.repeated import RepeatAccess
from ragaudit.data.saved_run.retrieved import RETRIEVED_KEYS, Retrieved, RetrievedList

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "RETRIEVED_KEYS",
    "Judgments",
    "QuestionResult",
    "Retrieved",
    "RunSettings",
    "SavedRun",
    "generation_error_of",
]

FORMAT = "ragaudit.run"
FORMAT_VERSION = 1

_LEGACY_GENERATION_ERROR = "error"  # the key's name before format 1 named it generation_error


def generation_error_of(row: Mapping[str, Any]) -> str | None:
    """The reason a row's generation failed (``generation_error``, or the old ``error``).

    >>> generation_error_of({"generation_error": "timeout"}), generation_error_of({"error": "x"})
    ('timeout', 'x')
    >>> generation_error_of({"id": "q1"}) is None
    True
    """
    value = row.get("generation_error")
    if value is None:
        value = row.get(_LEGACY_GENERATION_ERROR)
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question of a saved run (one entry of ``rows``).

    See the module docstring for the defaults of the optional fields.  ``metrics`` keeps the
    values as written (numbers, booleans, null); :meth:`metric` reads one as a float.
    """

    id: str
    retrieved: Sequence[Retrieved] = ()
    question: str = ""
    answerable: bool = True
    reference_answer: str | None = None
    keywords: tuple[str, ...] = ()
    gold_docs: tuple[str, ...] = ()
    tags: tuple[str, ...] | None = None
    context_ids: tuple[str, ...] | None = None
    answer: str | None = None
    abstained: bool | None = None
    citations: tuple[int, ...] | None = None
    judges: Judgments = field(default_factory=Judgments)
    latency_ms: Mapping[str, float | None] | None = None
    generation_error: str | None = None
    usage: Mapping[str, Any] | None = None
    metrics: Mapping[str, float | bool | None] = field(default_factory=_empty)
    repeats: tuple[Mapping[str, Any], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    #: Key order of a row as ``ragaudit run`` writes it; unknown keys follow.
    KEYS = (
        "id", "question", "answerable", "reference_answer", "keywords", "gold_docs", "tags",
        "retrieved", "context_ids", "answer", "abstained", "citations", "judges", "latency_ms",
        "generation_error", "usage", "metrics", "repeats",
    )  # fmt: skip
    _ALWAYS = frozenset({"id", "question", "answerable", "retrieved", "metrics"})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuestionResult:
        """Build from a validated row (see :meth:`SavedRun.from_dict` for validation)."""
        # The table's module makes questions from columns (it imports this class).
        from ragaudit.data.saved_run.table import rows_to_table, table_questions

        return table_questions(rows_to_table([dict(data)]))[0]

    @classmethod
    def _many(cls, ids: list[str], *columns: Iterable[Any]) -> list[QuestionResult]:
        """The questions ``list(map(QuestionResult, ids, *columns))`` makes (one column per
        field, in declaration order), made a field at a time: each slot is set across the
        batch by ``map`` in C, not per question by the generated ``__init__`` (which calls
        ``object.__setattr__`` once per field: three times slower for a 100,000-question
        run).  The class has no ``__post_init__`` to skip (a test holds this); a column
        shorter than ``ids`` leaves its field unset, so callers pass whole columns.

        >>> defaults = [getattr(QuestionResult("q"), f) for f in _FIELDS[1:]]
        >>> two = QuestionResult._many(["q1", "q2"], *[[d, d] for d in defaults])
        >>> two == [QuestionResult("q1"), QuestionResult("q2")]
        True
        """
        if len(columns) != len(_SETTERS) - 1:
            raise TypeError(f"{len(_SETTERS)} columns expected, {1 + len(columns)} given")
        made = list(map(object.__new__, repeat(cls, len(ids))))
        for setter, column in zip(_SETTERS, (ids, *columns), strict=True):
            deque(map(setter, made, column), maxlen=0)  # consumed in C, nothing kept
        return made

    def to_dict(self) -> dict[str, Any]:
        """The JSON row, keys in ``ragaudit run``'s order; absent optional keys are omitted."""
        values: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "answerable": self.answerable,
            "reference_answer": self.reference_answer,
            "keywords": list(self.keywords),
            "gold_docs": list(self.gold_docs),
            "tags": None if self.tags is None else list(self.tags),
            "retrieved": [r.to_dict() for r in self.retrieved],
            "context_ids": None if self.context_ids is None else list(self.context_ids),
            "answer": self.answer,
            "abstained": self.abstained,
            "citations": None if self.citations is None else list(self.citations),
            "judges": self.judges.to_dict(),
            "latency_ms": _plain(self.latency_ms),
            "generation_error": self.generation_error,
            "usage": _plain(self.usage),
            "metrics": _plain(self.metrics),
            "repeats": _plain(self.repeats),
        }
        optional_null = ("tags", "context_ids", "abstained", "citations", "usage", "repeats")
        out = {
            key: value
            for key, value in values.items()
            if key in self._ALWAYS or not (value is None and key in optional_null)
        }
        out.update(_plain(self.extra))
        return out

    @property
    def ranked(self) -> Sequence[Retrieved]:
        """``retrieved`` in rank order (by ``rank`` when every entry has one, else as written).

        A loaded run's entries are usually ranked 1, 2, 3, ... as written: ``retrieved``
        itself, so that ``q.ranked[:k]`` makes only k entries.
        """
        found = self.retrieved
        if isinstance(found, RetrievedList):
            if found.in_rank_order or not found.all_ranked:
                return found
        elif not (found and all(r.rank is not None for r in found)):
            return found
        return tuple(sorted(found, key=lambda r: r.rank or 0))

    def metric(self, name: str) -> float | None:
        """One metric as a float (booleans as 0/1), None when null or absent.

        >>> QuestionResult("q1", metrics={"correct": True, "faithfulness": None}).metric("correct")
        1.0
        """
        value = self.metrics.get(name)
        return None if value is None else float(value)


#: The fields of :class:`QuestionResult` in declaration order, and the slot setter of each.
_FIELDS = tuple(f.name for f in fields(QuestionResult))
_SETTERS = tuple(getattr(QuestionResult, name).__set__ for name in _FIELDS)


@dataclass(frozen=True)
class SavedRun(RunConversions, RepeatAccess):  # to_run(), to_qrels(); repeats, repeat(r)
    """A saved run in memory (frozen; derive changed copies with :meth:`replace`).

    Attributes
    ----------
    name : str
        The configuration's name (also the file stem).
    config : RunSettings
        ``k``, retrieval depth, chunking, retriever, generator, judges, seed, hashes.
    questions : sequence of QuestionResult
        One per question, in file order (a loaded run makes them from its table when they
        are read: :class:`~ragaudit.data.saved_run.table.QuestionsView`).
    summary : mapping
        The summary stored in the file (recompute it with
        :func:`ragaudit.data.saved_run.summary.summarise_run`).
    path : str or None
        The file it was read from or written to.
    extra : mapping
        Unknown top-level keys, preserved on write.
    judge_audit : mapping or None
        The ``judges audit`` of this run's answers (``judges audit RUN --save OUT``): the
        document of :meth:`ragaudit.diagnose.judge_audit.JudgeAudit.to_dict`; None when the
        run carries none.  ``report`` shows it as its "judge audit" section.

    Examples
    --------
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1},
    ...     "rows": [{"id": "q1", "retrieved": [{"chunk_id": "a#0", "doc_id": "a"}]}]})
    >>> run.questions[0].answerable, run.k, run.rows[0]["metrics"]
    (True, 1, {})
    """

    name: str
    config: RunSettings
    questions: Sequence[QuestionResult]
    summary: Mapping[str, Any] = field(default_factory=_empty)
    path: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)
    judge_audit: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.config, RunSettings):
            object.__setattr__(self, "config", RunSettings(self.config))
        if type(self.questions) is not tuple and not hasattr(self.questions, "table"):
            object.__setattr__(self, "questions", tuple(self.questions))
        object.__setattr__(self, "summary", _frozen(self.summary))
        object.__setattr__(self, "extra", _frozen(self.extra))
        if self.judge_audit is not None:
            object.__setattr__(self, "judge_audit", _frozen(self.judge_audit))

    @property
    def k(self) -> int:
        """``config.k``."""
        return self.config.k

    @property
    def table(self) -> Any:
        """The questions as a ``pyarrow.Table``: one row per question, the columns of
        :mod:`ragaudit.data.saved_run.table` (made once from the questions of a run built in
        memory)."""
        held = getattr(self.questions, "table", None)
        if held is None:
            held = self.__dict__.get("_table")
        if held is None:
            from ragaudit.data.saved_run.table import rows_to_table

            held = self.__dict__["_table"] = rows_to_table([q.to_dict() for q in self.questions])
        return held

    @property
    def ids(self) -> list[str]:
        """The question ids, in order (read from the table: no question is made)."""
        if isinstance(self.questions, tuple):
            return [q.id for q in self.questions]
        return list(self.table.column("id").to_pylist())

    @property
    def answerable_flags(self) -> list[bool]:
        """Each question's ``answerable``, in order (read from the table: no question is
        made)."""
        if isinstance(self.questions, tuple):
            return [q.answerable for q in self.questions]
        return list(self.table.column("answerable").to_pylist())

    def top_doc_ids(self, k: int) -> list[Sequence[str]]:
        """Each question's top ``k`` document ids in rank order (``q.ranked[:k]``'s), read
        from the table's columns when the ranks are the file order.

        >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved":
        ...     [{"chunk_id": "a#0", "doc_id": "a"}, {"chunk_id": "b#0", "doc_id": "b"}]}]})
        >>> run.top_doc_ids(1)
        [['a']]
        """
        from ragaudit.data.saved_run.columns import top_doc_ids
        from ragaudit.data.saved_run.view import top_ids

        found = None if isinstance(self.questions, tuple) else top_ids(self.table, k)
        if found is None:
            return [list(top_doc_ids(q, k)) for q in self.questions]
        return list(found)

    def metric_names(self) -> list[str]:
        """The per-question metric names, in order of first appearance (from the table's
        ``metrics`` column: no question is made).

        >>> SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
        ...     "metrics": {"b": 1.0, "a": None}}]}).metric_names()
        ['b', 'a']
        """
        from ragaudit.data.saved_run import columns as _columns

        if isinstance(self.questions, tuple):
            return _columns.metric_names(self.questions)
        column = self.table.column("metrics")
        if column.type.num_fields:
            return [f.name for f in column.type]
        return list(dict.fromkeys(n for m in self.column_values("metrics") if m for n in m))

    def column_values(self, name: str) -> list[Any]:
        """One row key of every question as written (``gold_docs`` as lists...), read from
        the table without making the questions (``answerable``, ``gold_docs``, ``id``...).

        >>> SavedRun.from_dict({"config": {"k": 1}, "rows": [{"id": "q1", "retrieved": [],
        ...     "gold_docs": ["a"]}]}).column_values("gold_docs")
        [['a']]
        """
        if isinstance(self.questions, tuple):
            return [q.to_dict().get(name) for q in self.questions]
        from ragaudit.data.saved_run.table import JSON_TEXT, _decoded

        return _decoded(self.table.column(name), name in JSON_TEXT)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The rows as plain JSON dicts (a fresh copy on every call)."""
        if isinstance(self.questions, tuple):
            return [q.to_dict() for q in self.questions]
        from ragaudit.data.saved_run.table import table_rows

        return table_rows(self.table)

    def metric_column(self, name: str) -> Any:
        """``name`` over :attr:`questions` as a read-only float array, NaN where null or
        absent (``q.metric(name)`` of each question; computed once, in C loops:
        :func:`~ragaudit.data.saved_run.columns.metric_columns`).

        >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [
        ...     {"id": "q1", "retrieved": [], "metrics": {"correct": True}}]})
        >>> run.metric_column("correct")
        array([1.])
        """
        # numpy is imported on the first column, not with the model (`--help` stays instant)
        import numpy as np

        from ragaudit.data.saved_run import columns as _columns

        cache = self.__dict__.setdefault("_metric_columns", {})
        if name not in cache and not isinstance(self.questions, tuple):
            from ragaudit.data.saved_run.view import metric_arrays

            for key, column in metric_arrays(self.table).items():
                column.flags.writeable = False
                cache[key] = column
            if name not in cache:
                cache[name] = np.full(len(self.questions), np.nan)
                cache[name].flags.writeable = False
        if name not in cache:  # every metric of the run at once: a comparison reads them all
            names = {*self.metric_names(), name} - cache.keys()
            for key, column in _columns.metric_columns(self.questions, sorted(names)).items():
                column.flags.writeable = False
                cache[key] = column
        return cache[name]

    def gold_in_top(self, k: int) -> tuple[Any, Any, Any] | None:
        """:func:`~.view.gold_in_top` of the run's table at ``k``, computed once (the funnel
        and judged@k both read it); None for a run built from questions."""
        if isinstance(self.questions, tuple):
            return None
        from ragaudit.data.saved_run.view import gold_in_top

        cache = self.__dict__.setdefault("_gold_in_top", {})
        if k not in cache:
            cache[k] = gold_in_top(self.table, k)
        return cache[k]

    def by_id(self) -> dict[str, QuestionResult]:
        """``{question id: QuestionResult}``."""
        return {q.id: q for q in self.questions}

    def replace(self, **changes: Any) -> SavedRun:
        """A copy with some fields changed (``run.replace(path=...)``)."""
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str | None = None) -> SavedRun:
        """Validate a saved-run document and build the model.

        ``format`` and ``format_version`` may be omitted in memory (a file must state them);
        a missing ``name`` is ``""`` (unnamed; writing it needs a name).

        Raises
        ------
        FormatError
            At the first problem, located as ``rows[3].metrics.recall@k: expected ...,
            found ...`` (the message counts the others).
        """
        from ragaudit.data.saved_run.check import validate_saved_run

        validate_saved_run(data, path=path, require_header=False)
        return cls.from_checked(data, path)

    @classmethod
    def from_checked(cls, data: Mapping[str, Any], path: str | None = None) -> SavedRun:
        """Build from a document that already passed
        :func:`~ragaudit.data.saved_run.check.validate_saved_run` (no second validation)."""
        from ragaudit.data.saved_run.table import rows_to_table
        from ragaudit.data.saved_run.view import QuestionsView

        return cls.from_parts(data, QuestionsView(rows_to_table(data["rows"])), path)

    @classmethod
    def from_parts(
        cls, top: Mapping[str, Any], questions: Iterable[QuestionResult], path: str | None = None
    ) -> SavedRun:
        """The run of a checked document's top level ``top`` (its ``rows`` are not read) and
        the ``questions`` built from those rows: the last step of every reader.  Keys other
        than the format's own are kept in ``extra``.

        >>> SavedRun.from_parts({"name": "r", "config": {"k": 2}, "note": 1}, []).extra
        mappingproxy({'note': 1})
        """
        known = {"format", "format_version", "name", "config", "rows", "summary", "judge_audit"}
        return cls(
            name=top.get("name", ""),
            config=top["config"],
            questions=questions if isinstance(questions, Sequence) else tuple(questions),
            summary=top.get("summary") or {},
            path=path,
            extra={k: v for k, v in top.items() if k not in known},
            judge_audit=top.get("judge_audit"),
        )

    def to_dict(self, rows: bool = True) -> dict[str, Any]:
        """The JSON document (format header first, then name, config, rows, summary, and
        ``judge_audit`` when the run carries one); ``rows=False`` leaves the rows out (an
        empty list)."""
        listed = self.rows if rows else []  # from the columns: no question is made
        audit = {} if self.judge_audit is None else {"judge_audit": _plain(self.judge_audit)}
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "config": self.config.to_dict(),
            "rows": listed,
            "summary": _plain(self.summary),
            **audit,
            **_plain(self.extra),
        }

    def to_pandas(self) -> Any:
        """One row per question (index ``id``): ``answerable``, ``generation_error`` and every
        metric.

        Needs the ``pandas`` extra.
        """
        from ragaudit._frames import records_frame

        return records_frame(
            [
                {
                    "id": q.id,
                    "answerable": q.answerable,
                    "generation_error": q.generation_error,
                    **dict(q.metrics),
                }
                for q in self.questions
            ],
            index="id",
        )
