"""When a sample of paired differences cannot show a rare large change (issue 21).

``compare``'s default interval for paired differences of scores in [0, 1] (the sign-flip test
inverted, :mod:`ragaudit.stats.signflip_interval`) is built from what the sample shows.  It
misses when the population has a rare large change the sample happens not to contain: with 90%
of questions unchanged, 5% at +0.05, 4% at -0.05 and 1% at -1, a sample of 200 questions has
no -1 with probability 0.99^200 = 0.13, looks like "small changes on a few questions", and gets
an interval a few thousandths wide around +0.0005 while the truth is -0.0095.  It covered 0.846
at n = 50 and 0.858 at n = 200 (500 datasets, ``benchmarks/coverage_stats.py``).

No interval built from the sample alone covers there: without the -1 the sample is the same
whether 0% or 1% of the population drops by 1.  Only an interval that uses the known range of
the difference does, such as the betting interval of Waudby-Smith & Ramdas (2024)
(:func:`~ragaudit.stats.bounded.bounded_mean_bounds`), valid for every distribution on
[-1, 1].  Always taking it costs 5-14x the t interval on a dense shift, so the default takes
it only when the sample looks like the samples that hide such a tail:

* **most questions unchanged**: at least :data:`UNCHANGED_SHARE` of the differences are
  exactly 0 (ties, the usual case between two RAG runs that retrieve the same documents; a
  dense shift, where every question moves, is not widened), and
* **only small changes seen**: no difference exceeds :data:`SMALL_CHANGE` in absolute value.
  A sample that shows large changes (nDCG moving by 0.37 or 1) already has an interval wide
  enough to absorb an unseen rare one (it covered 0.946 with 30% of questions changing by up
  to 1 at n = 54), and the betting interval would cost 1.6x there.

Both thresholds were chosen by measurement (``benchmarks/coverage_tail_rules.py`` compares
candidate rules; ``benchmarks/coverage_stats.py`` measures the chosen one; both tables are in
``docs/guide/stats.md``): with them the rare large drops are covered at n = 20, 50 and 200
(1.000 / 0.994 / 0.991), and so are variants with 80% or 70% unchanged; requiring 80%
unchanged instead of half missed those (0.84 and 0.64), a count of differing questions made
nDCG with 30% changing 1.5x wider, and allowing changes up to 0.5 made it 1.2x wider.  The
price is paid where the sample shows small changes on a minority of questions and the
population truly has no tail: the interval is then the betting one, several times the
sign-flip one (9.9x t with 90% unchanged and 5% each at +-0.05 at n = 200; the sample cannot
tell the two populations apart).  A rare large drop hidden in a *dense* shift (every
question moves a little, 1% drop by 1: 0.873 at n = 200) is not covered by any interval that
keeps the dense-shift width; the docs say so.

References
----------
Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by betting.
*Journal of the Royal Statistical Society Series B* 86(1), 1-27 (arXiv:2010.09686).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SMALL_CHANGE", "TAIL_METHOD", "UNCHANGED_SHARE", "may_hide_tail"]

#: At least this share of the questions has a difference of exactly 0 ...
UNCHANGED_SHARE = 0.5
#: ... and no difference is larger than this in absolute value (an eighth of [-1, 1]).
SMALL_CHANGE = 0.25
#: The name a row gives the default interval when this rule widened it.
TAIL_METHOD = "sign-flip inversion widened to betting (small changes, most unchanged)"


def may_hide_tail(d: np.ndarray) -> bool:
    r"""Whether paired differences in [-1, 1] look like a sample that hides a rare large change.

    .. math:: \#\{i : d_i = 0\} \ge 0.5\, n \quad\text{and}\quad
              \max_i |d_i| \le 0.25

    Parameters
    ----------
    d : numpy.ndarray, shape (n,)
        Per-question differences ``b - a`` of scores in [0, 1].

    Returns
    -------
    bool

    Examples
    --------
    Most questions unchanged, the rest move by 0.05: a 1% drop to -1 could hide here.

    >>> may_hide_tail(np.array([0.0] * 18 + [0.05, -0.05]))
    True

    The sample shows a large change, or every question moves: no.

    >>> may_hide_tail(np.array([0.0] * 18 + [0.05, -1.0])), may_hide_tail(np.full(20, 0.05))
    (False, False)
    """
    values = np.asarray(d, dtype=float)
    if values.size == 0:
        return False
    unchanged = int(np.count_nonzero(values == 0.0))
    return unchanged >= UNCHANGED_SHARE * values.size and float(np.max(np.abs(values))) <= (
        SMALL_CHANGE
    )
