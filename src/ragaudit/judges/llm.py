"""LLM judges: sufficiency, answer correctness, faithfulness, citation accuracy, relevance.

Each judge sends one versioned prompt (:mod:`ragaudit.judges.prompts`), asks for JSON, validates
it (:mod:`ragaudit.judges.schemas`) and, when the reply is invalid, asks again quoting the
validation error.  A judge that still has no valid verdict after its retry budget, or whose
request failed, records ``judge_error`` with the reason: its verdict is ``None``, never counted
right or wrong, and :func:`summarize_judges` counts it.

Verdict keys written into a saved run's ``judges`` (``None`` = not applicable or failed):

=================== ========================================================================
``sufficiency``     bool: the context states every fact of the *reference* answer
``missing_facts``   reference facts the context lacks
``correct``         bool: correctness verdict is ``"correct"``
``correctness``     ``"correct"`` / ``"partial"`` / ``"wrong"``
``completeness``    share of the reference's key facts in the answer, 0..1
``numeric_match``   bool: every number of the reference is stated correctly
``faithfulness``    supported claims / claims (1.0 for no claims, e.g. an abstention)
``n_claims``        claims extracted from the answer
``citation_accuracy`` supported (sentence, cited chunk) pairs / cited pairs
``n_citations``     (sentence, cited chunk) pairs checked
``answer_relevance`` integer 1..5
``judge_versions``  judge -> prompt version;  ``judge_model``: the model that judged
``judge_errors``    judge -> reason, and ``judge_error``: the same as one string
``judge_agreement`` judge -> share of repeats agreeing with the reported verdict (R > 1;
                    R itself is in the run's ``config.llm_judges.repeats``)
=================== ========================================================================

Short cuts that need no call: an abstention makes no claims (faithfulness 1.0 with 0 claims),
cites nothing and is "wrong" for an answerable question; for an unanswerable question the
answer is correct exactly when it abstains and sufficiency does not apply.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.data.saved_run import SavedRun
from ragaudit.data.saved_run_metrics import JUDGES_OFFLINE_LLM, LLM_JUDGE_METRICS
from ragaudit.exceptions import InputError
from ragaudit.judges.prompts import (
    CITATIONS,
    CORRECTNESS,
    FAITHFULNESS,
    RELEVANCE,
    SUFFICIENCY,
    Prompt,
    data_block,
    numbered_chunks,
)
from ragaudit.llm.citations import split_cited_sentences
from ragaudit.llm.client import DryRunEstimate, LLMClient, PlannedCall

__all__ = [
    "JUDGE_NAMES",
    "METRICS_OF",
    "JudgeItem",
    "LLMJudges",
    "items_from_rows",
    "judge_metrics",
    "judge_rows",
    "judge_saved_run",
    "summarize_judges",
]

#: The LLM judges, in the order they are reported.
JUDGE_NAMES: tuple[str, ...] = (
    "sufficiency",
    "correctness",
    "faithfulness",
    "citations",
    "relevance",
)
_PROMPT_OF: dict[str, Prompt] = {
    "sufficiency": SUFFICIENCY,
    "correctness": CORRECTNESS,
    "faithfulness": FAITHFULNESS,
    "citations": CITATIONS,
    "relevance": RELEVANCE,
}
#: The key whose value decides agreement between repeats.
# The verdict kept per repeat (the row metric it feeds), when it is not the primary one.
_REPEAT_KEY: dict[str, str] = {"correctness": "correct"}
_PRIMARY: dict[str, str] = {
    "sufficiency": "sufficiency",
    "correctness": "correctness",
    "faithfulness": "faithfulness",
    "citations": "citation_accuracy",
    "relevance": "answer_relevance",
}
#: Every key a judge writes, set to None when it fails.
_KEYS: dict[str, tuple[str, ...]] = {
    "sufficiency": ("sufficiency", "missing_facts"),
    "correctness": ("correct", "correctness", "completeness", "numeric_match"),
    "faithfulness": ("faithfulness", "n_claims", "unsupported_claims"),
    "citations": ("citation_accuracy", "n_citations", "unsupported_citations"),
    "relevance": ("answer_relevance",),
}


@dataclass(frozen=True)
class JudgeItem:
    """One answered question to judge.

    Attributes
    ----------
    question_id, question, answer : str
    context : sequence of str
        Chunk texts in the order the generator saw them (``[1]`` is the first).
    reference_answer : str or None
        Needed by sufficiency and correctness for answerable questions.
    answerable : bool, default True
    abstained : bool or None
        ``None`` detects the refusal with :func:`ragaudit.judges.offline.is_abstention`.
    """

    question_id: str
    question: str
    answer: str
    context: Sequence[str]
    reference_answer: str | None = None
    answerable: bool = True
    abstained: bool | None = None

    def did_abstain(self) -> bool:
        """Whether the answer declines to answer."""
        if self.abstained is not None:
            return self.abstained
        from ragaudit.judges.offline import is_abstention

        return is_abstention(self.answer)


@dataclass(frozen=True)
class _Task:
    item_index: int
    judge: str
    repeat: int


# A judge either answers without a model (a dict), or needs one call described by a _Call.
@dataclass(frozen=True)
class _Call:
    messages: list[dict[str, str]]
    prompt: Prompt
    parse: Callable[[Any], Any]
    finish: Callable[[Any], dict[str, Any]]


class LLMJudges:
    """Run the LLM judges over many answers, concurrently and cached.

    Parameters
    ----------
    client : LLMClient
    judges : sequence of str, default all of :data:`JUDGE_NAMES`
    repeats : int, default 1
        Ask each judge this many times (distinct cache entries, seeds ``seed + r``) and report
        the modal verdict with its agreement.  Repeats only differ when the server samples
        (temperature > 0 or a seed-dependent backend).

    Examples
    --------
    A dry run needs no server:

    >>> from ragaudit.llm import LLMClient, LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="gpt-4o-mini", use_cache=False)
    >>> item = JudgeItem("q1", "How long?", "30 days [1].", ["Refunds take 30 days."],
    ...                  reference_answer="30 days.")
    >>> with LLMClient(cfg) as client:
    ...     est = LLMJudges(client, repeats=2).dry_run([item])
    >>> est.calls
    10
    """

    def __init__(
        self, client: LLMClient, judges: Sequence[str] = JUDGE_NAMES, repeats: int = 1
    ) -> None:
        unknown = [j for j in judges if j not in JUDGE_NAMES]
        if unknown:
            raise InputError(
                f"judges: expected names among {', '.join(JUDGE_NAMES)}, found "
                f"{', '.join(map(repr, unknown))}"
            )
        if repeats < 1:
            raise InputError(f"judge_repeats: expected an integer >= 1, found {repeats!r}")
        self.client = client
        self.judges = tuple(judges)
        self.repeats = repeats

    @property
    def versions(self) -> dict[str, str]:
        """Judge name -> prompt version (stored with every verdict)."""
        return {name: _PROMPT_OF[name].version for name in self.judges}

    # ----------------------------------------------------------------------------------------
    def judge(
        self,
        items: Sequence[JudgeItem],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Judge every item; one ``judges`` dict per item, in input order.

        ``progress(done, total)`` counts (item, judge, repeat) tasks.
        """
        tasks = [
            _Task(i, judge, r)
            for i in range(len(items))
            for judge in self.judges
            for r in range(self.repeats)
        ]

        def run(task: _Task) -> dict[str, Any]:
            return self._run_one(items[task.item_index], task.judge, task.repeat)

        outcomes = self.client.map(run, tasks, progress)
        by_item: list[dict[str, list[dict[str, Any]]]] = [{} for _ in items]
        for task, outcome in zip(tasks, outcomes, strict=True):
            by_item[task.item_index].setdefault(task.judge, []).append(outcome)
        return [self._combine(per_judge) for per_judge in by_item]

    def plan(self, items: Sequence[JudgeItem]) -> list[PlannedCall]:
        """The first-attempt requests :meth:`judge` would send (for dry runs)."""
        planned = []
        for item in items:
            for judge in self.judges:
                call = self._build(item, judge)
                if not isinstance(call, _Call):
                    continue
                for r in range(self.repeats):
                    planned.append(
                        PlannedCall(
                            tuple(call.messages),
                            call.prompt.version,
                            repeat=r,
                            json_mode=self.client.config.json_mode,
                            expected_output_tokens=call.prompt.expected_output_tokens,
                        )
                    )
        return planned

    def dry_run(self, items: Sequence[JudgeItem]) -> DryRunEstimate:
        """Calls, cache hits, tokens (chars/4) and cost of :meth:`judge`, sending nothing."""
        return self.client.estimate(self.plan(items))

    # ----------------------------------------------------------------------------------------
    def _run_one(self, item: JudgeItem, judge: str, repeat: int) -> dict[str, Any]:
        call = self._build(item, judge)
        if not isinstance(call, _Call):
            return call
        outcome = self.client.chat_json(
            call.messages, call.parse, prompt_version=call.prompt.version, repeat=repeat
        )
        if outcome.value is None:
            return {"judge_error": outcome.error or "no verdict"}
        return call.finish(outcome.value)

    def _build(self, item: JudgeItem, judge: str) -> dict[str, Any] | _Call:
        builder = getattr(self, f"_build_{judge}")
        result: dict[str, Any] | _Call = builder(item)
        return result

    def _build_sufficiency(self, item: JudgeItem) -> dict[str, Any] | _Call:
        if not item.answerable:
            return {"sufficiency": None, "missing_facts": None}
        if not item.reference_answer:
            return {"judge_error": "no reference answer to judge sufficiency against"}
        messages = SUFFICIENCY.messages(
            question=data_block("question", item.question),
            reference=data_block("reference", item.reference_answer),
            context=numbered_chunks(list(item.context)),
        )
        from ragaudit.judges.schemas import parse_sufficiency

        def finish(verdict: Any) -> dict[str, Any]:
            missing = [f.fact for f in verdict.facts if not f.in_context]
            return {"sufficiency": not missing, "missing_facts": missing}

        return _Call(messages, SUFFICIENCY, parse_sufficiency, finish)

    def _build_correctness(self, item: JudgeItem) -> dict[str, Any] | _Call:
        abstained = item.did_abstain()
        if not item.answerable:
            return {
                "correct": abstained,
                "correctness": "correct" if abstained else "wrong",
                "completeness": None,
                "numeric_match": None,
            }
        if abstained:
            return {
                "correct": False,
                "correctness": "wrong",
                "completeness": 0.0,
                "numeric_match": None,
            }
        if not item.reference_answer:
            return {"judge_error": "no reference answer to judge correctness against"}
        messages = CORRECTNESS.messages(
            question=data_block("question", item.question),
            reference=data_block("reference", item.reference_answer),
            answer=data_block("answer", item.answer),
        )
        from ragaudit.judges.schemas import parse_correctness

        def finish(verdict: Any) -> dict[str, Any]:
            return {
                "correct": verdict.verdict == "correct",
                "correctness": verdict.verdict,
                "completeness": float(verdict.completeness),
                "numeric_match": bool(verdict.numbers_match),
            }

        return _Call(messages, CORRECTNESS, parse_correctness, finish)

    def _build_faithfulness(self, item: JudgeItem) -> dict[str, Any] | _Call:
        if item.did_abstain():
            # Declining to answer asserts nothing, so it fabricates nothing.
            return {"faithfulness": 1.0, "n_claims": 0, "unsupported_claims": []}
        messages = FAITHFULNESS.messages(
            question=data_block("question", item.question),
            context=numbered_chunks(list(item.context)),
            answer=data_block("answer", item.answer),
        )
        from ragaudit.judges.schemas import parse_faithfulness

        def finish(verdict: Any) -> dict[str, Any]:
            claims = verdict.claims
            supported = sum(c.supported for c in claims)
            return {
                "faithfulness": supported / len(claims) if claims else 1.0,
                "n_claims": len(claims),
                "unsupported_claims": [c.claim for c in claims if not c.supported],
            }

        return _Call(messages, FAITHFULNESS, parse_faithfulness, finish)

    def _build_citations(self, item: JudgeItem) -> dict[str, Any] | _Call:
        not_applicable: dict[str, Any] = {
            "citation_accuracy": None,
            "n_citations": 0,
            "unsupported_citations": [],
        }
        if item.did_abstain():
            return not_applicable
        sentences = split_cited_sentences(item.answer)
        n_context = len(item.context)
        pairs = [(i, n) for i, s in enumerate(sentences, 1) for n in s.citations]
        if not pairs:
            return not_applicable
        # A citation to a passage that was never shown cannot be right: it stays in `pairs`
        # but is never sent to the model, so it can never be marked supported.
        to_check = [(i, n) for i, n in pairs if 1 <= n <= n_context]

        def result(supported_pairs: set[tuple[int, int]]) -> dict[str, Any]:
            bad = [
                {"sentence": sentences[i - 1].claim, "chunk": n}
                for i, n in pairs
                if (i, n) not in supported_pairs
            ]
            return {
                "citation_accuracy": (len(pairs) - len(bad)) / len(pairs),
                "n_citations": len(pairs),
                "unsupported_citations": bad,
            }

        if not to_check:
            return result(set())
        cited_numbers = sorted({n for _, n in to_check})
        sentence_blocks = "\n".join(
            data_block(
                "sentence",
                s.claim,
                id=i,
                cites=",".join(str(n) for n in s.citations if 1 <= n <= n_context),
            )
            for i, s in enumerate(sentences, 1)
            if any(1 <= n <= n_context for n in s.citations)
        )
        messages = CITATIONS.messages(
            context=numbered_chunks([item.context[n - 1] for n in cited_numbers], cited_numbers),
            sentences=sentence_blocks,
            pairs=", ".join(f"({i}, {n})" for i, n in to_check),
        )
        from ragaudit.judges.schemas import parse_citations

        def parse(value: Any) -> Any:
            return parse_citations(value, to_check)

        def finish(verdict: Any) -> dict[str, Any]:
            supported = {(v.sentence, v.chunk) for v in verdict.verdicts if v.supported}
            return result(supported)

        return _Call(messages, CITATIONS, parse, finish)

    def _build_relevance(self, item: JudgeItem) -> dict[str, Any] | _Call:
        if item.did_abstain():
            return {"answer_relevance": None}
        messages = RELEVANCE.messages(
            question=data_block("question", item.question),
            answer=data_block("answer", item.answer),
        )
        from ragaudit.judges.schemas import parse_relevance

        def finish(verdict: Any) -> dict[str, Any]:
            return {"answer_relevance": int(verdict.score)}

        return _Call(messages, RELEVANCE, parse_relevance, finish)

    # ----------------------------------------------------------------------------------------
    def _combine(self, per_judge: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
        combined: dict[str, Any] = {}
        errors: dict[str, str] = {}
        agreement: dict[str, float] = {}
        verdicts: dict[str, list[Any]] = {}
        for judge in self.judges:
            repeats = per_judge.get(judge, [])
            valid = [r for r in repeats if "judge_error" not in r]
            if not valid:
                reason = repeats[0]["judge_error"] if repeats else "not run"
                errors[judge] = reason
                combined.update(dict.fromkeys(_KEYS[judge]))
                continue
            chosen, share = _modal(valid, _PRIMARY[judge])
            combined.update(chosen)
            if self.repeats > 1:
                # Failed repeats count as disagreeing: they did not confirm the verdict.
                agreement[judge] = share * len(valid) / len(repeats)
                # Every repeat's verdict (None = failed), for the judge-noise decomposition.
                key = _REPEAT_KEY.get(judge, _PRIMARY[judge])
                verdicts[key] = [r.get(key) if "judge_error" not in r else None for r in repeats]
        combined["judge_versions"] = self.versions
        combined["judge_model"] = self.client.model
        if self.repeats > 1:
            combined["judge_agreement"] = agreement
            combined["judge_repeat_verdicts"] = verdicts
        if errors:
            combined["judge_errors"] = errors
            combined["judge_error"] = "; ".join(f"{k}: {v}" for k, v in errors.items())
        return combined


def _modal(verdicts: Sequence[dict[str, Any]], key: str) -> tuple[dict[str, Any], float]:
    """The most common verdict on ``key`` (ties: earliest repeat) and its share."""

    def token(value: Any) -> Any:
        return round(value, 6) if isinstance(value, float) else value

    counts = Counter(token(v[key]) for v in verdicts)
    top = max(counts.values())
    for verdict in verdicts:  # first repeat holding a top-count value: deterministic
        if counts[token(verdict[key])] == top:
            return verdict, top / len(verdicts)
    raise AssertionError("unreachable")  # pragma: no cover


def judge_metrics(judges: Mapping[str, Any]) -> dict[str, float | None]:
    """Per-question metrics from one ``judges`` dict (``None`` = not applicable or failed).

    ``correct`` and ``sufficiency`` become 1.0/0.0; ``faithfulness``, ``citation_accuracy``
    and ``completeness`` are copied; ``answer_relevance`` is rescaled to 0..1 as
    ``(score - 1) / 4``.

    Examples
    --------
    >>> judge_metrics({"correct": True, "faithfulness": 0.5, "answer_relevance": 5,
    ...                "citation_accuracy": None})["answer_relevance"]
    1.0
    """

    def as_float(value: Any) -> float | None:
        return None if value is None else float(value)

    relevance = judges.get("answer_relevance")
    return {
        "correct": as_float(judges.get("correct")),
        "sufficiency": as_float(judges.get("sufficiency")),
        "faithfulness": as_float(judges.get("faithfulness")),
        "citation_accuracy": as_float(judges.get("citation_accuracy")),
        "completeness": as_float(judges.get("completeness")),
        "answer_relevance": None if relevance is None else (float(relevance) - 1.0) / 4.0,
    }


def summarize_judges(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Summary of many ``judges`` dicts: means over decided questions and error counts.

    Means skip ``None``; judge errors are counted per judge, never folded into a mean.

    .. math:: \\overline{m} = \\frac{1}{|D_m|} \\sum_{q \\in D_m} m_q,\\quad
              D_m = \\{q : m_q \\text{ decided}\\}

    Examples
    --------
    >>> summarize_judges([{"correct": True, "faithfulness": 1.0},
    ...                   {"correct": None, "faithfulness": 0.5,
    ...                    "judge_errors": {"correctness": "invalid reply"}}])["judge_errors"]
    {'correctness': 1}
    """
    metrics = [judge_metrics(row) for row in rows]
    names = LLM_JUDGE_METRICS
    means: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for name in names:
        values = [m[name] for m in metrics if m[name] is not None]
        counts[name] = len(values)
        means[name] = (
            math.fsum(v for v in values if v is not None) / len(values) if values else None
        )
    errors: Counter[str] = Counter()
    for row in rows:
        errors.update((row.get("judge_errors") or {}).keys())
    agreements: dict[str, list[float]] = {}
    for row in rows:
        for judge, share in (row.get("judge_agreement") or {}).items():
            agreements.setdefault(judge, []).append(float(share))
    summary: dict[str, Any] = {
        "n": len(rows),
        "means": means,
        "n_decided": counts,
        "judge_errors": dict(sorted(errors.items())),
        "n_judge_errors": sum(errors.values()),
    }
    if agreements:
        summary["mean_agreement"] = {
            judge: math.fsum(shares) / len(shares) for judge, shares in sorted(agreements.items())
        }
    return summary


def items_from_rows(
    rows: Sequence[Mapping[str, Any]], chunk_texts: Mapping[str, str]
) -> tuple[list[int], list[JudgeItem]]:
    """The rows to judge (positions; rows whose generation failed are skipped) and their items.

    Each row's context is rebuilt from ``context_ids`` with ``chunk_texts`` (chunk id -> text).

    >>> items_from_rows([{"id": "q1", "question": "Q?", "answer": "A [1].",
    ...                   "context_ids": ["c1"], "answerable": True}], {"c1": "text"})[1][0].context
    ['text']
    """
    todo = [i for i, row in enumerate(rows) if not row.get("error")]
    items = []
    for i in todo:
        row = rows[i]
        missing = [cid for cid in row.get("context_ids", []) if cid not in chunk_texts]
        if missing:
            raise InputError(
                f"row {row.get('id')!r}: context chunk {missing[0]!r} is not among the chunks "
                "given; judge the run with the corpus and chunking it was made with"
            )
        prior = row.get("judges") or {}
        abstained = prior.get("abstained", row.get("abstained"))
        items.append(
            JudgeItem(
                question_id=str(row.get("id")),
                question=str(row.get("question", "")),
                answer=str(row.get("answer", "")),
                context=[chunk_texts[cid] for cid in row.get("context_ids", [])],
                reference_answer=row.get("reference_answer") or None,
                answerable=row.get("answerable", True) is not False,
                abstained=None if abstained is None else bool(abstained),
            )
        )
    return todo, items


def judge_rows(
    rows: Sequence[Mapping[str, Any]],
    chunk_texts: Mapping[str, str],
    judges: LLMJudges,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Add LLM verdicts to saved-run rows (see ``docs/saved-run-format.md``).

    Returns new rows: the LLM keys are merged into ``judges`` over any offline verdicts of the
    same name (``correct``, ``numeric_match``), other offline keys are kept.  Rows whose
    generation failed (``error`` set) are returned unchanged and cost nothing.

    Examples
    --------
    >>> from ragaudit.llm import LLMClient, LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", use_cache=False)
    >>> row = {"id": "q1", "question": "Q?", "answer": "", "error": "timeout", "judges": {}}
    >>> with LLMClient(cfg) as client:
    ...     judge_rows([row], {}, LLMJudges(client)) == [row]
    True
    """
    todo, items = items_from_rows(rows, chunk_texts)
    verdicts = judges.judge(items, progress)
    out = [dict(row) for row in rows]
    for i, verdict in zip(todo, verdicts, strict=True):
        out[i]["judges"] = _merge(rows[i].get("judges") or {}, verdict, judges.judges)
    return out


def _merge(
    prior: Mapping[str, Any], verdict: Mapping[str, Any], rerun: Sequence[str]
) -> dict[str, Any]:
    """New verdicts over old ones; per-judge bookkeeping of judges not re-run is kept, that of
    re-run judges replaced (so no stale error or agreement survives a re-judging)."""
    merged = {**prior, **verdict}
    for key in ("judge_versions", "judge_errors", "judge_agreement"):
        kept = {k: v for k, v in (prior.get(key) or {}).items() if k not in rerun}
        combined = {**kept, **(verdict.get(key) or {})}
        if combined:
            merged[key] = combined
        else:
            merged.pop(key, None)
    if merged.get("judge_errors"):
        merged["judge_error"] = "; ".join(f"{k}: {v}" for k, v in merged["judge_errors"].items())
    else:
        merged.pop("judge_error", None)
    return merged


#: judge -> the per-question metrics it decides (names as ``ragaudit compare`` pairs them).
METRICS_OF: dict[str, tuple[str, ...]] = {
    "sufficiency": ("sufficiency",),
    "correctness": ("correct", "completeness"),
    "faithfulness": ("faithfulness",),
    "citations": ("citation_accuracy",),
    "relevance": ("answer_relevance",),
}


def judge_saved_run(
    saved: SavedRun,
    chunk_texts: Mapping[str, str],
    judges: LLMJudges,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[SavedRun, dict[str, Any]]:
    """Judge a saved run and return the judged run and the judge summary.

    The judged run has each judged row's ``judges`` and ``metrics`` updated (the metrics of
    the judges run, see :data:`METRICS_OF`), ``config["judges"] = "offline+llm"``
    (:data:`~ragaudit.data.saved_run_metrics.JUDGES_OFFLINE_LLM`) and ``config["llm_judges"]``
    (model, endpoint, judges, prompt versions, repeats, temperature, seed: never the key).
    Its ``summary`` is the input's: recompute it with
    :func:`ragaudit.data.saved_run_summary.summarise_run` (the one place a summary is made).

    Returns ``(judged run, summarize_judges of the judged rows)``.
    """
    rows = judge_rows(saved.rows, chunk_texts, judges, progress)
    wanted = [m for name in judges.judges for m in METRICS_OF[name]]
    for row in rows:
        if row.get("error"):
            continue
        values = judge_metrics(row["judges"])
        row["metrics"] = {**(row.get("metrics") or {}), **{m: values[m] for m in wanted}}
    report = summarize_judges([r["judges"] for r in rows if not r.get("error")])
    client = judges.client
    config = {
        **saved.config.to_dict(),
        "judges": JUDGES_OFFLINE_LLM,
        "llm_judges": {
            "model": client.model,
            "endpoint": client.endpoint,
            "judges": list(judges.judges),
            "versions": judges.versions,
            "repeats": judges.repeats,
            "temperature": client.config.temperature,
            "seed": client.config.seed,
        },
    }
    document = {**saved.to_dict(), "config": config, "rows": rows}
    return SavedRun.from_dict(document, path=saved.path), report
