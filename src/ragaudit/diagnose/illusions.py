"""Metric illusions: small cases where two systems tie on one metric and differ on another.

Each case is a handful of hand-made rankings over items ``A, B, C`` (relevant) and
``X, Y, Z, ...`` (distractors).  Nothing is hard-coded: every number is computed live by
:func:`ragaudit.metrics.evaluate` on :class:`~ragaudit.data.Qrels` / :class:`~ragaudit.data.Run`
objects built from the definitions below (one question per system), and the nDCG / AP
derivation of case 5 is cross-checked against the engine.  No model, no randomness: the output
is byte-identical on every run.

The seven cases:

1. identical recall and precision, different rank metrics (relevant items first, middle, last);
2. identical MRR = 1 with one third of the evidence;
3. identical hit rate, one of them a fluke;
4. the cut-off ``k`` trades recall for precision;
5. nDCG and AP derived on a whiteboard;
6. binary labels tie two systems that graded labels separate;
7. the labels came from one system: nDCG prefers it, nDCG' and bpref the other
   (:mod:`ragaudit.diagnose.illusions_unjudged`).

Then :data:`BLIND_SPOTS` says, for each metric, what it answers and what it cannot see.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.data import Qrels, Run
from ragaudit.diagnose.illusion_types import (
    CaseTable,
    Cell,
    EngineCheck,
    IllusionCase,
    TextBlock,
)
from ragaudit.diagnose.illusions_unjudged import unjudged_case
from ragaudit.metrics.explain import explain_ap, explain_ndcg

EvaluateFn = Callable[..., Any]

__all__ = [
    "BLIND_SPOTS",
    "BlindSpot",
    "CaseTable",
    "EngineCheck",
    "IllusionCase",
    "IllusionsReport",
    "TextBlock",
    "compute_illusions",
]


@dataclass(frozen=True)
class BlindSpot:
    """What one metric answers and what it is structurally unable to see."""

    metric: str
    answers: str
    blind_to: str


BLIND_SPOTS: tuple[BlindSpot, ...] = (
    BlindSpot("hit@k", "anything relevant in the top k?", "order; how much evidence was found"),
    BlindSpot(
        "recall@k",
        "what share of the relevant items is in the top k?",
        "order; how much noise came along",
    ),
    BlindSpot(
        "precision@k",
        "what share of the top k is relevant?",
        "order; relevant items nobody labelled",
    ),
    BlindSpot("MRR", "how early is the first relevant item?", "everything after the first hit"),
    BlindSpot(
        "MAP",
        "how high are all the relevant items ranked?",
        "grades; an unlabelled relevant item is a miss",
    ),
    BlindSpot(
        "nDCG@k",
        "how close is the order to the ideal one?",
        "little extra unless labels are graded",
    ),
    BlindSpot(
        "context precision@k",
        "are the retrieved relevant items near the top?",
        "relevant items outside the top k",
    ),
)


@dataclass(frozen=True)
class IllusionsReport:
    """All cases plus the blind-spot table (reported by ``reports.metrics.illusions_report``)."""

    cases: tuple[IllusionCase, ...]
    blind_spots: tuple[BlindSpot, ...] = BLIND_SPOTS

    def blind_spot_table(self) -> CaseTable:
        """The blind spots as a table."""
        return CaseTable(
            ("metric", "what it answers", "what it cannot see"),
            tuple((b.metric, b.answers, b.blind_to) for b in self.blind_spots),
        )

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (``json.dumps`` gives the same bytes on every run)."""
        return {
            "computed_by": "ragaudit.metrics.evaluate",
            "cases": [case.to_dict() for case in self.cases],
            "blind_spots": [
                {"metric": b.metric, "answers": b.answers, "blind_to": b.blind_to}
                for b in self.blind_spots
            ],
        }


# --------------------------------------------------------------------------- case definitions
# Relevant items are A, B, C; distractors are X, Y, Z, W, V.

