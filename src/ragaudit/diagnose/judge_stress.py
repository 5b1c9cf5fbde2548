"""The judge stress test: run any correctness judge on the labelled rewrites of a golden set's
reference answers and measure it per family of rewrite.

The variants come from :func:`ragaudit.judges.stress.make_variants`: meaning-kept rewrites
(a judge should say correct) and meaning-broken ones (it should say wrong).  A judge returns
True (correct), False (wrong) or None (undecided) for each.  Per judge and family:

* ``decided share`` = decided / n;
* ``decided accuracy`` = right / decided, which is the judge's **specificity** on a
  meaning-kept family (kept judged correct) and its **sensitivity** on a meaning-broken one
  (broken judged wrong);

each with its exact Clopper-Pearson interval (:func:`ragaudit.stats.intervals.proportion_interval`;
Clopper & Pearson 1934): within a family each reference gives at most one variant.  The
pooled rows (``all meaning kept``, ``all meaning broken``, ``all``) hold several variants of
one reference, which are not independent: their intervals treat each reference as a cluster
(:func:`ragaudit.stats.cluster_betting.cluster_mean_interval`, betting over whole clusters;
Waudby-Smith & Ramdas 2024), and are left out with fewer than two references.

What the judge is shown: the question, the variant as the answer, the reference answer, the
golden keywords, and as context the full text of the question's source documents (a perfect
retrieval), or its reference contexts when there is no corpus, or else the reference itself.

Examples
--------
>>> from ragaudit.data.golden import GoldenQuestion
>>> q = GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("doc",), keywords=("5 minutes",))
>>> says_correct = lambda cases: [True for _ in cases]
>>> r = stress_test([q], {"doc": "Answer pages within 5 minutes."}, {"always": says_correct},
...                 families=["number_words", "changed_number"])
>>> [(row.family, row.decided, row.right) for row in r.rows]
[('number_words', 1, 1), ('changed_number', 1, 0), ('all meaning kept', 1, 1), \
('all meaning broken', 1, 0), ('all', 2, 1)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.exceptions import InputError
from ragaudit.judges.stress import FAMILIES, MEANING, Variant, VariantSet, make_variants
from ragaudit.stats.cluster_betting import cluster_mean_interval
from ragaudit.stats.intervals import IntervalResult, proportion_interval

__all__ = [
    "JudgeFunction",
    "StressCase",
    "StressResult",
    "StressRow",
    "llm_dry_run",
    "llm_judge",
    "offline_judge",
    "stress_cases",
    "stress_test",
]


@dataclass(frozen=True)
class StressCase:
    """What a judge sees for one variant."""

    variant: Variant
    question: str
    reference: str
    keywords: tuple[str, ...]
    context: tuple[str, ...]


#: A judge: cases -> one verdict each (True correct, False wrong, None undecided).
JudgeFunction = Callable[[Sequence[StressCase]], list[bool | None]]


def offline_judge(cases: Sequence[StressCase]) -> list[bool | None]:
    """The offline judge's ``correct`` verdict on each case (None: undecided).

    Examples
    --------
    >>> from ragaudit.judges.stress import Variant
    >>> same = Variant("q1", "number_words", "Within 5 minutes.", True, "-", 0)
    >>> offline_judge([StressCase(same, "How fast?", "Within 5 minutes.", (), ())])
    [True]
    """
    from ragaudit.judges.offline import judge_offline

    verdicts: list[bool | None] = []
    for case in cases:
        judged = judge_offline(
            answer=case.variant.text, answerable=True, reference_answer=case.reference,
            keywords=list(case.keywords), context_texts=list(case.context),
            question=case.question,
        )  # fmt: skip
        correct = judged.get("correct")
        verdicts.append(None if correct is None else bool(correct))
    return verdicts


def llm_judge(
    client: Any, *, repeats: int = 1, progress: Callable[[int, int], None] | None = None
) -> JudgeFunction:
    """The LLM correctness judge (:class:`ragaudit.judges.llm.LLMJudges`, cached client) as a
    judge function: "correct" is True, "partial" and "wrong" False, a failed call None.

    As in ``ragaudit judge``, an answer the abstention detector recognises is "wrong"
    without a call.
    """
    from ragaudit.judges.llm import LLMJudges

    judges = LLMJudges(client, ("correctness",), repeats=repeats)

    def judge(cases: Sequence[StressCase]) -> list[bool | None]:
        out: list[bool | None] = []
        for verdict in judges.judge(_items(cases), progress):
            correct = verdict.get("correct")
            out.append(None if correct is None else bool(correct))
        return out

    return judge


def _items(cases: Sequence[StressCase]) -> list[Any]:
    from ragaudit.judges.llm import JudgeItem

    return [
        JudgeItem(f"{c.variant.question_id}:{c.variant.family}", c.question, c.variant.text,
                  list(c.context), reference_answer=c.reference)
        for c in cases
    ]  # fmt: skip


def llm_dry_run(client: Any, cases: Sequence[StressCase], *, repeats: int = 1) -> Any:
    """What :func:`llm_judge` would send for ``cases``, sending nothing: a
    :class:`~ragaudit.llm.replies.DryRunEstimate` (calls, cache hits, tokens, cost)."""
    from ragaudit.judges.llm import LLMJudges

    return LLMJudges(client, ("correctness",), repeats=repeats).dry_run(_items(cases))


@dataclass(frozen=True)
class StressRow:
    """One judge on one family (or a pooled row: ``all meaning kept``, ``all meaning
    broken``, ``all``)."""

    judge: str
    family: str
    meaning: str  # "kept", "broken" or "both"
    n: int
    skipped: int
    decided: int
    right: int
    decided_share: IntervalResult | None
    accuracy: IntervalResult | None

    @property
    def measures(self) -> str:
        """What ``accuracy`` is on this row."""
        return {"kept": "specificity", "broken": "sensitivity"}.get(self.meaning, "accuracy")

    def to_dict(self) -> dict[str, Any]:
        """JSON fields (intervals as ``[low, high]``)."""

        def interval(r: IntervalResult | None) -> dict[str, Any] | None:
            if r is None:
                return None
            ci = r.confidence_interval
            return {"estimate": r.statistic, "ci": [ci.low, ci.high]}

        return {
            "judge": self.judge, "family": self.family, "meaning": self.meaning, "n": self.n,
            "skipped": self.skipped, "decided": self.decided, "right": self.right,
            "decided_share": interval(self.decided_share), "measures": self.measures,
            "interval": None if self.decided_share is None else self.decided_share.method,
            "decided_accuracy": interval(self.accuracy),
        }  # fmt: skip


@dataclass(frozen=True)
class StressResult:
    """The stress test of one or more judges on one golden set."""

    golden: str
    seed: int
    confidence: float
    n_references: int
    unanswerable: int
    context: str
    judges: tuple[str, ...]
    rows: tuple[StressRow, ...]
    variants: tuple[Variant, ...]
    verdicts: dict[str, tuple[bool | None, ...]]

    def misjudged(self, judge: str) -> list[tuple[Variant, bool | None]]:
        """The variants ``judge`` got wrong or left undecided, in order."""
        return [(v, got) for v, got in zip(self.variants, self.verdicts[judge], strict=True)
                if got is not v.expected]  # fmt: skip

    def gate(self, *, min_accuracy: float | None = None,
             min_decided: float | None = None) -> list[str]:  # fmt: skip
        """Why the result fails the targets, one line each (empty: it passes).

        ``min_accuracy``: every family's decided accuracy (the point estimate, families with a
        decided verdict); ``min_decided``: the decided share of all meaning-kept variants.

        Examples
        --------
        >>> from ragaudit.data.golden import GoldenQuestion
        >>> q = GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("d",))
        >>> r = stress_test([q], None, {"yes": lambda cs: [True] * len(cs)},
        ...                 families=["number_words", "refusal"])
        >>> r.gate(min_accuracy=0.97, min_decided=0.85)
        ['yes: refusal decided accuracy 0/1 = 0.000 < 0.97']
        """
        failed = []
        for row in self.rows:
            if row.meaning == "both" or row.family.startswith("all "):
                if (min_decided is not None and row.family == "all meaning kept" and row.n
                        and row.decided / row.n < min_decided):  # fmt: skip
                    failed.append(f"{row.judge}: meaning-kept decided share {row.decided}/"
                                  f"{row.n} = {row.decided / row.n:.3f} < {min_decided:g}")
                continue
            if min_accuracy is not None and row.decided and row.right / row.decided < min_accuracy:
                failed.append(f"{row.judge}: {row.family} decided accuracy {row.right}/"
                              f"{row.decided} = {row.right / row.decided:.3f} < {min_accuracy:g}")
        return failed

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: settings, rows, and every variant with each judge's verdict."""
        return {
            "golden": self.golden, "seed": self.seed, "confidence": self.confidence,
            "interval": "Clopper-Pearson exact", "n_references": self.n_references,
            "unanswerable": self.unanswerable, "context": self.context,
            "judges": list(self.judges), "rows": [r.to_dict() for r in self.rows],
            "variants": [
                {**v.to_dict(), "verdicts": {j: _word(self.verdicts[j][i]) for j in self.judges}}
                for i, v in enumerate(self.variants)
            ],
        }  # fmt: skip


