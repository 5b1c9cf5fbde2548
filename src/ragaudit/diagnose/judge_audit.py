r"""Is the judge biased?  Paired bias tests on a saved run's own answers (``judges audit``).

Each test judges every eligible answer twice, once as the run gave it (A) and once changed in
one way that should not change the verdict (B), and compares the two verdict vectors with the
paired machinery of ``ragaudit compare`` (:func:`ragaudit.stats.compare.compare_runs`): the
difference ``mean(B) - mean(A)``, its interval (Tango's score interval for 0/1 verdicts, the
exact sign-flip test inverted for scores), the exact p-value, McNemar's table for 0/1
verdicts and the verdict words (SIGNIFICANT, borderline, no evidence, too few differing
questions).  A SIGNIFICANT row is evidence that the change moves the judge.

=============== =============================================================================
verbosity       the answer padded with a true but irrelevant sentence: a sentence of the
                corpus from a document that is neither a gold source nor in the context
                (drawn with the seed); answers that abstain are left out.  Verdict: correct.
context order   the retrieved chunks reversed (questions with two chunks or more), for the
                verdicts that read the context (offline: evidence_in_context, faithfulness;
                LLM: sufficiency, faithfulness).
refusal         the same refusal in two wordings, on every question: A the wording
phrasing        :data:`ragaudit._text.REFUSAL`, B :data:`OTHER_REFUSAL`.  Verdict: correct.
position        a pairwise judge shown the run's answer and the reference answer, then the
                two swapped (:mod:`ragaudit.diagnose.judge_audit_position`).  Verdict:
                answer preferred.
self-preference an LLM judge of the generator's own model or family (read from the saved
                run's config) against the offline judge on the same answers: B the LLM
                judge's verdict, A the offline one.  A lenient judge shows here too, so the
                row is a flag with a test, not proof of self-preference (Panickssery et al.).
repeat noise    the same request sent R - 1 more times (repeats 1..R-1, R >= 2: each its own
                cache entry and seed): repeat 1 against the first answer as a paired test,
                and the share of questions whose R verdicts all agree with its interval
                (Clopper-Pearson over questions, the unit of sampling).  The offline judges
                are deterministic and must show 0 differing questions, agreement 1.
=============== =============================================================================

References
----------
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS.
Ye, J. et al. (2025). Justice or prejudice? Quantifying biases in LLM-as-a-judge (CALM). ICLR.
Panickssery, A., Bowman, S. & Feng, S. (2024). LLM evaluators recognize and favor their own
generations. NeurIPS.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from ragaudit._text import REFUSAL
from ragaudit._validate import check_int
from ragaudit.data.chunks import Chunk
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.saved_run import SavedRun, generation_error_of
from ragaudit.diagnose.judge_audit_position import (
    POSITION_METRIC,
    PairwiseJudge,
    position_pairs,
    position_verdicts,
)
from ragaudit.exceptions import InputError
from ragaudit.judges.offline import is_abstention, judge_offline
from ragaudit.stats.compare import compare_runs
from ragaudit.stats.comparison import MetricComparison
from ragaudit.stats.judge_noise import unanimous_share

__all__ = [
    "OTHER_REFUSAL",
    "TESTS",
    "AuditItem",
    "AuditJudge",
    "AuditRow",
    "JudgeAudit",
    "OfflineAuditJudge",
    "audit_items",
    "audit_judge",
    "repeat_agreement",
    "same_family",
    "variants",
]

#: The second wording of the refusal test.
OTHER_REFUSAL = "The provided passages do not contain this information, so I cannot answer."
#: The tests, in report order.
TESTS: tuple[str, ...] = (
    "verbosity",
    "context order",
    "refusal phrasing",
    "position",
    "self-preference",
    "repeat noise",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_PAD_WORDS = (6, 30)


@dataclass(frozen=True)
class AuditItem:
    """One answered question as a judge sees it."""

    question_id: str
    question: str
    answer: str
    context: tuple[str, ...]
    context_docs: tuple[str, ...]
    reference_answer: str
    keywords: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    answerable: bool = True


class AuditJudge(Protocol):
    """What :func:`audit_judge` needs of a judge: a name, the model behind it (None offline),
    the verdicts it returns and which of them read the context, and ``verdicts``."""

    name: str
    model: str | None
    metrics: tuple[str, ...]
    context_metrics: tuple[str, ...]

    def verdicts(
        self, items: Sequence[AuditItem], repeat: int = 0
    ) -> list[dict[str, float | None]]:
        """One ``{metric: value}`` per item (None: not applicable or undecided)."""
        ...


class OfflineAuditJudge:
    """The offline judges (:func:`ragaudit.judges.offline.judge_offline`) as an audit judge.

    >>> item = AuditItem("q1", "How long?", "30 days.", ("Refunds take 30 days.",), ("d",),
    ...                  "Refunds take 30 days.")
    >>> OfflineAuditJudge().verdicts([item])[0]["correct"]
    1.0
    """

    name: str = "offline"
    model: str | None = None
    metrics: tuple[str, ...] = ("correct", "evidence_in_context", "faithfulness")
    context_metrics: tuple[str, ...] = ("evidence_in_context", "faithfulness")

    def verdicts(
        self, items: Sequence[AuditItem], repeat: int = 0
    ) -> list[dict[str, float | None]]:
        """The offline verdicts of each item (``repeat`` changes nothing: they are rules)."""
        out = []
        for item in items:
            found = judge_offline(
                answer=item.answer, answerable=item.answerable,
                reference_answer=item.reference_answer, keywords=item.keywords,
                context_texts=item.context, question=item.question,
                context_docs=item.context_docs, sources=item.sources,
            )  # fmt: skip
            out.append({m: None if found.get(m) is None else float(found[m]) for m in self.metrics})
        return out


def audit_items(run: SavedRun, chunks: Sequence[Chunk]) -> list[AuditItem]:
    """The answered rows of ``run`` (failed generations left out), context rebuilt from
    ``chunks`` (the corpus chunked as the run was).

    >>> run = SavedRun.from_dict({"config": {"k": 1}, "rows": [
    ...     {"id": "q1", "question": "Q?", "answer": "A.", "context_ids": ["c1"], "retrieved": []},
    ...     {"id": "q2", "answer": None, "generation_error": "timeout", "retrieved": []}]})
    >>> [(i.question_id, i.context) for i in audit_items(run, [Chunk("c1", "d", 0, "text")])]
    [('q1', ('text',))]
    """
    by_id = {c.chunk_id: c for c in chunks}
    items = []
    for row in run.rows:
        if generation_error_of(row) or row.get("answer") is None:
            continue
        ids = [str(c) for c in row.get("context_ids") or []]
        missing = [c for c in ids if c not in by_id]
        if missing:
            raise InputError(
                f"row {row.get('id')!r}: context chunk {missing[0]!r} is not among the corpus "
                "chunks; audit the run with the corpus and chunking it was made with"
            )
        items.append(
            AuditItem(
                question_id=str(row["id"]),
                question=str(row.get("question") or ""),
                answer=str(row["answer"]),
                context=tuple(by_id[c].text for c in ids),
                context_docs=tuple(by_id[c].doc_id for c in ids),
                reference_answer=str(row.get("reference_answer") or ""),
                keywords=tuple(row.get("keywords") or ()),
                sources=tuple(row.get("gold_docs") or ()),
                answerable=row.get("answerable", True) is not False,
            )
        )
    return items


def _pad_sentences(chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """``(doc id, sentence)``: corpus sentences of 6-30 words, whole, without a citation."""
    seen: set[str] = set()
    out = []
    for chunk in chunks:
        for raw in _SENTENCE.split(chunk.text):
            sentence = " ".join(raw.split())
            words = len(sentence.split())
            if (
                _PAD_WORDS[0] <= words <= _PAD_WORDS[1]
                and sentence[:1].isupper()
                and sentence.endswith(".")
                and not any(ch in sentence for ch in "[]|#`*")
                and sentence not in seen
            ):
                seen.add(sentence)
                out.append((chunk.doc_id, sentence))
    return out


def variants(
    items: Sequence[AuditItem], chunks: Sequence[Chunk], seed: int
) -> dict[str, list[tuple[AuditItem, AuditItem]]]:
    """``test -> [(A, B)]``: the pairs of items each test judges (rules in the module notes;
    position and self-preference are built by :func:`audit_judge`, empty here).

    >>> chunks = [Chunk("c1", "leave", 0, "Staff get 24 days of leave."),
    ...           Chunk("c2", "it", 0, "Laptops are replaced every three years by IT.")]
    >>> item = AuditItem("q1", "How many days?", "24 days.", ("Staff get 24 days of leave.",),
    ...                  ("leave",), "24 days.", sources=("leave",))
    >>> variants([item], chunks, seed=0)["verbosity"][0][1].answer
    '24 days. Laptops are replaced every three years by IT.'
    """
    rng = np.random.default_rng([seed, 36])
    pads = _pad_sentences(chunks)
    out: dict[str, list[tuple[AuditItem, AuditItem]]] = {t: [] for t in TESTS}
    for item in items:
        if not is_abstention(item.answer):
            away = {*item.sources, *item.context_docs}
            pool = [s for doc, s in pads if doc not in away]
            if pool:
                pad = pool[int(rng.integers(len(pool)))]
                out["verbosity"].append((item, replace(item, answer=f"{item.answer} {pad}")))
        if len(item.context) >= 2:
            flipped = replace(
                item, context=item.context[::-1], context_docs=item.context_docs[::-1]
            )
            out["context order"].append((item, flipped))
        out["refusal phrasing"].append(
            (replace(item, answer=REFUSAL), replace(item, answer=OTHER_REFUSAL))
        )
        out["repeat noise"].append((item, item))
    return out


def same_family(judge_model: str | None, generator_model: str | None) -> bool:
    """Whether two model names are the same model or family.

    A family is the name without a provider prefix (``openai/``), cut at the first ``-`` or
    ``:``; a first part of three letters or fewer (``gpt``) keeps the next part
    (``gpt-4o``).

    >>> same_family("gpt-4o-mini", "gpt-4o"), same_family("openai/gpt-4o", "GPT-4o-mini")
    (True, True)
    >>> same_family("gpt-3.5-turbo", "gpt-4o"), same_family("llama3.1:8b", "llama3.1:70b")
    (False, True)
    >>> same_family("claude-3-haiku", "gpt-4o"), same_family(None, "gpt-4o")
    (False, False)
    """
    if not judge_model or not generator_model:
        return False

    def family(name: str) -> str:
        parts = re.split(r"[-:]", name.lower().rsplit("/", 1)[-1])
        return "-".join(parts[:2]) if len(parts[0]) <= 3 else parts[0]

    return family(judge_model) == family(generator_model)


@dataclass(frozen=True)
class AuditRow:
    """One bias test on one verdict: the paired comparison, or why there is none."""

    test: str
    metric: str
    change: str
    comparison: MetricComparison | None
    reason: str = ""
    #: Repeat noise: ``{repeats, n, value, ci_low, ci_high, method}`` of the share of
    #: questions whose repeats all agree (:func:`repeat_agreement`).
    agreement: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the compare row's keys, with the test and what was changed."""
        base: dict[str, Any] = {"test": self.test, "metric": self.metric, "change": self.change}
        if self.comparison is None:
            return {**base, "verdict": "not run", "reason": self.reason}
        row = self.comparison.to_dict()
        row.pop("subsamples", None)
        extra = {} if self.agreement is None else {"agreement": dict(self.agreement)}
        return {**base, **row, **extra}


