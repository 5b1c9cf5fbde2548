"""A repeated run: R generations of each question in one saved run.

A pipeline run ``R`` times on each question (``ragaudit run --repeats R``, inspect_ai's
epochs, promptfoo's ``--repeat``) is one saved run whose header says ``config.repeats: R``
and whose rows hold repeat 0 in their own fields, as a run with one generation does, and
repeats 1 .. R-1 in ``repeats``: one object per generation with the row's per-generation
keys (:data:`GENERATION_KEYS`) and the ``seed`` it drew from.  In an entry, absent
``retrieved`` and ``context_ids`` are repeat 0's (retrieval is usually the same for every
repeat, and twenty entries per repeat would be stored for nothing); every other absent key
takes a row's default.  A run with R = 1 has neither key: it is the file it always was.

:class:`RepeatAccess` gives :class:`~ragaudit.data.saved_run.SavedRun` its repeated view:
``repeats`` (R), ``repeat_seeds``, ``repeat_outcomes(name)`` (the ``(n_questions, R)``
matrix that :mod:`ragaudit.stats.repeats` takes) and ``repeat(r)`` (repeat ``r`` as an
ordinary run, for the funnel or anything else that reads one generation per question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    import numpy as np

    from ragaudit.data.saved_run.mappings import RunSettings
    from ragaudit.data.saved_run.model import SavedRun

__all__ = [
    "GENERATION_KEYS",
    "QUESTION_KEYS",
    "REPEAT_CONFIG_KEYS",
    "RepeatAccess",
    "repeat_row",
    "with_repeats",
]

#: The row keys one generation fills in (the rest describe the question: id, question,
#: answerable, reference answer, keywords, gold documents, tags).
GENERATION_KEYS = (
    "retrieved", "context_ids", "answer", "abstained", "citations", "judges", "latency_ms",
    "generation_error", "usage", "metrics",
)  # fmt: skip
#: The row keys that describe the question, the same for every repeat.
QUESTION_KEYS = (
    "id", "question", "answerable", "reference_answer", "keywords", "gold_docs", "tags",
)  # fmt: skip
#: Keys an entry of ``repeats`` inherits from repeat 0 when it leaves them out.
INHERITED = ("retrieved", "context_ids")
#: The header keys of a repeated run (absent when R = 1).
REPEAT_CONFIG_KEYS = ("repeats", "repeat_seeds", "repeat_seed_rule")


def repeat_row(row: Mapping[str, Any], r: int) -> dict[str, Any]:
    """Repeat ``r`` of a JSON ``row`` as a row of its own (no ``repeats``; the entry's
    ``seed`` left out).

    >>> row = {"id": "q1", "retrieved": [], "answer": "a", "metrics": {"correct": True},
    ...        "repeats": [{"seed": 7, "answer": "b", "metrics": {"correct": False}}]}
    >>> repeat_row(row, 1)
    {'id': 'q1', 'retrieved': [], 'answer': 'b', 'metrics': {'correct': False}}
    >>> repeat_row(row, 0)["answer"]
    'a'
    """
    if r == 0:
        return {k: v for k, v in row.items() if k != "repeats"}
    entry = row["repeats"][r - 1]
    out = {k: v for k, v in row.items() if k != "repeats" and k not in GENERATION_KEYS}
    for key in INHERITED:
        if key not in entry and key in row:
            out[key] = row[key]
    out.update((k, v) for k, v in entry.items() if k != "seed")
    if "context_ids" in entry and entry["context_ids"] is None:  # the top k of its own
        del out["context_ids"]
    return out


def with_repeats(
    first: Mapping[str, Any], others: Sequence[tuple[int | None, Mapping[str, Any]]]
) -> dict[str, Any]:
    """Repeat 0's row ``first`` with ``repeats``: one entry per ``(seed, row)`` of
    ``others`` (repeats 1 .. R-1, each a whole row of that generation).  An entry holds the
    generation's keys (every key but :data:`QUESTION_KEYS`), its ``retrieved`` and
    ``context_ids`` only where they differ from repeat 0's; :func:`repeat_row` inverts it.

    >>> first = {"id": "q1", "retrieved": [], "answer": "a"}
    >>> row = with_repeats(first, [(5, {"id": "q1", "retrieved": [], "answer": "b"})])
    >>> row["repeats"]
    [{'seed': 5, 'answer': 'b'}]
    >>> repeat_row(row, 1) == {"id": "q1", "retrieved": [], "answer": "b"}
    True
    """
    entries = []
    for seed, row in others:
        entry: dict[str, Any] = {"seed": seed}
        for key, value in row.items():
            if key in QUESTION_KEYS or key == "repeats":
                continue
            if key in INHERITED and key in first and first[key] == value:
                continue
            entry[key] = value
        if "context_ids" in first and "context_ids" not in row:  # its own top k, said
            entry["context_ids"] = None
        entries.append(entry)
    out = dict(first)
    if entries:
        out["repeats"] = entries
    return out


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return float("nan")


class RepeatAccess:
    """Mixin of :class:`~ragaudit.data.saved_run.SavedRun`: its repeats (see the module)."""

    __slots__ = ()
    config: RunSettings
    name: str

    @property
    def repeats(self) -> int:
        """R, the generations stored per question (``config.repeats``; 1 for a run without).

        >>> from ragaudit.data.saved_run import SavedRun
        >>> SavedRun.from_dict({"config": {"k": 1}, "rows": []}).repeats
        1
        """
        value = self.config.get("repeats")
        return 1 if value is None else int(value)

    @property
    def repeat_seeds(self) -> list[int]:
        """The run seed of each repeat, repeat 0 first (``config.repeat_seeds``); a run with
        one generation gives ``[config.seed]``; an empty list when no seed was recorded (an
        imported run).  Each (question, repeat)'s own seed is the ``seed`` of its entry (the
        rule in ``config.repeat_seed_rule``).
        """
        seeds = self.config.get("repeat_seeds")
        if isinstance(seeds, Sequence):
            return [int(s) for s in seeds]
        seed = self.config.get("seed")
        if self.repeats == 1 and isinstance(seed, int) and not isinstance(seed, bool):
            return [seed]
        return []

    def repeat_outcomes(self, name: str) -> np.ndarray:
        """The ``(n_questions, R)`` float matrix of a verdict or metric: row ``i`` is question
        ``ids[i]``, column ``r`` its repeat ``r``; NaN where the repeat has no value (null,
        absent, a failed generation).  ``name`` is a metric of the rows (``correct``,
        ``answered``, ``recall@k``...) or, failing that, a judge verdict (``sufficiency``...);
        booleans are 0/1.

        Raises
        ------
        InputError
            When no repeat of any question has a metric or verdict called ``name``.

        Examples
        --------
        >>> from ragaudit.data.saved_run import SavedRun
        >>> run = SavedRun.from_dict({"config": {"k": 1, "repeats": 2}, "rows": [
        ...     {"id": "q1", "retrieved": [], "metrics": {"correct": True},
        ...      "repeats": [{"seed": 1, "metrics": {"correct": False}}]},
        ...     {"id": "q2", "retrieved": [], "metrics": {"correct": None},
        ...      "repeats": [{"seed": 2, "metrics": {"correct": True}}]}]})
        >>> run.repeat_outcomes("correct")
        array([[ 1.,  0.],
               [nan,  1.]])
        """
        import numpy as np

        from ragaudit.data.saved_run.metrics import canonical_metric_name

        run: SavedRun = self  # type: ignore[assignment]
        key = canonical_metric_name(name)
        metrics = run.column_values("metrics")
        judges = run.column_values("judges")
        entries = run.column_values("repeats") if self.repeats > 1 else [None] * len(metrics)
        found = False
        out = np.full((len(metrics), self.repeats), np.nan)
        for i, (first_metrics, first_judges, rest) in enumerate(
            zip(metrics, judges, entries, strict=True)
        ):
            generations = [{"metrics": first_metrics, "judges": first_judges}, *(rest or ())]
            for r, generation in enumerate(generations[: self.repeats]):
                held = generation.get("metrics") or {}
                source = held if key in held else (generation.get("judges") or {})
                if key in source:
                    found = True
                    out[i, r] = _number(source[key])
        if not found and len(metrics):
            known = sorted({*run.metric_names()})
            raise InputError(
                f"repeat_outcomes: no metric or verdict named {name!r} in run {run.name!r}; "
                f"its metrics are {', '.join(known) or 'none'}"
            )
        return out

    def repeat(self, r: int) -> SavedRun:
        """Repeat ``r`` (0-based) as an ordinary run with one generation per question: the
        questions' own fields, repeat ``r``'s generation, the header without the repeat keys,
        the summary recomputed; named ``NAME.repeatR``.

        >>> from ragaudit.data.saved_run import SavedRun
        >>> run = SavedRun.from_dict({"name": "x", "config": {"k": 1, "repeats": 2}, "rows": [
        ...     {"id": "q1", "retrieved": [], "answer": "a",
        ...      "repeats": [{"seed": 1, "answer": "b"}]}]})
        >>> one = run.repeat(1)
        >>> one.name, one.repeats, one.questions[0].answer
        ('x.repeat1', 1, 'b')
        """
        from ragaudit.data.saved_run.model import SavedRun
        from ragaudit.data.saved_run.summary import summarise_run

        run: SavedRun = self  # type: ignore[assignment]
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < self.repeats:
            raise InputError(
                f"repeat: expected a repeat number from 0 to {self.repeats - 1}, found {r!r}"
            )
        if self.repeats == 1:
            return run
        rows = [repeat_row(row, r) for row in run.rows]
        config = {k: v for k, v in run.config.items() if k not in REPEAT_CONFIG_KEYS}
        one = SavedRun.from_checked({"name": f"{run.name}.repeat{r}", "config": config,
                                     "rows": rows})  # fmt: skip
        return one.replace(summary=summarise_run(one).to_dict())
