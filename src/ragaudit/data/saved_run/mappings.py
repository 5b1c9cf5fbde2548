"""The read-only mappings of a saved run: the judges' verdicts of one question
(:class:`Judgments`) and the run's settings (:class:`RunSettings`), with the helpers that
freeze and thaw JSON values."""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from types import MappingProxyType
from typing import Any

from ragaudit.data.saved_run.metrics import JUDGES_OFFLINE_LLM

__all__ = ["Judgments", "KeyedValues", "RunSettings"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


def _plain(value: Any) -> Any:
    """A deep, JSON-ready copy (read-only mappings become dicts, tuples lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return copy.copy(value)


class KeyedValues(Mapping[str, Any]):
    """A read-only mapping whose keys, and their order, are shared by many mappings.

    Every question of a run has ``metrics`` (and ``judges``) with the same keys: held as one
    shared ``{key: position}`` index and a tuple of values, a question's ten metrics take
    about 170 bytes instead of the 410 of a dict behind a ``MappingProxyType``.

    >>> index = {"hit@k": 0, "correct": 1}
    >>> a, b = KeyedValues(index, (1.0, True)), KeyedValues(index, (0.0, None))
    >>> a["correct"], b.get("hit@k"), list(b), a == {"hit@k": 1.0, "correct": True}, a
    (True, 0.0, ['hit@k', 'correct'], True, {'hit@k': 1.0, 'correct': True})
    """

    __slots__ = ("_index", "_values")

    def __init__(self, index: Mapping[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[self._index[key]]

    def _like(self, values: Iterable[tuple[Any, ...]]) -> list[KeyedValues]:
        """One mapping per tuple of ``values``, each with this mapping's keys: the slots are
        set across the batch by ``map`` in C, not by ``__init__`` once per question.

        >>> one = KeyedValues({"a": 0}, (1,))
        >>> one._like([(2,), (3,)]) == [{"a": 2}, {"a": 3}]
        True
        """
        values = list(values)
        made = list(map(object.__new__, repeat(KeyedValues, len(values))))
        deque(map(_SET_INDEX, made, repeat(self._index)), maxlen=0)
        deque(map(_SET_VALUES, made, values), maxlen=0)
        return made

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        i = self._index.get(key)
        return default if i is None else self._values[i]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(dict(zip(self._index, self._values, strict=True)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (KeyedValues, (dict(self._index), self._values))


def _tri(value: Any) -> bool | None:
    return None if value is None else bool(value)


@dataclass(frozen=True, slots=True)
class _FrozenMapping(Mapping[str, Any]):
    """A read-only mapping over ``data`` (copied and frozen on construction)."""

    data: Mapping[str, Any] = field(default_factory=_empty)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _frozen(self.data))

    @classmethod
    def _adopt_all(cls, mappings: list[Mapping[str, Any]]) -> list[Any]:
        """Wrap each of ``mappings`` (read-only, held by nobody else: no copy), the slot set
        by ``map`` in C.

        >>> Judgments._adopt_all([{"correct": True}])[0].correct
        True
        """
        made = list(map(object.__new__, repeat(cls, len(mappings))))
        deque(map(_SET_DATA, made, mappings), maxlen=0)
        return made

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` (the data's own ``get``: no KeyError raised
        and caught per question, as ``Mapping.get`` does)."""
        return self.data.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        out: dict[str, Any] = _plain(self.data)
        return out


# The slot setters the batch constructors map over (member descriptors: set in C).
_SET_INDEX = vars(KeyedValues)["_index"].__set__
_SET_VALUES = vars(KeyedValues)["_values"].__set__
_SET_DATA = vars(_FrozenMapping)["data"].__set__


@dataclass(frozen=True, slots=True)
class Judgments(_FrozenMapping):
    """The raw judge outputs of one question (``rows[i].judges``), read-only.

    A mapping of the keys as written, plus typed access to the verdicts ragaudit reads
    (``None`` = the judge did not decide).

    Examples
    --------
    >>> v = Judgments({"abstained": False, "correct": 1, "judge_error": "faith: timeout"})
    >>> v.answered, v.correct, sorted(v.failed)
    (True, True, ['faith'])
    """

    @property
    def abstained(self) -> bool | None:
        """The model refused to answer."""
        return _tri(self.data.get("abstained"))

    @property
    def answered(self) -> bool | None:
        """``not abstained``."""
        abstained = self.abstained
        return None if abstained is None else not abstained

    @property
    def correct(self) -> bool | None:
        """The answer is right (for an unanswerable question: the model abstained)."""
        return _tri(self.data.get("correct"))

    @property
    def sufficiency(self) -> bool | None:
        """The context suffices to answer (LLM judge)."""
        return _tri(self.data.get("sufficiency"))

    @property
    def evidence_in_context(self) -> bool | None:
        """The context holds the reference keywords (offline judge)."""
        return _tri(self.data.get("evidence_in_context"))

    @property
    def reasons(self) -> dict[str, str]:
        """Verdict -> why it is None although it applies (``judges.reasons``), e.g.
        ``{"correct": "no checkable claim in the reference ..."}``; empty when all decided.

        >>> Judgments({"correct": None, "reasons": {"correct": "no reference answer"}}
        ...               ).reasons
        {'correct': 'no reference answer'}
        """
        raw = self.data.get("reasons")
        if not isinstance(raw, Mapping):
            return {}
        return {str(k): str(v) for k, v in raw.items()}

    @property
    def failed(self) -> frozenset[str]:
        """Judges that failed on this question.

        The keys of ``judge_errors``; otherwise the names parsed from the ``"judge: reason;
        ..."`` string of ``judge_error`` (``"?"`` when no name can be read).
        """
        named = self.data.get("judge_errors")
        if isinstance(named, Mapping) and named:
            return frozenset(str(name) for name in named)
        text = self.data.get("judge_error")
        if not text:
            return frozenset()
        parts = (part.split(":", 1)[0].strip() for part in str(text).split(";") if ":" in part)
        names = {n for n in parts if n and " " not in n}
        return frozenset(names or {"?"})


@dataclass(frozen=True, slots=True)
class RunSettings(_FrozenMapping):
    """A saved run's ``config``: a read-only mapping in file order, with typed accessors.

    ``k`` is required (an integer >= 1); every other key is optional.

    >>> cfg = RunSettings({"k": 3, "judges": "offline+llm", "seed": 0})
    >>> cfg.k, cfg["seed"], cfg.judged_by_llm, cfg.retrieval_depth
    (3, 0, True, None)
    """

    @property
    def k(self) -> int:
        """The cut-off the run was made at."""
        return int(self.data["k"])

    @property
    def retrieval_depth(self) -> int | None:
        """How many chunks were retrieved per question (None when not recorded)."""
        depth = self.data.get("retrieval_depth")
        return None if depth is None else int(depth)

    @property
    def seed(self) -> int | None:
        """The pipeline's seed."""
        return self.data.get("seed")

    @property
    def judges(self) -> str | None:
        """``"offline"`` or ``"offline+llm"`` (:data:`JUDGES_OFFLINE_LLM`)."""
        return self.data.get("judges")

    @property
    def judged_by_llm(self) -> bool:
        """Whether the LLM judges decided the verdicts."""
        return self.data.get("judges") == JUDGES_OFFLINE_LLM
