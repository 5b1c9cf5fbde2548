"""Names of the statistical procedures a user can choose.

Kept apart from the procedures so that ``ragaudit compare --help`` (and any option list) can
read them without importing numpy or scipy (issue 15, "start instantly").
"""

from __future__ import annotations

__all__ = ["CI_METHODS"]

#: Interval of a paired difference: ``auto``/``score`` = Tango's score interval for 0/1 metrics
#: and the inverted sign-flip test (the verdict's own test) otherwise; ``betting`` = the betting
#: interval (Waudby-Smith-Ramdas, valid for any distribution) for non-0/1 scores in [0, 1];
#: ``bootstrap`` (= ``percentile``) or ``bca`` for every metric.  No interval gates a verdict.
CI_METHODS: tuple[str, ...] = ("auto", "score", "betting", "bootstrap", "percentile", "bca")