def _word(verdict: bool | None) -> str:
    return "undecided" if verdict is None else "correct" if verdict else "wrong"


def _row(judge: str, family: str, meaning: str, pairs: list[tuple[Variant, bool | None]],
         skipped: int, confidence: float, pooled: bool = False) -> StressRow:  # fmt: skip
    n = len(pairs)
    decided = [(v, got) for v, got in pairs if got is not None]
    right = sum(got is v.expected for v, got in decided)
    if not pooled:
        share = proportion_interval(len(decided), n, confidence=confidence) if n else None
        accuracy = (proportion_interval(right, len(decided), confidence=confidence)
                    if decided else None)  # fmt: skip
    else:
        share = _clustered([got is not None for _, got in pairs],
                           [v.question_id for v, _ in pairs], confidence)  # fmt: skip
        accuracy = _clustered([got is v.expected for v, got in decided],
                              [v.question_id for v, _ in decided], confidence)  # fmt: skip
    return StressRow(judge, family, meaning, n, skipped, len(decided), right, share, accuracy)


def _clustered(values: list[bool], clusters: list[str], confidence: float) -> IntervalResult | None:
    if len(set(clusters)) < 2:
        return None
    return cluster_mean_interval([float(v) for v in values], clusters, confidence=confidence)


def stress_cases(
    golden: Sequence[Any],
    documents: Mapping[str, str] | None,
    *,
    families: Sequence[str] = FAMILIES,
    seed: int = 0,
) -> tuple[VariantSet, list[StressCase]]:
    """The variants of ``golden`` (:func:`~ragaudit.judges.stress.make_variants`) and what a
    judge is shown for each: the context is the full text of the question's source documents,
    else its reference contexts, else its reference answer.

    Examples
    --------
    >>> from ragaudit.data.golden import GoldenQuestion
    >>> q = GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("doc",))
    >>> made, cases = stress_cases([q], {"doc": "Pages: within 5 minutes."},
    ...                            families=["refusal"])
    >>> cases[0].context, made.n_references
    (('Pages: within 5 minutes.',), 1)
    """
    made = make_variants(golden, documents, families=families, seed=seed)
    corpus = dict(documents or {})
    by_id = {str(q.id): q for q in golden}
    cases = []
    for v in made.variants:
        q = by_id[v.question_id]
        shown: tuple[str, ...] = tuple(corpus[s] for s in q.sources if s in corpus) or tuple(
            q.reference_contexts) or (q.answer,)  # fmt: skip
        cases.append(StressCase(v, q.question, q.answer, tuple(q.keywords), shown))
    return made, cases


