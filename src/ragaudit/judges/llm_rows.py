"""LLM verdicts and saved-run rows: the item a row is judged as, the metrics a verdict
decides, their summary, and judging a whole saved run (:func:`judge_saved_run`).

The judges themselves are :class:`ragaudit.judges.llm.LLMJudges`; everything here is plain
data in, plain data out, so it can be tested without a model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.data.saved_run import SavedRun, generation_error_of
from ragaudit.data.saved_run.metrics import JUDGES_OFFLINE_LLM, LLM_JUDGE_METRICS
from ragaudit.data.saved_run.repeated import repeat_row
from ragaudit.exceptions import InputError

if TYPE_CHECKING:
    from ragaudit.judges.llm import LLMJudges

__all__ = [
    "METRICS_OF",
    "JudgeItem",
    "generation_rows",
    "is_undecided",
    "items_from_rows",
    "judge_metrics",
    "judge_rows",
    "judge_saved_run",
    "summarize_judges",
]


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


def is_undecided(row: Mapping[str, Any]) -> bool:
    """Whether the offline judges left a verdict of the row undecided (``judges.reasons``).

    >>> is_undecided({"judges": {"correct": None, "reasons": {"correct": "no claim"}}})
    True
    >>> is_undecided({"judges": {"correct": True}})
    False
    """
    return bool((row.get("judges") or {}).get("reasons"))


def items_from_rows(
    rows: Sequence[Mapping[str, Any]],
    chunk_texts: Mapping[str, str],
    only_undecided: bool = False,
) -> tuple[list[int], list[JudgeItem]]:
    """The rows to judge (positions; rows whose generation failed are skipped, and with
    ``only_undecided`` the rows whose offline verdicts are all decided) and their items.

    Each row's context is rebuilt from ``context_ids`` with ``chunk_texts`` (chunk id -> text).

    >>> items_from_rows([{"id": "q1", "question": "Q?", "answer": "A [1].",
    ...                   "context_ids": ["c1"], "answerable": True}], {"c1": "text"})[1][0].context
    ['text']
    """
    todo = [
        i
        for i, row in enumerate(rows)
        if not generation_error_of(row) and (not only_undecided or is_undecided(row))
    ]
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
    only_undecided: bool = False,
) -> list[dict[str, Any]]:
    """Add LLM verdicts to saved-run rows (see ``docs/saved-run-format.md``).

    Returns new rows: the LLM keys are merged into ``judges`` over any offline verdicts of the
    same name (``correct``, ``numeric_match``), other offline keys are kept.  Rows whose
    generation failed (``generation_error`` set) are returned unchanged and cost nothing; so
    are, with ``only_undecided``, the rows the offline judges decided (:func:`is_undecided`).

    Examples
    --------
    >>> from ragaudit.judges.llm import LLMJudges
    >>> from ragaudit.llm import LLMClient, LLMConfig
    >>> cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", use_cache=False)
    >>> row = {"id": "q1", "question": "Q?", "answer": None, "generation_error": "timeout",
    ...        "judges": {}}
    >>> with LLMClient(cfg) as client:
    ...     judge_rows([row], {}, LLMJudges(client)) == [row]
    True
    """
    todo, items = items_from_rows(rows, chunk_texts, only_undecided)
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
    only_undecided: bool = False,
) -> tuple[SavedRun, dict[str, Any]]:
    """Judge a saved run and return the judged run and the judge summary.

    With ``only_undecided`` only the rows whose offline verdicts left something undecided
    (``judges.reasons``; ``ragaudit judge --only-undecided``) are sent; the others keep their
    offline verdicts and metrics, and the summary counts them as ``n_decided_offline``.

    The judged run has each judged row's ``judges`` and ``metrics`` updated (the metrics of
    the judges run, see :data:`METRICS_OF`), ``config["judges"] = "offline+llm"``
    (:data:`~ragaudit.data.saved_run.metrics.JUDGES_OFFLINE_LLM`) and ``config["llm_judges"]``
    (model, endpoint, judges, prompt versions, repeats, temperature, seed: never the key).
    Its ``summary`` is the input's: recompute it with
    :func:`ragaudit.data.saved_run.summary.summarise_run` (the one place a summary is made).

    A repeated run (``config.repeats`` R >= 2) has every (question, repeat) generation
    judged, in one batch through the one client (its cache: a rerun sends nothing already
    answered), and each repeat's verdicts and judge metrics stored in its own entry of
    ``repeats``; the summary then counts (question, repeat) generations and says
    ``n_repeats``.

    Returns ``(judged run, summarize_judges of the judged rows)``; the summary also counts
    the rows not judged because their generation failed (``n_generation_errors``).
    """
    flat = generation_rows(saved)
    sent = [not only_undecided or is_undecided(row) for row in flat]
    rows = judge_rows(flat, chunk_texts, judges, progress, only_undecided)
    wanted = [m for name in judges.judges for m in METRICS_OF[name]]
    for row, judged in zip(rows, sent, strict=True):
        if generation_error_of(row) or not judged:
            continue
        values = judge_metrics(row["judges"])
        row["metrics"] = {**(row.get("metrics") or {}), **{m: values[m] for m in wanted}}
    report = summarize_judges(
        [r["judges"] for r, judged in zip(rows, sent, strict=True)
         if judged and not generation_error_of(r)]
    )  # fmt: skip
    if only_undecided:
        report["n_decided_offline"] = sum(
            1 for r, judged in zip(rows, sent, strict=True)
            if not judged and not generation_error_of(r)
        )  # fmt: skip
    # rows without an answer are not judged: counted, never folded into a judge's mean
    report["n_generation_errors"] = sum(1 for r in rows if generation_error_of(r))
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
    if saved.repeats > 1:  # every (question, repeat) judged: fold the generations back
        report["n_repeats"] = saved.repeats
        rows = _fold(saved.rows, rows)
    document = {**saved.to_dict(), "config": config, "rows": rows}
    return SavedRun.from_dict(document, path=saved.path), report


def generation_rows(saved: SavedRun) -> list[dict[str, Any]]:
    """Every generation of ``saved`` as a row of its own, repeat by repeat: the rows
    themselves for a run with one generation, else repeat 0's rows, then repeat 1's...
    (:func:`~ragaudit.data.saved_run.repeated.repeat_row`): what the LLM judges judge.

    >>> from ragaudit.data.saved_run import SavedRun
    >>> run = SavedRun.from_dict({"config": {"k": 1, "repeats": 2}, "rows": [
    ...     {"id": "q1", "retrieved": [], "answer": "a", "repeats": [{"seed": 3, "answer": "b"}]}]})
    >>> [(r["id"], r["answer"]) for r in generation_rows(run)]
    [('q1', 'a'), ('q1', 'b')]
    """
    if saved.repeats == 1:
        return [dict(row) for row in saved.rows]
    return [repeat_row(row, r) for r in range(saved.repeats) for row in saved.rows]


def _fold(
    original: Sequence[Mapping[str, Any]], judged: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The judged generations (:func:`generation_rows` order) back into repeated rows: repeat
    0's fields in the row, each later repeat's ``judges`` and ``metrics`` in its entry."""
    n = len(original)
    out = []
    for i, row in enumerate(original):
        first = dict(judged[i])
        entries = []
        for r, entry in enumerate(row["repeats"], start=1):
            generation = judged[r * n + i]
            entries.append({**entry, **{key: generation[key] for key in ("judges", "metrics")
                                        if key in generation}})  # fmt: skip
        first["repeats"] = entries
        out.append(first)
    return out
