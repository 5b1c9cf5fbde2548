"""The metric registry: a user's metric names looked up in the one table of declarations.

Every metric is declared once, as a :class:`MetricInfo` in
:mod:`ragaudit.metrics.declarations`.  Parsing a user's metric name (:func:`parse_metric`),
the names a saved run stores (:func:`saved_run_metric_name`) and every "valid names are..."
message read from that table, so the list of supported metrics cannot go stale.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragaudit.data.saved_run.metrics import (
    CHUNK_PREFIX,
    METRIC_ALIASES,
    SAVED_RUN_METRICS,
    SavedRunMetric,
)
from ragaudit.exceptions import InputError
from ragaudit.metrics.declarations import DECLARED, MetricInfo

__all__ = [
    "EXPLAINABLE",
    "MetricInfo",
    "MetricSpec",
    "did_you_mean",
    "get_info",
    "list_metrics",
    "list_saved_run_metrics",
    "parse_metric",
    "resolve_saved_run_metrics",
    "saved_run_metric_name",
]

#: The metrics ``ragaudit explain`` derives step by step (:mod:`ragaudit.metrics.explain`).
EXPLAINABLE: tuple[str, ...] = ("ndcg", "ap", "context_precision")


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: a family from the registry plus its cutoff.

    Attributes
    ----------
    family : str
        Canonical family name (``"ndcg"``).
    k : int or None
        The cutoff; None means the whole ranking.

    Examples
    --------
    >>> spec = parse_metric("nDCG@10")
    >>> spec.name, spec.family, spec.k, spec.trec_eval
    ('ndcg@10', 'ndcg', 10, 'ndcg_cut_10')
    """

    family: str
    k: int | None

    @property
    def name(self) -> str:
        """Canonical name (``"ndcg@10"``, ``"map"``)."""
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def info(self) -> MetricInfo:
        """The registry declaration of this metric's family."""
        return _BY_FAMILY[self.family]

    @property
    def trec_eval(self) -> str | None:
        """trec_eval's name for exactly this metric, or None when it has none."""
        info = self.info
        if self.k is None:
            return info.trec_eval_full
        return None if info.trec_eval is None else info.trec_eval.format(k=self.k)


_REGISTRY = DECLARED
_BY_FAMILY: dict[str, MetricInfo] = {info.family: info for info in _REGISTRY}
_BY_ALIAS: dict[str, str] = {}
for _info in _REGISTRY:
    _BY_ALIAS[_info.family] = _info.family
    for _alias in _info.aliases:
        _BY_ALIAS[_alias] = _info.family


def list_metrics() -> tuple[MetricInfo, ...]:
    """Every declared metric family, in a stable order.

    Examples
    --------
    >>> [info.pattern for info in list_metrics()][:3]
    ['hit@k', 'recall@k', 'precision@k']
    """
    return _REGISTRY


def get_info(family: str) -> MetricInfo:
    """The declaration of ``family`` (a canonical family name)."""
    return _BY_FAMILY[family]


