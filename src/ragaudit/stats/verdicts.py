"""Verdicts of a paired comparison, and the one display rule for p-values.

A verdict is the decision of the exact paired sign-flip test (McNemar's exact test for 0/1
metrics) at ``alpha = 1 - confidence``; the interval printed beside it is that test inverted
(:mod:`ragaudit.stats.signflip_interval`), so it excludes 0 exactly when the test rejects.  An
interval never gates a verdict: the betting interval (``--ci betting``) is valid for every
distribution but far wider than the test, and requiring it to exclude 0 made ``compare`` miss
changes its own exact test found (issue 21).

* ``too few differing questions``: fewer than :func:`min_differing` questions have a non-zero
  difference.  With ``m`` differing questions the smallest two-sided sign-flip p-value
  possible (all ``m`` favouring one system) is ``2 / 2**m``; when even that is not below
  alpha no data could have been significant, and saying "no evidence" or "borderline"
  would suggest the test looked and found nothing.
* ``SIGNIFICANT``: ``p < alpha``;
* ``borderline``: ``alpha <= p < 2 * alpha``;
* ``no evidence``: otherwise.

The sign-flip test is exact when, under "no change", each difference is as likely to be ``+d``
as ``-d``.  A change of mean 0 can be skewed (most questions gain a little, a few lose a lot):
then the verdict is SIGNIFICANT more often than alpha, 0.114 at n = 10 and 0.072 at n = 20 for
``+0.05`` w.p. 0.8 / ``-0.2`` w.p. 0.2 (skewness -1.5; ``benchmarks/signflip_null_skew.py``,
exact).  :func:`skew_note` flags a fractional row with fewer than :data:`SKEW_MAX_N` questions
whose differing questions are strongly skewed (:data:`SKEW_LIMIT`; the skewness is
:func:`ragaudit.stats.compare.skewness`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ragaudit.data.saved_run.metrics import JUDGE_METRICS

__all__ = [
    "BORDERLINE",
    "NO_EVIDENCE",
    "SIGNIFICANT",
    "TOO_FEW",
    "format_pvalue",
    "judged_rate_note",
    "min_differing",
    "no_change_sentence",
    "skew_note",
    "verdict",
    "verdict_rule",
]

SIGNIFICANT = "SIGNIFICANT"
BORDERLINE = "borderline"
NO_EVIDENCE = "no evidence"
TOO_FEW = "too few differing questions"

#: Below this many questions a skewed row is flagged: from n = 20 the exact type-I error of the
#: skewness -1.5 case is 0.072 and falls towards 0.05 (0.054 at n = 30).
SKEW_MAX_N = 20
#: |skewness| of the differing questions' differences from which a row is "strongly skewed":
#: at skewness -1.5 the type-I error is 0.11-0.26 for n = 6-10, at -0.87 up to 0.12.
SKEW_LIMIT = 1.0


def min_differing(alpha: float) -> int:
    """Fewest differing questions with which a sign-flip test can reach ``p < alpha``.

    The smallest attainable two-sided p with ``m`` non-zero differences is ``2**(1 - m)``.

    Examples
    --------
    >>> min_differing(0.05), min_differing(0.01), 2 ** (1 - 6) < 0.05 <= 2 ** (1 - 5)
    (6, 8, True)
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: expected a number in (0, 1), found {alpha!r}")
    m = max(1, math.ceil(1.0 - math.log2(alpha)))
    while 2.0 ** (1 - m) >= alpha:  # guard the boundary against log rounding
        m += 1
    while m > 1 and 2.0 ** (2 - m) < alpha:
        m -= 1
    return m


def verdict(pvalue: float, alpha: float, n_differing: int | None = None) -> str:
    """Classify a paired comparison by its exact test (rules in the module docstring).

    Parameters
    ----------
    pvalue : float
        The exact (or Monte Carlo) two-sided sign-flip p-value of "no difference".
    alpha : float
    n_differing : int, optional
        Questions (clusters, with ``--cluster-by``) with a non-zero difference; None skips the
        minimum-count rule.

    Examples
    --------
    >>> verdict(0.001, 0.05), verdict(0.03, 0.05), verdict(0.08, 0.05), verdict(0.247, 0.05)
    ('SIGNIFICANT', 'SIGNIFICANT', 'borderline', 'no evidence')
    >>> verdict(1.0, 0.05, n_differing=1)   # n = 1: one question differs
    'too few differing questions'
    """
    if n_differing is not None and n_differing < min_differing(alpha):
        return TOO_FEW
    if pvalue < alpha:
        return SIGNIFICANT
    if pvalue < 2 * alpha:
        return BORDERLINE
    return NO_EVIDENCE


