"""Corrections for testing many hypotheses at once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragaudit.exceptions import InputError

__all__ = ["holm_bonferroni"]


def holm_bonferroni(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    r"""Holm-Bonferroni adjusted p-values (step-down, controls the family-wise error rate).

    With the p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`:

    .. math:: \tilde p_{(i)} = \min\Big(1,\; \max_{j \le i} (m - j + 1)\, p_{(j)}\Big)

    Reject hypothesis *i* at level alpha when :math:`\tilde p_i < \alpha` (equivalently
    ``<=``, as p-values here are never exactly alpha in practice).  The result is in the input
    order.

    Parameters
    ----------
    pvalues : sequence of float in [0, 1]

    Returns
    -------
    ndarray of float, same order as the input

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Examples
    --------
    >>> holm_bonferroni([0.01, 0.04, 0.03]).tolist()  # 3*0.01, max(0.06, 2*0.03), 1*0.04 -> 0.06
    [0.03, 0.06, 0.06]
    """
    values = np.asarray(pvalues, dtype=float)
    if values.ndim != 1:
        raise InputError(f"pvalues: expected a 1-D sequence, found shape {values.shape}")
    if values.size and (np.any(~np.isfinite(values)) or values.min() < 0 or values.max() > 1):
        raise InputError("pvalues: expected numbers between 0 and 1")
    m = values.size
    order = np.argsort(values, kind="stable")
    scaled = (m - np.arange(m)) * values[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted
