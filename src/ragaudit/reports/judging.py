"""What ``ragaudit judge --dry-run`` prints: the LLM judges' calls, tokens and cost, unsent."""

from __future__ import annotations

from ragaudit.llm.replies import DryRunEstimate
from ragaudit.reports.report import Report, Section, Text
from ragaudit.reports.runs import money

__all__ = ["judge_dry_run_report"]


def judge_dry_run_report(estimate: DryRunEstimate, model: str | None) -> Report:
    """One line in the terminal; the numbers as JSON.

    >>> from ragaudit.reports.renderer import render_text
    >>> estimate = DryRunEstimate("m", 10, 4, 1200, 300, None)
    >>> text = render_text(judge_dry_run_report(estimate, "m"))
    >>> print(text, end="")  # doctest: +NORMALIZE_WHITESPACE
    dry run: 10 calls (4 cached), about 1200 input + 300 output tokens (chars/4 estimate, schema
    retries excluded), cost unknown (model not in the price table) with m
    """
    line = (
        f"dry run: {estimate.calls} calls ({estimate.cached_calls} cached), about "
        f"{estimate.input_tokens} input + {estimate.output_tokens} output tokens "
        f"(chars/4 estimate, schema retries excluded), cost {money(estimate.cost_usd)} "
        f"with {model}"
    )
    data = {
        "calls": estimate.calls,
        "cached_calls": estimate.cached_calls,
        "estimated_input_tokens": estimate.input_tokens,
        "estimated_output_tokens": estimate.output_tokens,
        "estimated_cost_usd": estimate.cost_usd,
        "model": model,
    }
    return Report("", (Section("", (Text((line,)),)),), data=data)
