r"""The minimum detectable effect (MDE) printed beside a number, with what it assumes.

An MDE is the smallest true change that the verdict (the exact sign-flip / McNemar test at
alpha) detects with the stated power.  It depends on how the two runs differ, so every result
carries the assumption in words, and the caller prints it beside the number:

* **0/1 metrics** (McNemar's exact test, exact power; :mod:`ragaudit.stats.power`): the share
  of questions where the two runs disagree.  Comparing two runs, the *observed* discordance
  (:func:`paired_mde`); describing one run (the dashboard), an *assumed* one, 20% by default
  (:func:`run_mde`).  The demo's real discordance is 0-4%, where nothing is detectable.
* **Fractional metrics** (nDCG, recall, faithfulness): a shift of every question by the MDE,
  on top of per-question differences with standard deviation :math:`s_d`:

  .. math:: \mathrm{MDE} = \big(t_{n-1,\,1-\alpha/2} + t_{n-1,\,\mathrm{power}}\big)\,
            \frac{s_d}{\sqrt n}

  (the one-sample t power formula; the sign-flip test has the t test's asymptotic power).
  :math:`s_d` is the observed standard deviation of ``b - a`` when two runs are compared, and
  :math:`\sqrt 2` times the run's own standard deviation for one run (a second run whose
  per-question scores vary as independently as this one's: an assumption, printed).  Checked
  by simulating the verdict itself (``tests/stats/test_mde.py``, slow).

Observed ("post-hoc") power, the power to detect the effect just observed, is a function of
the p-value and says nothing more than it does (Hoenig & Heisey 2001); it is not printed.

References
----------
Hoenig, J. M. & Heisey, D. M. (2001). The abuse of power: the pervasive fallacy of power
calculations for data analysis. *The American Statistician* 55(1), 19-24.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit

from ragaudit.exceptions import InputError
from ragaudit.stats.policy import is_binary
from ragaudit.stats.power import minimum_detectable_effect

__all__ = ["DEFAULT_DISCORDANCE", "MDE", "paired_mde", "run_mde", "shift_mde"]

#: The discordance :func:`run_mde` assumes for a 0/1 metric of a single run.
DEFAULT_DISCORDANCE = 0.2


@dataclass(frozen=True)
class MDE:
    """A minimum detectable effect and what it assumes.

    Attributes
    ----------
    mde : float or None
        None when no effect is detectable under the assumption (too few questions, or no
        question differs).
    assumption : str
        What the number assumes, in words, to print beside it.
    method : str
        ``"McNemar exact power"`` or ``"t power formula (shift)"``.
    power, alpha : float
    """

    mde: float | None
    assumption: str
    method: str
    power: float
    alpha: float


def shift_mde(n: int, spread: float, *, power: float = 0.8, alpha: float = 0.05) -> float | None:
    r"""MDE of a uniform shift on top of differences with standard deviation ``spread``.

    .. math:: (t_{n-1,1-\alpha/2} + t_{n-1,\mathrm{power}})\, s_d / \sqrt n

    >>> round(shift_mde(54, 0.2), 4)   # (2.0057 + 0.8481) * 0.2 / sqrt(54)
    0.0777
    >>> shift_mde(1, 0.2) is None
    True
    """
    if n < 2:
        return None
    factor = float(stdtrit(n - 1, 1.0 - alpha / 2) + stdtrit(n - 1, power))
    return factor * float(spread) / float(np.sqrt(n))


def _check(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise InputError(f"{name}: expected a non-empty 1-D sequence of finite numbers")
    return x


def paired_mde(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
) -> MDE:
    """The MDE of comparing these two runs (``compare``), from what they show.

    0/1 metrics: McNemar's exact MDE at the observed discordance; other metrics: the shift
    formula with the observed standard deviation of ``b - a`` (module doc).

    >>> r = paired_mde([1] * 30 + [0] * 70, [1] * 20 + [0] * 10 + [1] * 10 + [0] * 60)
    >>> r.mde, r.assumption
    (0.13, 'assuming the observed discordance 0.200 (20 of 100 questions differ)')
    >>> paired_mde([1, 0, 1], [1, 0, 1]).mde is None
    True
    """
    x, y = _check(a, "a"), _check(b, "b")
    if x.shape != y.shape:
        raise InputError(f"expected two sequences of equal length, found {x.size} and {y.size}")
    n = int(x.size)
    if is_binary(x) and is_binary(y):
        differ = int(np.count_nonzero(x != y))
        rate = differ / n
        where = f"assuming the observed discordance {rate:.3f} ({differ} of {n} questions differ)"
        found = minimum_detectable_effect(n, rate, power=power, alpha=alpha) if differ else None
        return MDE(found, where, "McNemar exact power", power, alpha)
    spread = float(np.std(y - x, ddof=1)) if n > 1 else 0.0
    where = (
        f"assuming every question shifts by it, on top of the observed sd of B - A ({spread:.3f})"
    )
    found = shift_mde(n, spread, power=power, alpha=alpha) if spread > 0 else None
    return MDE(found, where, "t power formula (shift)", power, alpha)


def run_mde(
    values: Sequence[float] | np.ndarray,
    *,
    discordance: float = DEFAULT_DISCORDANCE,
    power: float = 0.8,
    alpha: float = 0.05,
) -> MDE:
    """The MDE of comparing this run with another one like it (the dashboard's column).

    0/1 metrics: McNemar's exact MDE at an *assumed* ``discordance``; other metrics: the shift
    formula with ``sqrt(2)`` times this run's standard deviation (module doc).

    >>> r = run_mde([1.0] * 40 + [0.0] * 14)
    >>> r.mde, r.assumption
    (0.17, 'assuming 20% of questions differ between the runs (the observed share is unknown)')
    >>> r = run_mde(np.linspace(0.5, 1.0, 54))
    >>> round(r.mde, 3), r.method
    (0.082, 't power formula (shift)')
    """
    x = _check(values, "values")
    n = int(x.size)
    if is_binary(x):
        where = (
            f"assuming {100 * discordance:g}% of questions differ between the runs (the "
            "observed share is unknown)"
        )
        found = minimum_detectable_effect(n, discordance, power=power, alpha=alpha)
        return MDE(found, where, "McNemar exact power", power, alpha)
    spread = float(np.std(x, ddof=1)) * float(np.sqrt(2.0)) if n > 1 else 0.0
    where = (
        "assuming every question shifts by it, with differences as spread as two independent "
        f"draws of this run's scores (sd {spread:.3f})"
    )
    found = shift_mde(n, spread, power=power, alpha=alpha) if spread > 0 else None
    return MDE(found, where, "t power formula (shift)", power, alpha)
