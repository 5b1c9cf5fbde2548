"""The metric registry: every retrieval metric ragaudit computes, declared exactly once.

A declaration (:class:`MetricInfo`) says what the metric is called, whether it takes a cutoff
``k``, its aliases, whether it uses graded or binary relevance, whether micro-averaging is
defined for it, what trec_eval calls it, and the formula.  Parsing a user's metric name
(:func:`parse_metric`) and every "valid names are..." message read from this table, so the
list of supported metrics cannot go stale.  The arithmetic lives in
:mod:`ragaudit.metrics.kernels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ragaudit.data.saved_run_metrics import (
    CHUNK_PREFIX,
    METRIC_ALIASES,
    SAVED_RUN_METRICS,
    SavedRunMetric,
)
from ragaudit.exceptions import InputError

__all__ = [
    "EXPLAINABLE",
    "MetricInfo",
    "MetricSpec",
    "get_info",
    "list_metrics",
    "list_saved_run_metrics",
    "parse_metric",
    "resolve_saved_run_metrics",
    "saved_run_metric_name",
]

Cutoff = Literal["required", "optional", "none"]
#: How a metric pools over questions when ``average="micro"``: the mean of the per-question
#: values, or the precision/recall/F1 of the summed counts (relevant retrieved over relevant
#: or over n*k).  None: micro-averaging is not defined.
Micro = Literal["mean", "recall", "precision", "f1"]

#: The metrics ``ragaudit explain`` derives step by step (:mod:`ragaudit.metrics.explain`).
EXPLAINABLE: tuple[str, ...] = ("ndcg", "ap", "context_precision")


@dataclass(frozen=True)
class MetricInfo:
    """The declaration of one metric family.

    Attributes
    ----------
    family : str
        Canonical name without cutoff (``"ndcg"``).
    cutoff : {"required", "optional", "none"}
        Whether the name takes ``@k``.  Without a cutoff an optional-cutoff metric uses the
        whole ranking.
    aliases : tuple of str
        Other accepted spellings (matched case-insensitively).
    graded : bool
        True when grades are used as gains; False when items count as relevant or not
        (grade >= relevance threshold).
    micro : {"mean", "recall", "precision", "f1"} or None
        How the metric pools over questions with ``average="micro"`` (None: not defined).
    trec_eval : str or None
        trec_eval's measure name with a cutoff; ``{k}`` stands for k.  None when trec_eval
        has no equivalent; ``-J`` in front: with trec_eval's judged-documents-only flag.
    trec_eval_full : str or None
        trec_eval's measure name without a cutoff (the whole ranking).
    formula : str
        Per-question definition.
    description : str
        One line for tables and ``--help``.
    reference : str
        Where the definition comes from.
    judged : bool, default False
        True for the measures of incomplete labels: the kernel needs to know which ranked
        items carry a label (unjudged is not the same as judged non-relevant).
    full_depth : bool, default False
        True when the value at cutoff k depends on items ranked below k (condensed lists
        remove unjudged items first, so items below k move up).
    """

    family: str
    cutoff: Cutoff
    aliases: tuple[str, ...]
    graded: bool
    micro: Micro | None
    trec_eval: str | None
    trec_eval_full: str | None
    formula: str
    description: str
    reference: str
    judged: bool = False
    full_depth: bool = False

    @property
    def pattern(self) -> str:
        """The name as users write it (``"ndcg@k"``, ``"mrr[@k]"``, ``"r_precision"``)."""
        suffix = {"required": "@k", "optional": "[@k]", "none": ""}[self.cutoff]
        return self.family + suffix


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


_REGISTRY: tuple[MetricInfo, ...] = (
    MetricInfo(
        family="hit",
        cutoff="required",
        aliases=("success", "hit_rate", "hitrate"),
        graded=False,
        micro="mean",
        trec_eval="success_{k}",
        trec_eval_full=None,
        formula="1 if any relevant item is in the top k, else 0",
        description="Hit rate: did anything relevant make the top k?",
        reference="trec_eval success_k",
    ),
    MetricInfo(
        family="recall",
        cutoff="required",
        aliases=("r",),
        graded=False,
        micro="recall",
        trec_eval="recall_{k}",
        trec_eval_full=None,
        formula="|relevant in top k| / |relevant|",
        description="Share of the labelled relevant items found in the top k.",
        reference="trec_eval recall_k",
    ),
    MetricInfo(
        family="precision",
        cutoff="required",
        aliases=("p",),
        graded=False,
        micro="precision",
        trec_eval="P_{k}",
        trec_eval_full=None,
        formula="|relevant in top k| / k   (k, even when fewer items were retrieved)",
        description="Share of the top k that is relevant.",
        reference="trec_eval P_k",
    ),
    MetricInfo(
        family="f1",
        cutoff="required",
        aliases=("f",),
        graded=False,
        micro="f1",
        trec_eval=None,
        trec_eval_full=None,
        formula="2 P@k R@k / (P@k + R@k), 0 when both are 0",
        description="Harmonic mean of precision@k and recall@k.",
        reference="van Rijsbergen (1979), Information Retrieval, ch. 7",
    ),
    MetricInfo(
        family="mrr",
        cutoff="optional",
        aliases=("rr", "recip_rank", "reciprocal_rank"),
        graded=False,
        micro=None,
        trec_eval=None,
        trec_eval_full="recip_rank",
        formula="1 / rank of the first relevant item (within the top k), 0 if none",
        description="How soon the first relevant item appears.",
        reference="trec_eval recip_rank; Voorhees (1999), TREC-8 QA track",
    ),
    MetricInfo(
        family="map",
        cutoff="optional",
        aliases=("ap", "average_precision"),
        graded=False,
        micro=None,
        trec_eval="map_cut_{k}",
        trec_eval_full="map",
        formula="sum over relevant ranks i <= k of precision@i, divided by |relevant|",
        description="Average precision: precision at each relevant rank, over all relevant.",
        reference="trec_eval map / map_cut_k",
    ),
    MetricInfo(
        family="ndcg",
        cutoff="optional",
        aliases=(),
        graded=True,
        micro=None,
        trec_eval="ndcg_cut_{k}",
        trec_eval_full="ndcg",
        formula="DCG@k / IDCG@k with gain = grade, discount 1/log2(i+1); 0 when IDCG = 0",
        description="Normalised discounted cumulative gain, linear gain (trec_eval's).",
        reference="Järvelin & Kekäläinen (2002); trec_eval ndcg_cut_k",
    ),
    MetricInfo(
        family="ndcg_exp",
        cutoff="optional",
        aliases=("ndcg_burges",),
        graded=True,
        micro=None,
        trec_eval=None,
        trec_eval_full=None,
        formula="DCG@k / IDCG@k with gain = 2^grade - 1, discount 1/log2(i+1)",
        description="nDCG with exponential gain (rewards top grades more).",
        reference="Burges et al. (2005), Learning to rank using gradient descent",
    ),
    MetricInfo(
        family="dcg",
        cutoff="optional",
        aliases=(),
        graded=True,
        micro=None,
        trec_eval=None,
        trec_eval_full=None,
        formula="sum over i <= k of grade_i / log2(i+1)",
        description="Discounted cumulative gain (not normalised; linear gain).",
        reference="Järvelin & Kekäläinen (2002)",
    ),
    MetricInfo(
        family="r_precision",
        cutoff="none",
        aliases=("rprec", "r-precision", "rprecision"),
        graded=False,
        micro=None,
        trec_eval=None,
        trec_eval_full="Rprec",
        formula="|relevant in top R| / R, where R = |relevant|",
        description="Precision at the depth equal to the number of relevant items.",
        reference="trec_eval Rprec",
    ),
    MetricInfo(
        family="context_precision",
        cutoff="required",
        aliases=("ctxp", "context_precision_at"),
        graded=False,
        micro=None,
        trec_eval=None,
        trec_eval_full=None,
        formula="sum over i <= k of precision@i * rel_i / |relevant in top k|; 0 when none",
        description="RAGAS context precision: are the relevant items ranked first?",
        reference="Es et al. (2023), RAGAS; ragas ContextPrecision",
    ),
    # Measures for incomplete labels (see ragaudit.metrics.incomplete and the metrics guide).
    MetricInfo(
        family="judged",
        cutoff="optional",
        aliases=("judged_at", "judged_rate"),
        graded=False,
        micro="mean",
        trec_eval=None,
        trec_eval_full=None,
        formula="|labelled items in the top k| / min(k, |ranking|); 0 for an empty ranking",
        description="Share of the top k that carries a label (of any grade).",
        reference="ir_measures Judged@k (MacAvaney et al., OpenNIR)",
        judged=True,
    ),
    MetricInfo(
        family="bpref",
        cutoff="none",
        aliases=(),
        graded=False,
        micro=None,
        trec_eval=None,
        trec_eval_full="bpref",
        formula="(1/R) sum over judged relevant retrieved r of 1 - min(n_r, R) / min(N, R); "
        "n_r = judged non-relevant above r, N = non-relevant labels; unjudged skipped",
        description="Binary preference: judged relevant above judged non-relevant.",
        reference="Buckley & Voorhees (2004), SIGIR; trec_eval bpref",
        judged=True,
    ),
    MetricInfo(
        family="infap",
        cutoff="none",
        aliases=("inf_ap", "inferred_ap"),
        graded=False,
        micro=None,
        trec_eval=None,
        trec_eval_full="infAP",
        formula="(1/R) sum over judged relevant at rank j+1 of 1/(j+1) + j/(j+1) * "
        "(r-1+n)/j * (r-1+eps)/(r-1+n+2eps); 1 at rank 1; eps = 1e-5",
        description="Inferred AP: AP estimated from the judged items, unjudged above as zeros.",
        reference="Yilmaz & Aslam (2006), CIKM; trec_eval infAP",
        judged=True,
    ),
    MetricInfo(
        family="ndcg_condensed",
        cutoff="optional",
        aliases=("ndcg'", "ndcg_prime", "condensed_ndcg", "ndcg_j"),
        graded=True,
        micro=None,
        trec_eval="-J ndcg_cut_{k}",
        trec_eval_full="-J ndcg",
        formula="nDCG@k of the ranking with its unjudged items removed (condensed list)",
        description="nDCG': nDCG of the judged items only (Pyserini -remove-unjudged).",
        reference="Sakai (2007), SIGIR; trec_eval -J ndcg_cut_k",
        judged=True,
        full_depth=True,
    ),
    MetricInfo(
        family="map_condensed",
        cutoff="optional",
        aliases=("ap'", "map'", "ap_prime", "map_prime", "condensed_ap", "map_j"),
        graded=False,
        micro=None,
        trec_eval="-J map_cut_{k}",
        trec_eval_full="-J map",
        formula="AP@k of the ranking with its unjudged items removed (condensed list)",
        description="AP': average precision of the judged items only (trec_eval -J).",
        reference="Sakai (2007), SIGIR; trec_eval -J map",
        judged=True,
        full_depth=True,
    ),
)

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
        raise InputError(f"unknown metric {name!r}; valid metrics are: {_valid_names()}")
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
    :mod:`ragaudit.data.saved_run_metrics`, with its range and aggregation).

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
    ragaudit.exceptions.InputError: unknown metric 'recal@k'; valid metrics are: hit@k, ...
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
            raise InputError(
                f"unknown metric {name!r}; valid metrics are: {declared}"
                + (f"; and in these runs: {held}" if held else "")
            )
        out.append(canonical)
    return list(dict.fromkeys(out))
