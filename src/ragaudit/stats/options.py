"""Names of the statistical procedures a user can choose.

Kept apart from the procedures so that ``ragaudit compare --help`` (and any option list) can
read them without importing numpy or scipy (issue 15, "start instantly").
"""

from __future__ import annotations

__all__ = ["CI_METHODS"]

#: Interval of a paired difference: ``auto``/``score`` = Tango's score interval for 0/1 metrics,
#: betting (Waudby-Smith-Ramdas) for other scores in [0, 1] and a percentile bootstrap otherwise;
#: ``bootstrap`` (= ``percentile``) or ``bca`` for every metric.
CI_METHODS: tuple[str, ...] = ("auto", "score", "bootstrap", "percentile", "bca")
