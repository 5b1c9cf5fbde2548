"""Names of the statistical procedures a user can choose.

Kept apart from the procedures so that ``ragaudit compare --help`` (and any option list) can
read them without importing numpy or scipy (issue 15, "start instantly").
"""

from __future__ import annotations

__all__ = [
    "CI_METHODS",
    "PLAN_DISAGREEMENTS",
    "PLAN_SIZES",
    "SHORT_METHOD_NAMES",
    "short_method",
]

#: Interval of a paired difference: ``auto``/``score`` = McNemar's exact test inverted for 0/1
#: metrics and the inverted sign-flip test (the verdict's own test) otherwise; ``betting`` = the
#: betting interval (Waudby-Smith-Ramdas, valid for any distribution) for non-0/1 scores in [0, 1];
#: ``bootstrap`` (= ``percentile``) or ``bca`` for every metric.  No interval gates a verdict.
CI_METHODS: tuple[str, ...] = ("auto", "score", "betting", "bootstrap", "percentile", "bca")

#: The planning table's default golden-set sizes and discordance rates (``ragaudit plan`` and
#: :func:`ragaudit.plan`).
PLAN_SIZES: tuple[int, ...] = (20, 42, 100, 300, 1000)
PLAN_DISAGREEMENTS: tuple[float, ...] = (0.1, 0.2, 0.3)

#: Short names of the interval and p-value methods, for tables' method columns and one-line
#: summaries (JSON keeps the full names).
SHORT_METHOD_NAMES: dict[str, str] = {
    "McNemar exact inverted": "exact",
    "Tango score": "score",
    "sign-flip inversion": "sign-flip",
    "sign-flip inversion widened to betting (too few differ)": "sign-flip+betting",
    "sign-flip inversion widened to betting (small changes, most unchanged)": "sign-flip+betting",
    "cluster sign-flip inversion": "cluster sign-flip",
    "cluster sign-flip inversion widened to cluster betting (too few differ)": "cluster+betting",
    "betting (Waudby-Smith-Ramdas)": "betting",
    "bootstrap percentile": "bootstrap",
    "bootstrap BCa": "BCa",
    "exact (lattice)": "exact",
    "exact (lattice, FFT)": "exact",
    "exact (enumeration)": "exact",
    "exact (distinct values)": "exact",
    "Monte Carlo": "MC",
}


def short_method(name: str) -> str:
    """The short name of a method (the name itself when it has none).

    >>> short_method("Tango score"), short_method("Monte Carlo"), short_method("t")
    ('score', 'MC', 't')
    """
    return SHORT_METHOD_NAMES.get(name, name)
