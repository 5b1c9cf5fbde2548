"""The declarations of every retrieval metric ragaudit computes: one :class:`MetricInfo` each.

A declaration says what the metric is called, whether it takes a cutoff ``k``, its aliases,
whether it uses graded or binary relevance, whether micro-averaging is defined for it, what
trec_eval calls it, and the formula (as ir_measures declares its measures).  This table is the
one list of supported metrics: :mod:`ragaudit.metrics.registry` parses names against it and
every "valid names are..." message reads it.  The arithmetic lives in
:mod:`ragaudit.metrics.kernels` and :mod:`ragaudit.metrics.incomplete`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DECLARED", "Cutoff", "MetricInfo", "Micro"]

Cutoff = Literal["required", "optional", "none"]
#: How a metric pools over questions when ``average="micro"``: the mean of the per-question
#: values, or the precision/recall/F1 of the summed counts (relevant retrieved over relevant
#: or over n*k).  None: micro-averaging is not defined.
Micro = Literal["mean", "recall", "precision", "f1"]


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


#: Every metric family, in the order tables and messages list them.
DECLARED: tuple[MetricInfo, ...] = (
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