def stress_test(
    golden: Sequence[Any],
    documents: Mapping[str, str] | None,
    judges: Mapping[str, JudgeFunction],
    *,
    families: Sequence[str] = FAMILIES,
    seed: int = 0,
    confidence: float = 0.95,
    golden_name: str = "",
) -> StressResult:
    """Make the variants of ``golden`` and measure each judge on them.

    Parameters
    ----------
    golden : sequence of GoldenQuestion
    documents : mapping of str to str, optional
        The corpus (document id -> text): the judges' context and the rewrites' sentences
        and names.
    judges : mapping of str to JudgeFunction
        Name -> judge (:func:`offline_judge`, :func:`llm_judge`, or your own).
    families : sequence of str, default every family
    seed : int
    confidence : float, default 0.95
    golden_name : str
        How the golden set is named in the report.

    Returns
    -------
    StressResult
        One row per judge and family (families that made no variant included, with n = 0),
        then the pooled rows ``all meaning kept``, ``all meaning broken`` and ``all``.
    """
    made, cases = stress_cases(golden, documents, families=families, seed=seed)
    corpus = dict(documents or {})
    verdicts: dict[str, tuple[bool | None, ...]] = {}
    rows: list[StressRow] = []
    for name, judge in judges.items():
        got = list(judge(cases))
        if len(got) != len(cases):
            raise InputError(f"judge {name!r}: expected {len(cases)} verdicts, found {len(got)}")
        verdicts[name] = tuple(got)
        pairs = list(zip(made.variants, got, strict=True))
        for family in families:
            rows.append(_row(name, family, MEANING[family],
                             [p for p in pairs if p[0].family == family],
                             made.skipped[family], confidence))  # fmt: skip
        for meaning in ("kept", "broken"):
            chosen = [p for p in pairs if p[0].meaning == meaning]
            skipped = sum(made.skipped[f] for f in families if MEANING[f] == meaning)
            rows.append(_row(name, f"all meaning {meaning}", meaning, chosen, skipped,
                             confidence, pooled=True))  # fmt: skip
        rows.append(_row(name, "all", "both", pairs, sum(made.skipped.values()), confidence,
                         pooled=True))  # fmt: skip
    context = (
        "the full text of each question's source documents" if corpus
        else "each question's reference contexts, else its reference answer"
    )  # fmt: skip
    return StressResult(golden_name, seed, confidence, made.n_references, made.unanswerable,
                        context, tuple(judges), tuple(rows), made.variants, verdicts)  # fmt: skip