def _valid_names() -> str:
    return ", ".join(info.pattern for info in _REGISTRY)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"did you mean 'x'? "`` for the candidate closest to ``name`` (case-insensitive, with
    or without its ``@cutoff``; :func:`difflib.get_close_matches`, ratio >= 0.6), else ``""``.

    >>> did_you_mean("correctness", ["correct", "recall@k"])
    "did you mean 'correct'? "
    >>> did_you_mean("precison@k", ["precision@k"]), did_you_mean("rouge", ["correct"])
    ("did you mean 'precision@k'? ", '')
    """
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), candidate)
        by_lower.setdefault(candidate.lower().partition("@")[0], candidate)
    text = name.strip().lower()
    for probe in (text, text.partition("@")[0]):
        near = difflib.get_close_matches(probe, list(by_lower), n=1, cutoff=0.6)
        if near:
            return f"did you mean {by_lower[near[0]]!r}? "
    return ""


def parse_metric(name: str) -> MetricSpec:
    """Parse a metric name such as ``"nDCG@10"``, ``"P@5"`` or ``"map"``.

    Names are case-insensitive; the part before ``@`` may be a canonical family name or an
    alias (``P``, ``R``, ``RR``, ``AP``, ``success``, ``Rprec``...), the part after it is the
    cutoff ``k >= 1``.

    Parameters
    ----------
    name : str
        The metric as a user wrote it.

    Returns
    -------
    MetricSpec

    Raises
    ------
    InputError
        For an unknown name (the message lists the valid names), a cutoff that is not an
        integer >= 1, a missing required cutoff, or a cutoff on a metric that takes none.

    Examples
    --------
    >>> parse_metric("P@5").name, parse_metric("success@3").name, parse_metric("AP").name
    ('precision@5', 'hit@3', 'map')
    >>> parse_metric("rr@10").name
    'mrr@10'
    """
    if not isinstance(name, str):
        raise InputError(f"metric: expected a name such as 'ndcg@10', found {name!r}")
    text = name.strip()
    base, sep, cutoff_text = text.partition("@")
    family = _BY_ALIAS.get(base.strip().lower())
    if family is None:
        near = did_you_mean(name, [info.pattern for info in _REGISTRY] + list(_BY_ALIAS))
        raise InputError(f"unknown metric {name!r}; {near}valid metrics are: {_valid_names()}")
    info = _BY_FAMILY[family]
    k: int | None = None
    if sep:
        if info.cutoff == "none":
            raise InputError(
                f"metric {name!r}: {info.family} takes no cutoff, found '@{cutoff_text}'; "
                f"write {info.family}"
            )
        digits = cutoff_text.strip()
        unsigned = digits.removeprefix("-")
        if not (unsigned.isascii() and unsigned.isdigit()):  # int() takes '٣', '+5', '1_0'
            raise InputError(
                f"metric {name!r}: expected an integer cutoff after '@', found {cutoff_text!r}"
            )
        k = int(digits)
        if k < 1:
            raise InputError(f"metric {name!r}: expected a cutoff k >= 1, found {k}")
    elif info.cutoff == "required":
        raise InputError(
            f"metric {name!r} needs a cutoff: write {info.family}@k, e.g. {info.family}@5"
        )
    return MetricSpec(family=family, k=k)


# ----------------------------------------------------------------------------- saved-run metrics


def list_saved_run_metrics() -> tuple[SavedRunMetric, ...]:
    """Every per-question metric a saved run can hold (declared in
    :mod:`ragaudit.data.saved_run.metrics`, with its range and aggregation).

    >>> [m.name for m in list_saved_run_metrics()][:3]
    ['hit@k', 'recall@k', 'precision@k']
    """
    return tuple(SAVED_RUN_METRICS.values())


def saved_run_metric_name(name: str) -> str | None:
    """The name a saved run stores for a metric spelled ``name``, or None if unknown.

    Accepts the spellings of :func:`parse_metric` with the literal cutoff ``@k`` (the run's
    k) or a number, the ``chunk_`` prefix, and older names (``citation_acc``).

    Examples
    --------
    >>> saved_run_metric_name("nDCG@k"), saved_run_metric_name("chunk_R@k")
    ('ndcg@k', 'chunk_recall@k')
    >>> saved_run_metric_name("P@5"), saved_run_metric_name("citation_acc")
    ('precision@5', 'citation_accuracy')
    >>> saved_run_metric_name("rouge_l") is None
    True
    """
    text = name.strip()
    text = METRIC_ALIASES.get(text, text)
    if text in SAVED_RUN_METRICS:
        return text
    prefix = CHUNK_PREFIX if text.startswith(CHUNK_PREFIX) else ""
    base, sep, cutoff = text[len(prefix) :].partition("@")
    family = _BY_ALIAS.get(base.strip().lower())
    if family is None:
        return None
    if sep and cutoff.strip().lower() == "k":
        candidate = f"{prefix}{family}@k"
        return candidate if candidate in SAVED_RUN_METRICS else None
    try:
        return prefix + parse_metric(text[len(prefix) :]).name
    except InputError:
        return None


def resolve_saved_run_metrics(names: Iterable[str], available: Sequence[str]) -> list[str]:
    """Map user-typed metric names to the names present in saved runs (``available``).

    A name is kept when a run holds it as typed (a pipeline's own ``rouge_l``) or under its
    canonical spelling (:func:`saved_run_metric_name`).

    Raises
    ------
    InputError
        For a name neither declared nor present; the message lists the declared saved-run
        metrics and the metrics the runs hold.

    Examples
    --------
    >>> resolve_saved_run_metrics(["R@k", "citation_acc", "rouge_l"],
    ...                           ["recall@k", "citation_accuracy", "rouge_l"])
    ['recall@k', 'citation_accuracy', 'rouge_l']
    >>> resolve_saved_run_metrics(["recal@k"], ["recall@k"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: unknown metric 'recal@k'; did you mean 'recall@k'? valid ...
    """
    present = set(available)
    out: list[str] = []
    for name in names:
        if name in present:
            out.append(name)
            continue
        canonical = saved_run_metric_name(name)
        if canonical is None:
            declared = ", ".join(SAVED_RUN_METRICS)
            held = ", ".join(m for m in available if m not in SAVED_RUN_METRICS)
            near = did_you_mean(name, [*available, *SAVED_RUN_METRICS])
            raise InputError(
                f"unknown metric {name!r}; {near}valid metrics are: {declared}"
                + (f"; and in these runs: {held}" if held else "")
            )
        out.append(canonical)
    return list(dict.fromkeys(out))
