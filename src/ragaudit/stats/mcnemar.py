"""McNemar's exact test for a binary metric measured on the same questions by two systems."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import bdtr

from ragaudit.exceptions import InputError

__all__ = ["McNemarResult", "mcnemar_exact", "mcnemar_pvalue"]


@dataclass(frozen=True)
class McNemarResult:
    """The paired 2x2 table of a binary metric and McNemar's exact test.

    Attributes
    ----------
    both : int
        Questions where A and B both score 1.
    a_only : int
        A scores 1, B scores 0.
    b_only : int
        A scores 0, B scores 1.
    neither : int
        Both score 0.
    statistic : int
        ``min(a_only, b_only)``.
    pvalue : float
        Exact two-sided p-value.
    discordant_ids : tuple of str
        Ids of the questions where the systems differ (sorted).
    """

    both: int
    a_only: int
    b_only: int
    neither: int
    statistic: int
    pvalue: float
    discordant_ids: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Number of paired questions."""
        return self.both + self.a_only + self.b_only + self.neither


def mcnemar_pvalue(a_only: int, b_only: int) -> float:
    r"""Exact two-sided McNemar p-value from the discordant counts.

    .. math:: p = \min\left(1,\; 2\,P(X \le \min(b, c))\right),\quad X \sim
              \mathrm{Bin}(b + c, 1/2)

    and ``p = 1`` when there is no discordant pair.

    Examples
    --------
    The chapter's comparison: one question only A got right, one only B got right.

    >>> mcnemar_pvalue(1, 1)
    1.0
    >>> mcnemar_pvalue(0, 6) == 2 * 0.5**6
    True
    """
    for name, value in (("a_only", a_only), ("b_only", b_only)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise InputError(f"{name}: expected a count >= 0, found {value!r}")
    discordant = int(a_only) + int(b_only)
    if discordant == 0:
        return 1.0
    return float(min(1.0, 2.0 * bdtr(min(a_only, b_only), discordant, 0.5)))


def mcnemar_exact(a: np.ndarray, b: np.ndarray, ids: Sequence[str] | None = None) -> McNemarResult:
    """Paired 2x2 table and McNemar's exact two-sided test for 0/1 values.

    Only the discordant questions (one system right, the other wrong) carry information about
    which system is better; the concordant ones are identical under both.

    Parameters
    ----------
    a, b : array_like of {0, 1}, shape (n,)
        Aligned per-question values of systems A and B.
    ids : sequence of str, optional
        Question ids aligned with ``a`` and ``b``; default ``"0", "1", ...``.

    Returns
    -------
    McNemarResult

    Examples
    --------
    >>> result = mcnemar_exact([1, 1, 0, 0], [1, 0, 1, 0], ids=["q1", "q2", "q3", "q4"])
    >>> result.a_only, result.b_only, result.pvalue, result.discordant_ids
    (1, 1, 1.0, ('q2', 'q3'))
    """
    a_arr = np.asarray(a, dtype=float)
    b_arr = np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise InputError(
            f"expected two 1-D arrays of equal length, found shapes {a_arr.shape} and {b_arr.shape}"
        )
    for name, values in (("a", a_arr), ("b", b_arr)):
        if not np.all((values == 0) | (values == 1)):
            raise InputError(f"{name}: McNemar's test needs values in {{0, 1}}")
    labels = range(a_arr.size) if ids is None else ids
    if len(labels) != a_arr.size:
        raise InputError(f"ids: expected {a_arr.size} ids, found {len(labels)}")
    a_bool, b_bool = a_arr == 1, b_arr == 1
    a_only = int(np.count_nonzero(a_bool & ~b_bool))
    b_only = int(np.count_nonzero(~a_bool & b_bool))
    differ = np.flatnonzero(a_bool != b_bool)
    return McNemarResult(
        both=int(np.count_nonzero(a_bool & b_bool)),
        a_only=a_only,
        b_only=b_only,
        neither=int(np.count_nonzero(~a_bool & ~b_bool)),
        statistic=min(a_only, b_only),
        pvalue=mcnemar_pvalue(a_only, b_only),
        discordant_ids=tuple(sorted(map(str, map(labels.__getitem__, differ.tolist())))),
    )
