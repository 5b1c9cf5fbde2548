"""What the LLM stages of a run cost: calls, tokens and dollars, per stage and in total."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.pipeline.generators import Generator

__all__ = ["combine_llm_costs", "generator_identity", "llm_cost_of_rows"]


def llm_cost_of_rows(
    rows: Sequence[Mapping[str, Any]], generator: Generator | None
) -> dict[str, Any]:
    """Calls, tokens and cost of the generator, from the rows' ``usage`` (cached replies
    included), so the figure is the same on a rerun and after a resume.

    Without a price table (a live pipeline reports its own cost), the cost is the sum of the
    rows' ``usage.cost_usd``, or unknown (None) when one row lacks it: an unreported cost is
    never counted as free.

    >>> llm_cost_of_rows([{"usage": {"cost_usd": 0.25}}, {"usage": {"cost_usd": 0.5}}],
    ...                  None)["cost_usd"]
    0.75
    """
    client = getattr(generator, "client", None)
    used = [r["usage"] for r in rows if isinstance(r.get("usage"), Mapping)]
    input_tokens = sum(int(u.get("input_tokens") or 0) for u in used)
    output_tokens = sum(int(u.get("output_tokens") or 0) for u in used)
    model = str(getattr(client, "model", "") or (used[0].get("model") if used else "") or "")
    prices = getattr(client, "prices", None)
    return {
        "endpoint": getattr(client, "endpoint", None),
        "model": model,
        "calls": len(used),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": (
            _reported_cost(used, len(rows))
            if prices is None
            else prices.cost(model, input_tokens, output_tokens)
        ),
        "price_table": (
            prices.source if prices is not None and prices.lookup(model) is not None else None
        ),
    }


def _reported_cost(used: Sequence[Mapping[str, Any]], n_rows: int) -> float | None:
    costs = [u.get("cost_usd") for u in used] + [None] * (n_rows - len(used))
    numbers = [float(c) for c in costs if isinstance(c, (int, float)) and not isinstance(c, bool)]
    return round(math.fsum(numbers), 10) if costs and len(numbers) == len(costs) else None


def combine_llm_costs(by_stage: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over LLM stages (``generator``, ``judges``) plus the per-stage figures.

    The cost is ``None`` (unknown) as soon as one stage's cost is unknown: an unpriced model
    is never counted as free.

    >>> combine_llm_costs({"generator": {"model": "m", "calls": 2, "input_tokens": 10,
    ...     "output_tokens": 4, "cost_usd": 0.5}, "judges": {"model": "m", "calls": 3,
    ...     "input_tokens": 30, "output_tokens": 6, "cost_usd": 0.25}})["cost_usd"]
    0.75
    """
    stages = {name: dict(cost) for name, cost in by_stage.items()}
    costs = [c.get("cost_usd") for c in stages.values()]
    first = next(iter(stages.values()), {})
    return {
        "endpoint": first.get("endpoint"),
        "model": first.get("model"),
        "calls": sum(int(c.get("calls") or 0) for c in stages.values()),
        "input_tokens": sum(int(c.get("input_tokens") or 0) for c in stages.values()),
        "output_tokens": sum(int(c.get("output_tokens") or 0) for c in stages.values()),
        "cost_usd": (
            None
            if any(c is None for c in costs)
            else round(math.fsum(c for c in costs if c is not None), 10)
        ),
        "by_stage": stages,
    }


def generator_identity(generator: Generator) -> dict[str, Any]:
    """What decides an LLM generator's answers; part of the config, so a checkpoint made with
    another model or temperature is never resumed into this run.  Never the key."""
    client: Any = getattr(generator, "client", None)
    cfg = client.config
    return {
        "model": client.model,
        "endpoint": client.endpoint,
        "prompt_version": getattr(generator, "prompt_version", None),
        "temperature": cfg.temperature,
        "seed": cfg.seed,
        "max_tokens": cfg.max_tokens,
    }
