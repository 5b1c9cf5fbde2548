"""What differs between two runs' configurations, and what a comparison of them can conclude.

A paired comparison measures the effect of *everything* that differs between two runs.  When
one design variable differs (k, say), the difference of a metric is that variable's effect on
this golden set.  When two differ (k and the chunk size), it is their joint effect: the data
cannot say how much is due to either, nor whether one helped while the other hurt.  When the
corpus or the golden set differs, the questions are not the same experiment at all, and pairing
them by id compares answers to different documents or different reference answers.

:func:`config_differences` flattens both saved runs' ``config`` (nested keys joined with
``.``), lists every field whose value differs, and files each field under one *variable*:

=====================  ==============================================================
variable               config fields
=====================  ==============================================================
``k``                  ``k``
``chunking``           ``chunker``, ``chunk_size``, ``chunk_overlap``
``retriever``          ``retriever``, ``retrieval_depth`` (unless both runs derive
                       it from k), ``embedding_model``, ``run_file``,
                       ``run_file_expansion``
``generator``          ``generator``, ``llm_generator.*`` (model, prompt version, ...)
``judges``             ``judges``, ``llm_judges.*`` (judge model, prompt versions, ...)
``seed``               ``seed``
``corpus`` (data)      ``corpus_sha256``
``golden set`` (data)  ``golden_sha256``
=====================  ==============================================================

Bookkeeping fields (``ragaudit_version``, ``imported_from``, ``context_match.*``) are listed
but are no design variable; any other field is a design variable of its own name.  The judges
are the measuring instrument: when they differ, a change in a judged metric may be the
instrument's, which the result says too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.data.per_question_files import saved_run_or_none
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError

__all__ = [
    "ConfigDifference",
    "ConfigDifferences",
    "check_same_data",
    "comparison_differences",
    "config_differences",
]

#: config field (or dotted prefix) -> the design variable it belongs to
_VARIABLE_OF: dict[str, str] = {
    "k": "k",
    "chunker": "chunking",
    "chunk_size": "chunking",
    "chunk_overlap": "chunking",
    "retriever": "retriever",
    "retrieval_depth": "retriever",
    "embedding_model": "retriever",
    "run_file": "retriever",
    "run_file_expansion": "retriever",
    "generator": "generator",
    "llm_generator": "generator",
    "judges": "judges",
    "llm_judges": "judges",
    "seed": "seed",
    "corpus_sha256": "corpus",
    "golden_sha256": "golden set",
}
_DATA = ("corpus", "golden set")
_BOOKKEEPING = ("ragaudit_version", "imported_from", "context_match")
_MISSING = "(not set)"


@dataclass(frozen=True)
class ConfigDifference:
    """One config field whose value differs between run A and run B.

    Attributes
    ----------
    field : str
        Dotted path in ``config`` (``llm_generator.model``).
    a, b : Any
        The values (``"(not set)"`` where a run lacks the field).
    variable : str or None
        The design or data variable it belongs to; None for bookkeeping.
    """

    field: str
    a: Any
    b: Any
    variable: str | None


@dataclass(frozen=True)
class ConfigDifferences:
    """Every difference between two runs' configurations (:func:`config_differences`).

    Attributes
    ----------
    a_name, b_name : str
    differences : tuple of ConfigDifference
        In the order of run A's config, then fields only B has.
    """

    a_name: str
    b_name: str
    differences: tuple[ConfigDifference, ...]

    @property
    def design_variables(self) -> tuple[str, ...]:
        """The design variables that differ (not data, not bookkeeping), in order."""
        found = (d.variable for d in self.differences if d.variable and d.variable not in _DATA)
        return tuple(dict.fromkeys(found))

    @property
    def data_variables(self) -> tuple[str, ...]:
        """``"corpus"`` and/or ``"golden set"`` when their fingerprints differ."""
        return tuple(dict.fromkeys(d.variable for d in self.differences if d.variable in _DATA))

    @property
    def confounded(self) -> bool:
        """More than one design variable differs: no effect can be attributed to one of them."""
        return len(self.design_variables) > 1

    @property
    def judges_differ(self) -> bool:
        """The judges (the measuring instrument of judged metrics) differ."""
        return "judges" in self.design_variables

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {
            "a": self.a_name,
            "b": self.b_name,
            "differences": [
                {"field": d.field, "a": d.a, "b": d.b, "variable": d.variable}
                for d in self.differences
            ],
            "design_variables": list(self.design_variables),
            "data_variables": list(self.data_variables),
            "confounded": self.confounded,
        }


def _flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = list(value) if isinstance(value, tuple) else value
    return flat


def _variable(field: str) -> str | None:
    head = field.split(".", 1)[0]
    if head in _BOOKKEEPING:
        return None
    return _VARIABLE_OF.get(field, _VARIABLE_OF.get(head, head))


def config_differences(a: SavedRun, b: SavedRun) -> ConfigDifferences:
    """The config fields that differ between saved runs ``a`` and ``b``, filed by variable.

    Parameters
    ----------
    a, b : SavedRun

    Returns
    -------
    ConfigDifferences
        ``design_variables`` names what the comparison measures the joint effect of;
        ``confounded`` is True when that is more than one; ``data_variables`` is non-empty when
        the corpus or the golden set differ.

    Examples
    --------
    >>> def run(name, **config):
    ...     return SavedRun.from_dict({"name": name, "config": config, "rows": []})
    >>> diff = config_differences(run("a", k=3, chunk_size=800, seed=0),
    ...                           run("b", k=8, chunk_size=400, seed=0))
    >>> [(d.field, d.a, d.b) for d in diff.differences]
    [('k', 3, 8), ('chunk_size', 800, 400)]
    >>> diff.design_variables, diff.confounded
    (('k', 'chunking'), True)
    >>> config_differences(run("a", k=3), run("b", k=6)).confounded
    False
    """
    first, second = _flatten(a.config.to_dict()), _flatten(b.config.to_dict())
    fields = list(first) + [f for f in second if f not in first]
    values = {f: (first.get(f, _MISSING), second.get(f, _MISSING)) for f in fields}
    derived = _depth_follows_k(first) and _depth_follows_k(second)
    differences = tuple(
        ConfigDifference(f, va, vb, "k" if f == "retrieval_depth" and derived else _variable(f))
        for f, (va, vb) in values.items()
        if va != vb
    )
    return ConfigDifferences(a.name, b.name, differences)


def _depth_follows_k(config: Mapping[str, Any]) -> bool:
    """The retrieval depth was derived from k (the harness's ``max(20, k)``, or ``k`` for an
    import or a replay), not set on its own: a change of it is a change of k."""
    k, depth = config.get("k"), config.get("retrieval_depth")
    return isinstance(k, int) and depth in (k, max(20, k))


def check_same_data(diff: ConfigDifferences, allow_different_data: bool = False) -> None:
    """Refuse (:class:`InputError`) a comparison whose runs read another corpus or golden set.

    Pairing questions by id is only an experiment when both runs answered the same questions
    against the same documents: otherwise each pair compares answers to different evidence or
    different reference answers, and the difference measures the data as much as the system.

    >>> def run(name, **config):
    ...     return SavedRun.from_dict({"name": name, "config": config, "rows": []})
    >>> check_same_data(config_differences(run("a", k=1, golden_sha256="1"),
    ...                                    run("b", k=1, golden_sha256="2")))
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: a vs b: the golden set differs (golden_sha256 1 vs 2): the questions are not the same experiment, so a paired comparison measures the data as much as the system; pass --allow-different-data (allow_different_data=True) to compare anyway
    """  # noqa: E501
    if allow_different_data or not diff.data_variables:
        return
    fields = ", ".join(
        f"{d.field} {_short(d.a)} vs {_short(d.b)}"
        for d in diff.differences
        if d.variable in diff.data_variables
    )
    raise InputError(
        f"{diff.a_name} vs {diff.b_name}: the {' and the '.join(diff.data_variables)} "
        f"differ{'s' if len(diff.data_variables) == 1 else ''} ({fields}): the questions are "
        "not the same experiment, so a paired comparison measures the data as much as the "
        "system; pass --allow-different-data (allow_different_data=True) to compare anyway"
    )


def _short(value: Any) -> str:
    """A fingerprint's first 12 hex digits are enough to tell two apart."""
    text = str(value)
    return text[:12] if len(text) == 64 else text


def comparison_differences(
    run_a: Any, run_b: Any, *, allow_different_data: bool = False
) -> ConfigDifferences | None:
    """The :class:`ConfigDifferences` of two compared runs when both are saved runs (objects or
    files), else None; refuses different data unless ``allow_different_data``.

    The one place ``ragaudit.compare_runs``, ``ragaudit compare`` and ``assert_not_worse``
    learn what differs between the runs they compare.

    >>> def run(name, **config):
    ...     return SavedRun.from_dict({"name": name, "config": config, "rows": []})
    >>> comparison_differences(run("a", k=3), run("b", k=6)).design_variables
    ('k',)
    >>> comparison_differences(run("a", k=3), {"q1": {"c": 1.0}}) is None
    True
    """
    first, second = saved_run_or_none(run_a), saved_run_or_none(run_b)
    if first is None or second is None:
        return None
    diff = config_differences(first, second)
    check_same_data(diff, allow_different_data)
    return diff