K = 5
SAME_RECALL_SYSTEMS = (("top", "A C X Y Z"), ("middle", "X A C Y Z"), ("bottom", "X Y Z A C"))
SAME_MRR_SYSTEMS = (("complete", "A B C X Y"), ("one-hit", "A X Y Z W"))
SAME_HIT_SYSTEMS = (("good", "A B C X Y"), ("lucky", "X Y Z W C"))
# Relevant at ranks 1, 3 and 6: the only placement that gives the chapter's k table
# (nDCG@3 = 0.704 needs the second hit at rank 3, nDCG@8 = 0.871 the third at rank 6).
K_TRADEOFF_RANKING = "A X B Y Z C W V"
K_TRADEOFF_CUTOFFS = (1, 3, 5, 8)
WHITEBOARD_RANKING = "B A D C E"
DISCOUNT_RANKS = (1, 2, 3, 4, 5, 10)
# Grade 2 = contains the answer, 1 = related.  Swapping the two top items costs nothing under
# binary labels and 1 - (1 + 2/log2 3) / (2 + 1/log2 3) = 0.140 of graded nDCG.
GRADED_SYSTEMS = (("answer-first", "A B X Y Z"), ("related-first", "B A X Y Z"))
GRADED_LABELS = {"A": 2, "B": 1}


def _star(ranking: Sequence[str], grades: Mapping[str, int]) -> str:
    return " ".join(f"*{item}*" if grades.get(item, 0) >= 1 else item for item in ranking)


def _with_grades(ranking: Sequence[str], grades: Mapping[str, int]) -> str:
    return " ".join(f"{item}:{grades[item]}" if item in grades else item for item in ranking)


def _set(grades: Mapping[str, int]) -> str:
    return "{" + ", ".join(sorted(item for item, g in grades.items() if g >= 1)) + "}"


