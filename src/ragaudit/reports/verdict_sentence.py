"""The decision of a paired comparison in one sentence (``compare``'s first screen), and the
words a zero-width interval needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragaudit.stats.compare import Comparison, MetricComparison

__all__ = ["FULL_HINT", "ZERO_WIDTH", "verdict_sentence", "zero_width_words"]


def _ci(low: float, high: float) -> str:
    return f"[{low:+.3f}, {high:+.3f}]"


#: What ``compare`` prints only with ``--full``, named in the line that says so.
FULL_HINT = (
    "--full adds the methods, a paired view of each 0/1 metric (McNemar table, the questions "
    "that differ, interval width vs n), what each interval rules out with its MDE, and the "
    "verdict rule"
)


def verdict_sentence(result: Comparison) -> str:
    """The decision in one sentence: what moved for real, and for the rest which verdict and
    what their intervals rule out.

    >>> from ragaudit.data.per_question import PerQuestionMetrics
    >>> from ragaudit.stats.compare import compare_runs
    >>> a = PerQuestionMetrics("a", {f"q{i}": {"hit": 1.0, "c": 1.0} for i in range(12)})
    >>> b = PerQuestionMetrics("b", {f"q{i}": {"hit": float(i < 2), "c": 1.0} for i in range(12)})
    >>> print(verdict_sentence(compare_runs(a, b, seed=0)))
    verdict: b vs a: moved for real: hit -0.833 [-0.979, -0.198]; too few differing questions: \
c (changes beyond ±0.265 ruled out at 95%).
    """
    moved: list[str] = []
    rest: dict[str, list[MetricComparison]] = {}
    for row in result.metrics:
        ci = row.confidence_interval
        if row.verdict == "SIGNIFICANT":
            moved.append(f"{row.metric} {row.statistic:+.3f} {_ci(ci.low, ci.high)}")
        else:
            rest.setdefault(row.verdict, []).append(row)
    parts = ["moved for real: " + ("; ".join(moved) if moved else "nothing")]
    level = f"{100 * result.confidence:g}%"
    for verdict, rows in rest.items():
        bounds = [max(abs(r.confidence_interval.low), abs(r.confidence_interval.high))
                  for r in rows]  # fmt: skip
        span = (f"±{min(bounds):.3f}" if min(bounds) == max(bounds)
                else f"±{min(bounds):.3f} to ±{max(bounds):.3f}")  # fmt: skip
        names = ", ".join(r.metric for r in rows)
        flat = [r.metric for r in rows if r.confidence_interval.high <= r.confidence_interval.low]
        zero = (f"; zero-width intervals ({', '.join(flat)}): every question differs by the same "
                "amount, no spread to measure, not proof of no change") if flat else ""  # fmt: skip
        parts.append(f"{verdict}: {names} (changes beyond {span} ruled out at {level}{zero})")
    return f"verdict: {result.name_b} vs {result.name_a}: " + "; ".join(parts) + "."


#: Beside a zero-width interval, which rules out nothing beyond the questions at hand.
ZERO_WIDTH = (
    "every question has the same difference ({d:+.3f}), so the interval has zero width: the "
    "data show no spread, which is not proof that no change exists"
)


def zero_width_words(row: MetricComparison) -> str:
    """The words a zero-width interval needs, or ``""``."""
    ci = row.confidence_interval
    return "" if ci.high > ci.low else "; " + ZERO_WIDTH.format(d=row.statistic)