@dataclass(frozen=True)
class JudgeAudit:
    """What :func:`audit_judge` found: one row per (test, verdict)."""

    run: str
    judge: str
    judge_model: str | None
    generator_model: str | None
    self_preference_flag: bool
    n_items: int
    seed: int
    rows: tuple[AuditRow, ...]
    n_unanswered: int = 0
    repeats: int = 2
    pairwise_judge: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``judges audit --format json`` document."""
        return {
            "run": self.run,
            "judge": self.judge,
            "judge_model": self.judge_model,
            "generator_model": self.generator_model,
            "self_preference_flag": self.self_preference_flag,
            "n_items": self.n_items,
            "n_unanswered": self.n_unanswered,
            "seed": self.seed,
            "repeats": self.repeats,
            "pairwise_judge": self.pairwise_judge,
            "method": (
                "paired: each answer judged as given (A) and changed (B); difference B - A with "
                "ragaudit compare's interval, exact p-value and verdict"
            ),
            "rows": [r.to_dict() for r in self.rows],
        }


_CHANGES = {
    "verbosity": "answer + a true, irrelevant corpus sentence",
    "context order": "retrieved chunks reversed",
    "refusal phrasing": "refusal reworded",
    "self-preference": "LLM judge (B) vs offline judge (A), same answers",
    "position": "answers A and B swapped (the run's answer vs the reference answer)",
    "repeat noise": "same request sent again",
}


def generator_model(run: SavedRun) -> str | None:
    """The generator's model recorded in the run's config (LLM generators only).

    >>> generator_model(SavedRun.from_dict({"config": {"k": 1, "llm_generator": {"model": "m"}},
    ...                                     "rows": []}))
    'm'
    """
    config = run.config.to_dict()
    generator = config.get("llm_generator") or {}
    model = generator.get("model") if isinstance(generator, Mapping) else None
    return None if model is None else str(model)


def _compare(
    test: str, metric: str, a: Sequence[dict[str, float | None]],
    b: Sequence[dict[str, float | None]], ids: Sequence[str], seed: int,
) -> AuditRow:  # fmt: skip
    first = PerQuestionMetrics("A", {q: {metric: v[metric]} for q, v in zip(ids, a, strict=True)})
    second = PerQuestionMetrics("B", {q: {metric: v[metric]} for q, v in zip(ids, b, strict=True)})
    decided = sum(
        1 for x, y in zip(a, b, strict=True) if x[metric] is not None and y[metric] is not None
    )
    if decided < 2:
        return AuditRow(test, metric, _CHANGES[test], None, f"{decided} question(s) decided")
    row = compare_runs(first, second, [metric], seed=seed, subsample_sizes=()).metrics[0]
    return AuditRow(test, metric, _CHANGES[test], row)


def repeat_agreement(
    sends: Sequence[Sequence[dict[str, float | None]]], metric: str
) -> dict[str, Any]:
    """``{repeats, n, value, ci_low, ci_high, method}``: the share of questions whose
    ``len(sends)`` verdicts on ``metric`` all agree (:func:`~ragaudit.stats.unanimous_share`).
    """
    values = [[np.nan if s[i][metric] is None else s[i][metric] for s in sends]
              for i in range(len(sends[0]))]  # fmt: skip
    grid = np.array(values, dtype=float).reshape(-1, len(sends))
    found = unanimous_share(grid)  # None: no question with all R verdicts
    ci = None if found is None else found.confidence_interval
    return {"repeats": len(sends), "n": int((~np.isnan(grid).any(axis=1)).sum()),
            "value": None if found is None else found.statistic,
            "ci_low": None if ci is None else ci.low, "ci_high": None if ci is None else ci.high,
            "method": "-" if found is None else found.method}  # fmt: skip


def _self_preference(
    items: Sequence[AuditItem], base: Mapping[str, dict[str, float | None]], judge: AuditJudge,
    offline: AuditJudge, gen_model: str | None, seed: int,
) -> AuditRow:  # fmt: skip
    test = "self-preference"
    if not same_family(judge.model, gen_model):
        why = (
            "offline judge: no model" if judge.model is None else
            f"judge {judge.model} is not the generator's model or family "
            f"({gen_model or 'no LLM generator recorded'})"
        )  # fmt: skip
        return AuditRow(test, "correct", _CHANGES[test], None, why)
    ids = [i.question_id for i in items]
    return _compare(test, "correct", offline.verdicts(items), [base[q] for q in ids], ids, seed)


def _position(items: Sequence[AuditItem], pairwise: PairwiseJudge | None, seed: int) -> AuditRow:
    test = "position"
    if pairwise is None:
        return AuditRow(test, POSITION_METRIC, _CHANGES[test], None, "no pairwise judge given")
    pairs = position_pairs(items)
    if not pairs:
        return AuditRow(test, POSITION_METRIC, _CHANGES[test], None, "no eligible answer")
    a, b = position_verdicts(pairs, pairwise)
    return _compare(test, POSITION_METRIC, a, b, [p.question_id for p in pairs], seed)


def audit_judge(
    run: SavedRun,
    chunks: Sequence[Chunk],
    judge: AuditJudge,
    *,
    seed: int = 0,
    offline: AuditJudge | None = None,
    pairwise: PairwiseJudge | None = None,
    repeats: int = 2,
    progress: Callable[[str], None] | None = None,
) -> JudgeAudit:
    """Run every bias test of the module notes on ``judge`` over the answers of ``run``.

    Parameters
    ----------
    run : SavedRun
    chunks : sequence of Chunk
        The corpus chunked as the run was (contexts are rebuilt; padding sentences drawn).
    judge : AuditJudge
        :class:`OfflineAuditJudge`, the LLM judges
        (:class:`ragaudit.diagnose.judge_audit_llm.LLMAuditJudge`) or any object with the
        same attributes.
    seed : int, default 0
        Draws the padding sentences and seeds the paired tests.
    offline : AuditJudge, optional
        The reference of the self-preference test (default :class:`OfflineAuditJudge`).
    pairwise : PairwiseJudge, optional
        The judge of the position test (:class:`~ragaudit.judges.pairwise.OfflinePairwiseJudge`,
        :class:`~ragaudit.judges.pairwise.LLMPairwiseJudge`); without one the row is "not
        run".
    repeats : int, default 2
        R, the sends of the repeat-noise test (at least 2).

    Returns
    -------
    JudgeAudit
    """
    repeats = check_int(repeats, "repeats", minimum=2)
    items = audit_items(run, chunks)
    if not items:
        raise InputError(f"{run.path or run.name}: no answered question to audit")
    pairs = variants(items, chunks, seed)
    gen_model = generator_model(run)
    # the answers as given are judged once; every test but refusal phrasing reuses them
    base = dict(zip((i.question_id for i in items), judge.verdicts(items), strict=True))
    rows: list[AuditRow] = []
    for test in TESTS:
        if progress is not None:
            progress(test)
        if test == "self-preference":
            reference = offline or OfflineAuditJudge()
            rows.append(_self_preference(items, base, judge, reference, gen_model, seed))
            continue
        if test == "position":
            rows.append(_position(items, pairwise, seed))
            continue
        chosen = pairs[test]
        metrics = judge.context_metrics if test == "context order" else ("correct",)
        if not chosen:
            for metric in metrics:
                rows.append(AuditRow(test, metric, _CHANGES[test], None, "no eligible answer"))
            continue
        ids = [x.question_id for x, _ in chosen]
        if test == "refusal phrasing":
            a = judge.verdicts([x for x, _ in chosen])
        else:
            a = [base[q] for q in ids]
        if test != "repeat noise":
            b = judge.verdicts([y for _, y in chosen])
            rows.extend(_compare(test, metric, a, b, ids, seed) for metric in metrics)
            continue
        sends = [a, *(judge.verdicts([y for _, y in chosen], repeat=r) for r in range(1, repeats))]
        for metric in metrics:
            row = _compare(test, metric, a, sends[1], ids, seed)
            rows.append(replace(row, agreement=repeat_agreement(sends, metric)))
    return JudgeAudit(
        run=run.name, judge=judge.name, judge_model=judge.model, generator_model=gen_model,
        self_preference_flag=same_family(judge.model, gen_model), n_items=len(items),
        seed=seed, rows=tuple(rows), n_unanswered=len(run.rows) - len(items), repeats=repeats,
        pairwise_judge=None if pairwise is None else (
            pairwise.name + (f" ({pairwise.model})" if pairwise.model else "")),
    )  # fmt: skip