def _score_systems(
    evaluate: EvaluateFn,
    systems: Sequence[tuple[str, str]],
    grades: Mapping[str, int],
    metrics: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Evaluate every system at once, one question per system: ``{system: {metric: value}}``."""
    qrels = Qrels({name: dict(grades) for name, _ in systems}, name="illusions")
    run = Run({name: ranking.split() for name, ranking in systems}, order="given")
    result = evaluate(qrels, run, list(metrics))
    position = {qid: i for i, qid in enumerate(result.query_ids)}
    return {
        name: {m: float(result.per_query[m][position[name]]) for m in metrics}
        for name, _ in systems
    }


def _systems_case(
    evaluate: EvaluateFn,
    *,
    number: int,
    key: str,
    title: str,
    systems: Sequence[tuple[str, str]],
    grades: Mapping[str, int],
    columns: Sequence[tuple[str, str]],
    lesson: str,
    with_spread: bool = False,
) -> IllusionCase:
    metrics = [name for _, name in columns]
    scores = _score_systems(evaluate, systems, grades, metrics)
    header = ("system", f"top-{K}", *(label for label, _ in columns))
    rows: list[tuple[Cell, ...]] = [
        (name, _star(ranking.split(), grades), *(scores[name][m] for m in metrics))
        for name, ranking in systems
    ]
    data: dict[str, Any] = {
        "k": K,
        "relevant": dict(grades),
        "systems": [
            {"name": name, "ranking": ranking.split(), "metrics": scores[name]}
            for name, ranking in systems
        ],
    }
    if with_spread:
        values = np.array([[scores[name][m] for m in metrics] for name, _ in systems])
        spread = values.max(axis=0) - values.min(axis=0)
        rows.append(("spread", "(max - min)", *(float(s) for s in spread)))
        data["spreads"] = {m: float(s) for m, s in zip(metrics, spread, strict=True)}
    return IllusionCase(
        number=number,
        key=key,
        title=title,
        setup=f"relevant = {_set(grades)}, k = {K}",
        blocks=(CaseTable(header, tuple(rows)),),
        lesson=lesson,
        data=data,
    )


def _k_tradeoff_case(evaluate: EvaluateFn) -> IllusionCase:
    grades = {"A": 1, "B": 1, "C": 1}
    families = (("recall@k", "recall"), ("prec@k", "precision"), ("f1@k", "f1"), ("nDCG@k", "ndcg"))
    metrics = [f"{fam}@{k}" for k in K_TRADEOFF_CUTOFFS for _, fam in families]
    scores = _score_systems(evaluate, [("ranking", K_TRADEOFF_RANKING)], grades, metrics)["ranking"]
    rows = tuple((k, *(scores[f"{fam}@{k}"] for _, fam in families)) for k in K_TRADEOFF_CUTOFFS)
    return IllusionCase(
        number=4,
        key="k_tradeoff",
        title="The cut-off k is part of the claim",
        setup=(f"ranking = {_star(K_TRADEOFF_RANKING.split(), grades)}, relevant = {_set(grades)}"),
        blocks=(CaseTable(("k", *(label for label, _ in families)), rows),),
        lesson=(
            "Recall can only rise as k grows and precision mostly falls; a recall figure "
            "quoted without its k says nothing, and a large k is paid for by the generator."
        ),
        data={
            "ranking": K_TRADEOFF_RANKING.split(),
            "relevant": grades,
            "by_k": {
                str(k): {m: scores[f"{m}@{k}"] for _, m in families} for k in K_TRADEOFF_CUTOFFS
            },
        },
    )


def _whiteboard_case(evaluate: EvaluateFn) -> IllusionCase:
    grades = {"A": 1, "C": 1}
    ranking = WHITEBOARD_RANKING.split()
    discounts = 1.0 / np.log2(np.array(DISCOUNT_RANKS, dtype=float) + 1.0)
    discount_table = CaseTable(
        ("rank i", *(str(r) for r in DISCOUNT_RANKS)),
        (("1/log2(i+1)", *(float(d) for d in discounts)),),
    )
    ndcg = explain_ndcg(ranking, grades, k=K)
    ap = explain_ap(ranking, grades, k=K)
    engine = _score_systems(
        evaluate, [("whiteboard", WHITEBOARD_RANKING)], grades, ["dcg@5", "ndcg@5", "map@5"]
    )["whiteboard"]
    agrees = bool(
        np.allclose(
            [engine["ndcg@5"], engine["dcg@5"], engine["map@5"]],
            [ndcg.value, ndcg.totals["dcg"], ap.value],
            rtol=0,
            atol=1e-12,
        )
    )
    return IllusionCase(
        number=5,
        key="whiteboard",
        title="nDCG and AP, derived by hand",
        setup=f"ranking = {_star(ranking, grades)}, relevant = {_set(grades)}, k = {K}",
        blocks=(
            discount_table,
            (
                "nDCG: gain x discount, summed, then divided by the ideal ordering's sum",
                ndcg,
                "",
                "AP: precision@i at each relevant rank, divided by the number of relevant items",
                ap,
                "",
                EngineCheck(engine, agrees),
            ),
        ),
        lesson=(
            "The discount encodes the belief that later context is worth less (rank 5 counts "
            "0.39 of rank 1); dividing by the ideal DCG puts questions with 1 and 3 relevant "
            "items on the same 0-1 scale."
        ),
        data={
            "ranking": ranking,
            "relevant": grades,
            "discounts": {str(r): float(d) for r, d in zip(DISCOUNT_RANKS, discounts, strict=True)},
            "ndcg_derivation": ndcg.to_dict(),
            "ap_derivation": ap.to_dict(),
            "evaluate": engine,
            "derivation_matches_evaluate": agrees,
        },
    )


def _graded_case(evaluate: EvaluateFn) -> IllusionCase:
    binary = {item: 1 for item, grade in GRADED_LABELS.items() if grade >= 1}
    on_binary = _score_systems(evaluate, GRADED_SYSTEMS, binary, ["ndcg@5"])
    on_graded = _score_systems(evaluate, GRADED_SYSTEMS, GRADED_LABELS, ["ndcg@5", "ndcg_exp@5"])
    rows = tuple(
        (
            name,
            _with_grades(ranking.split(), GRADED_LABELS),
            on_binary[name]["ndcg@5"],
            on_graded[name]["ndcg@5"],
            on_graded[name]["ndcg_exp@5"],
        )
        for name, ranking in GRADED_SYSTEMS
    )
    header = ("system", "top-5 (item:grade)", "binary nDCG", "graded nDCG", "graded, 2^g-1")
    return IllusionCase(
        number=6,
        key="graded_vs_binary",
        title="Binary labels tie what graded labels separate",
        setup="grades: A = 2 (contains the answer), B = 1 (related); binary: both = 1; k = 5",
        blocks=(CaseTable(header, rows),),
        lesson=(
            "With binary labels a chunk that holds the answer and one that merely discusses the "
            "topic are worth the same; grades (linear gain here, exponential in the last column) "
            "give nDCG the resolution to rank them."
        ),
        data={
            "k": K,
            "grades": dict(GRADED_LABELS),
            "systems": [
                {
                    "name": name,
                    "ranking": ranking.split(),
                    "binary_ndcg@5": on_binary[name]["ndcg@5"],
                    "graded_ndcg@5": on_graded[name]["ndcg@5"],
                    "graded_ndcg_exp@5": on_graded[name]["ndcg_exp@5"],
                }
                for name, ranking in GRADED_SYSTEMS
            ],
        },
    )


def compute_illusions(evaluate: EvaluateFn | None = None) -> IllusionsReport:
    """Build the seven cases by running the metrics engine on their rankings.

    Parameters
    ----------
    evaluate : callable, optional
        The engine, ``evaluate(qrels, run, metrics) -> result`` with ``query_ids`` and
        ``per_query`` (see ``docs/CONTRACTS.md``); default :func:`ragaudit.metrics.evaluate`.

    Returns
    -------
    IllusionsReport

    Examples
    --------
    >>> report = compute_illusions()
    >>> spreads = report.cases[0].data["spreads"]
    >>> spreads["recall@5"], spreads["precision@5"], spreads["mrr@5"]
    (0.0, 0.0, 0.75)
    """
    if evaluate is None:
        from ragaudit.metrics import evaluate as engine

        evaluate = engine
    same_recall = _systems_case(
        evaluate,
        number=1,
        key="same_recall_different_rank",
        title="Identical recall and precision, different rank metrics",
        systems=SAME_RECALL_SYSTEMS,
        grades={"A": 1, "C": 1},
        columns=(
            ("hit", "hit@5"),
            ("recall", "recall@5"),
            ("prec", "precision@5"),
            ("MRR", "mrr@5"),
            ("MAP", "map@5"),
            ("nDCG", "ndcg@5"),
            ("ctxP", "context_precision@5"),
        ),
        lesson=(
            "Set metrics (hit, recall, precision) cannot tell the three apart; a generator that "
            "reads in order sees three distractors before the evidence in 'bottom'."
        ),
        with_spread=True,
    )
    same_mrr = _systems_case(
        evaluate,
        number=2,
        key="same_mrr_partial_evidence",
        title="Identical MRR = 1, one third of the evidence",
        systems=SAME_MRR_SYSTEMS,
        grades={"A": 1, "B": 1, "C": 1},
        columns=(
            ("hit", "hit@5"),
            ("recall", "recall@5"),
            ("prec", "precision@5"),
            ("MRR", "mrr@5"),
            ("MAP", "map@5"),
            ("nDCG", "ndcg@5"),
            ("ctxP", "context_precision@5"),
        ),
        lesson=(
            "MRR stops at the first hit, so it only fits questions one source can answer; "
            "context precision is fooled too, because it divides by the items it found."
        ),
    )
    same_hit = _systems_case(
        evaluate,
        number=3,
        key="same_hit_fluke",
        title="Identical hit rate, one of them a fluke",
        systems=SAME_HIT_SYSTEMS,
        grades={"A": 1, "B": 1, "C": 1},
        columns=(
            ("hit", "hit@5"),
            ("recall", "recall@5"),
            ("prec", "precision@5"),
            ("MRR", "mrr@5"),
        ),
        lesson=(
            "Hit rate gives a single relevant item scraped in at rank 5 the same credit as a "
            "perfect ranking: the most flattering number on any dashboard."
        ),
    )
    return IllusionsReport(
        cases=(
            same_recall,
            same_mrr,
            same_hit,
            _k_tradeoff_case(evaluate),
            _whiteboard_case(evaluate),
            _graded_case(evaluate),
            unjudged_case(evaluate),
        )
    )