def verdict_rule(alpha: float) -> str:
    """The verdict rule in one line, for the foot of a table.

    >>> verdict_rule(0.05).split(";")[0]
    'verdict: SIGNIFICANT = exact test p < 0.05 (the sign-flip interval then excludes 0)'
    """
    m = min_differing(alpha)
    return (
        f"verdict: SIGNIFICANT = exact test p < {alpha:g} (the sign-flip interval then excludes "
        f"0); borderline = p < {2 * alpha:g}; no evidence = otherwise; too few differing "
        "questions = "
        f"fewer than {m} questions differ, so even if all favoured one run p >= "
        f"2^(1-{m - 1}) = {2.0 ** (2 - m):.3g} and no result could be significant."
    )


def format_pvalue(pvalue: float) -> str:
    """The one display rule for p-values: ``<0.001`` below 0.001, otherwise three decimals.

    >>> format_pvalue(0.0004), format_pvalue(0.001), format_pvalue(0.04862), format_pvalue(1.0)
    ('<0.001', '0.001', '0.049', '1.000')
    """
    return "<0.001" if pvalue < 0.001 else f"{pvalue:.3f}"


def skew_note(metric: str, n: int, skew: float | None, alpha: float = 0.05) -> str | None:
    """The footnote of a verdict whose sign-flip test may reject too often: fewer than
    :data:`SKEW_MAX_N` questions and differences skewed beyond :data:`SKEW_LIMIT`.

    >>> skew_note("faithfulness", 10, -1.5).split(";")[0]
    'faithfulness: n = 10 and the differences are skewed (skewness -1.50)'
    >>> skew_note("faithfulness", 40, -1.5) is None, skew_note("mrr", 10, 0.4) is None
    (True, True)
    """
    if skew is None or n >= SKEW_MAX_N or abs(skew) < SKEW_LIMIT:
        return None
    return (
        f"{metric}: n = {n} and the differences are skewed (skewness {skew:+.2f}); the "
        "sign-flip test assumes differences symmetric under no change, and with skewed ones "
        f"below {SKEW_MAX_N} questions it can say SIGNIFICANT more often than {alpha:g} "
        "(0.11 at n = 10 for skewness -1.5): read the verdict as indicative"
    )


def no_change_sentence(low: float, high: float, confidence: float = 0.95) -> str:
    """What a comparison without a significant change rules out, from its interval.

    Absence of evidence is not evidence of absence: instead of "did not move", say what the
    interval excludes.  An interval ``[low, high]`` around 0 rules out every change larger
    than ``max(|low|, |high|)`` in either direction.

    >>> no_change_sentence(-0.09, 0.104)
    'no evidence of a change; changes beyond ±0.104 are ruled out at 95%'
    """
    bound = max(abs(low), abs(high))
    return (
        f"no evidence of a change; changes beyond ±{bound:.3f} are ruled out at "
        f"{100 * confidence:g}%"
    )


def judged_rate_note(metrics: Iterable[str]) -> str | None:
    """The caveat every judged number needs: its interval is about the judge's verdicts.

    A judge biased by +0.02 moves the judged rate by 0.02, and an interval around the judged
    rate then covers the true rate less often (0.86 at n = 200 in issue 21's simulation); only
    human labels measure the bias (``ragaudit calibrate``: PPI++).  None when no metric is
    judged.

    >>> judged_rate_note(["recall@k", "correct"]).split(";")[0]
    'correct: judged by a judge'
    >>> judged_rate_note(["recall@k"]) is None
    True
    """
    judged = [m for m in metrics if m in {name for name, _, _ in JUDGE_METRICS}]
    if not judged:
        return None
    return (
        f"{', '.join(judged)}: judged by a judge; the intervals estimate the judge's rate, not "
        "the true rate (`ragaudit calibrate RUN --human LABELS` estimates the true rate)"
    )
