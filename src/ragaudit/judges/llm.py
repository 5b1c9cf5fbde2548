"""LLM judges: sufficiency, answer correctness, faithfulness, citation accuracy, relevance.

Each judge sends one versioned prompt (:mod:`ragaudit.judges.prompts`), asks for JSON, validates
it (:mod:`ragaudit.judges.schemas`) and, when the reply is invalid, asks again quoting the
validation error.  A judge that still has no valid verdict after its retry budget, or whose
request failed, records ``judge_error`` with the reason: its verdict is ``None``, never counted
right or wrong, and :func:`~ragaudit.judges.llm_rows.summarize_judges` counts it.  Applying
the verdicts to saved-run rows lives in :mod:`ragaudit.judges.llm_rows` (re-exported here).

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

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragaudit._validate import check_int
from ragaudit.exceptions import InputError
from ragaudit.judges.llm_rows import (
    METRICS_OF,
    JudgeItem,
    generation_rows,
    items_from_rows,
    judge_metrics,
    judge_rows,
    judge_saved_run,
    summarize_judges,
)
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
from ragaudit.llm.client import LLMClient
from ragaudit.llm.replies import DryRunEstimate, PlannedCall

__all__ = [
    "JUDGE_NAMES",
    "METRICS_OF",
    "JudgeItem",
    "LLMJudges",
    "generation_rows",
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
    schema: dict[str, Any]  # the response_format schema: {"name", "schema"}


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
        self.client = client
        self.judges = tuple(judges)
        self.repeats = check_int(repeats, "judge_repeats")

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
                            schema=call.schema,
                            max_tokens=call.prompt.max_output_tokens,
                        )
                    )
        return planned

    def dry_run(self, items: Sequence[JudgeItem]) -> DryRunEstimate:
        """Calls, cache hits, tokens (chars/4) and cost of :meth:`judge`, sending nothing."""
        return self.client.estimate(self.plan(items))

    def judge_once(
        self,
        items: Sequence[JudgeItem],
        repeat: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Ask every judge once per item as repeat ``repeat`` (its own cache entry and seed, as
        the ``repeat``-th of :meth:`judge`'s repeats); one ``judges`` dict per item.

        ``judges audit`` sends the same request again this way to measure repeat noise.
        """
        tasks = [(i, judge) for i in range(len(items)) for judge in self.judges]

        def run(task: tuple[int, str]) -> dict[str, Any]:
            return self._run_one(items[task[0]], task[1], repeat)

        outcomes = self.client.map(run, tasks, progress)
        by_item: list[dict[str, list[dict[str, Any]]]] = [{} for _ in items]
        for (i, judge), outcome in zip(tasks, outcomes, strict=True):
            by_item[i][judge] = [outcome]
        return [self._combine(per_judge) for per_judge in by_item]

    def plan_once(self, items: Sequence[JudgeItem], repeat: int) -> list[PlannedCall]:
        """The requests :meth:`judge_once` would send (for dry runs)."""
        return [
            replace(call, repeat=repeat)
            for call in LLMJudges(self.client, self.judges, repeats=1).plan(items)
        ]

    # ----------------------------------------------------------------------------------------
    def _run_one(self, item: JudgeItem, judge: str, repeat: int) -> dict[str, Any]:
        call = self._build(item, judge)
        if not isinstance(call, _Call):
            return call
        outcome = self.client.chat_json(
            call.messages,
            call.parse,
            prompt_version=call.prompt.version,
            repeat=repeat,
            schema=call.schema,
            max_tokens=call.prompt.max_output_tokens,
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
        from ragaudit.judges.schemas import json_schema, parse_sufficiency

        def finish(verdict: Any) -> dict[str, Any]:
            missing = [f.fact for f in verdict.facts if not f.in_context]
            return {"sufficiency": not missing, "missing_facts": missing}

        return _Call(messages, SUFFICIENCY, parse_sufficiency, finish, json_schema("Sufficiency"))

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
        from ragaudit.judges.schemas import json_schema, parse_correctness

        def finish(verdict: Any) -> dict[str, Any]:
            return {
                "correct": verdict.verdict == "correct",
                "correctness": verdict.verdict,
                "completeness": float(verdict.completeness),
                "numeric_match": bool(verdict.numbers_match),
            }

        return _Call(messages, CORRECTNESS, parse_correctness, finish, json_schema("Correctness"))

    def _build_faithfulness(self, item: JudgeItem) -> dict[str, Any] | _Call:
        if item.did_abstain():
            # Declining to answer asserts nothing, so it fabricates nothing.
            return {"faithfulness": 1.0, "n_claims": 0, "unsupported_claims": []}
        messages = FAITHFULNESS.messages(
            question=data_block("question", item.question),
            context=numbered_chunks(list(item.context)),
            answer=data_block("answer", item.answer),
        )
        from ragaudit.judges.schemas import json_schema, parse_faithfulness

        def finish(verdict: Any) -> dict[str, Any]:
            claims = verdict.claims
            supported = sum(c.supported for c in claims)
            return {
                "faithfulness": supported / len(claims) if claims else 1.0,
                "n_claims": len(claims),
                "unsupported_claims": [c.claim for c in claims if not c.supported],
            }

        return _Call(
            messages, FAITHFULNESS, parse_faithfulness, finish, json_schema("Faithfulness")
        )

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
        from ragaudit.judges.schemas import json_schema, parse_citations

        def parse(value: Any) -> Any:
            return parse_citations(value, to_check)

        def finish(verdict: Any) -> dict[str, Any]:
            supported = {(v.sentence, v.chunk) for v in verdict.verdicts if v.supported}
            return result(supported)

        schema = json_schema("Citations", max_items=len(to_check))
        return _Call(messages, CITATIONS, parse, finish, schema)

    def _build_relevance(self, item: JudgeItem) -> dict[str, Any] | _Call:
        if item.did_abstain():
            return {"answer_relevance": None}
        messages = RELEVANCE.messages(
            question=data_block("question", item.question),
            answer=data_block("answer", item.answer),
        )
        from ragaudit.judges.schemas import json_schema, parse_relevance

        def finish(verdict: Any) -> dict[str, Any]:
            return {"answer_relevance": int(verdict.score)}

        return _Call(messages, RELEVANCE, parse_relevance, finish, json_schema("Relevance"))

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
