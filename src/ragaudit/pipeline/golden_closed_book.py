"""Closed-book leak: which questions of a golden set a model answers without retrieval.

:func:`closed_book_leak` sends every answerable question to the LLM generator with an empty
context (the generator's own prompt, its context block reading ``(no passages)``), and judges
each answer with the offline judges (:func:`ragaudit.judges.offline.judge_offline`, context
empty).  A question answered correctly is flagged: the model knows the answer without the
documents (it was in its training data, or the question gives it away), so the question
cannot tell retrieval that works from retrieval that fails.  Answers the offline judge cannot
decide and failed requests are counted apart, never folded into the share.

The share of leaked questions carries its Clopper-Pearson interval, over the decided answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.data.golden import GoldenQuestion
from ragaudit.judges.offline import judge_offline
from ragaudit.pipeline.golden_findings import CheckSummary, Finding
from ragaudit.pipeline.golden_validity import summarise

__all__ = ["ClosedBook", "closed_book_leak"]

METHOD = (
    "each answerable question sent to the LLM generator with an empty context; flagged when "
    "the offline judge finds the answer correct"
)


@dataclass(frozen=True)
class ClosedBook:
    """What :func:`closed_book_leak` found.

    Attributes
    ----------
    model : str
        The model asked.
    n : int
        Answerable questions asked.
    n_decided : int
        Answers the offline judge decided (the share's denominator).
    n_undecided, n_errors : int
        Answers it could not decide; requests that failed.
    leaked : tuple of str
        Ids of the questions answered correctly without retrieval.
    summary : CheckSummary
        n (decided), flagged, Clopper-Pearson interval, method.
    """

    model: str
    n: int
    n_decided: int
    n_undecided: int
    n_errors: int
    leaked: tuple[str, ...]
    summary: CheckSummary

    def lines(self) -> list[str]:
        """The report's lines."""
        s = self.summary
        share = (
            f"{s.flagged}/{s.n} decided answers correct without retrieval "
            f"({s.flagged / s.n:.1%} [{s.low:.1%}, {s.high:.1%}], Clopper-Pearson exact 95%)"
            if s.n and s.low is not None and s.high is not None
            else "no decided answer"
        )
        return [
            f"model {self.model}: {self.n} answerable questions asked with an empty context; "
            + share,
            f"undecided by the offline judge: {self.n_undecided}; failed requests: {self.n_errors}",
            f"method: {METHOD}",
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "model": self.model,
            "n": self.n,
            "n_decided": self.n_decided,
            "n_undecided": self.n_undecided,
            "n_errors": self.n_errors,
            "leaked": list(self.leaked),
            **{k: v for k, v in self.summary.to_dict().items() if k in ("share", "ci_low",
                                                                         "ci_high", "method")},
        }  # fmt: skip


def closed_book_leak(
    questions: Sequence[GoldenQuestion],
    generator: Any,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Finding], ClosedBook]:
    """Ask ``generator`` every answerable question with no context; flag the correct answers.

    Parameters
    ----------
    questions : sequence of GoldenQuestion
    generator : LLMGenerator
        Any object with ``generate_many([(question, [])]) -> [Generation]`` and a ``client``
        whose ``model`` names the model.

    Returns
    -------
    (findings, ClosedBook)
    """
    asked = [q for q in questions if q.answerable and q.answer]
    generations = generator.generate_many([(q.question, []) for q in asked], progress)
    findings = []
    leaked: list[str] = []
    decided = undecided = errors = 0
    for q, generation in zip(asked, generations, strict=True):
        if generation.error:
            errors += 1
            continue
        verdict = judge_offline(
            answer=generation.answer, answerable=True, reference_answer=q.answer,
            keywords=q.keywords, context_texts=[], question=q.question, sources=q.sources,
        )["correct"]  # fmt: skip
        if verdict is None:
            undecided += 1
            continue
        decided += 1
        if verdict:
            leaked.append(q.id)
            findings.append(
                Finding("closed-book leak", q.id, q.line,
                        f"answered correctly with no context ({generation.answer[:80]!r}): the "
                        "model knows it without retrieval, so the question cannot show "
                        "whether retrieval works")
            )  # fmt: skip
    model = str(getattr(getattr(generator, "client", None), "model", "?"))
    summary = summarise("closed-book leak", len(leaked), decided, "decided answers", METHOD)
    result = ClosedBook(model, len(asked), decided, undecided, errors, tuple(leaked), summary)
    return findings, result
