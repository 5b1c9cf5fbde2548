r"""Paired sign-flip permutation p-values, exact whenever exactness is affordable.

Under the null hypothesis that two systems are exchangeable on every question, each
per-question difference :math:`d_i = b_i - a_i` is equally likely to carry either sign, and
the two-sided p-value is

.. math:: p = \Pr_s\Big[\big|\textstyle\sum_i s_i d_i\big| \ge \big|\sum_i d_i\big|\Big],
          \quad s \in \{-1, 1\}^n \text{ uniform.}

Questions with :math:`d_i = 0` contribute nothing to any sum, so only the ``m`` non-zero
differences matter.  The p-value is computed by the first of these that applies:

1. **exact (lattice)**: the non-zero :math:`|d_i|` are integer multiples :math:`k_i u` of one
   unit (binary metrics, thirds, integer grades...).  The positive part
   :math:`P = \sum_i k_i [s_i = 1]` has the generating function
   :math:`\prod_v \big(\tfrac{1 + x^v}{2}\big)^{c_v}` over the distinct steps ``v`` with
   multiplicities :math:`c_v`; its coefficients, one binomial pmf per distinct step convolved
   together, are the exact null distribution of :math:`\sum s_i d_i = u(2P - K)` with
   :math:`K = \sum k_i`.  Exact for any ``n``, integer comparisons, milliseconds.  For a 0/1
   metric this *is* McNemar's exact test.  Past the direct convolution's cost cap, up to
   :data:`FFT_MAX_TOTAL`, the same distribution by FFT (:mod:`ragaudit.stats.lattice_fft`,
   ``"exact (lattice, FFT)"``; p below :data:`~ragaudit.stats.lattice_fft.FLOOR` reported as
   that bound).
2. **exact (enumeration)**: at most ``exact_max_n`` non-zero differences: all :math:`2^m`
   sign patterns, whatever the number of questions.
3. **exact (distinct values)**: few distinct :math:`|d_i|` values :math:`v_j` with
   multiplicities :math:`c_j`: :math:`\sum s_i d_i = \sum_j v_j (2B_j - c_j)` with
   independent :math:`B_j \sim \mathrm{Bin}(c_j, 1/2)`, enumerated over the
   :math:`\prod_j (c_j + 1) \le 2^{20}` joint values.
4. **Monte Carlo**: ``n_permutations`` random sign patterns and the add-one p-value
   :math:`(\text{count} + 1)/(\text{trials} + 1)` (Phipson & Smyth 2010), never zero.  From
   :data:`GROUPED_FROM_N` questions with few distinct values, one binomial draw per distinct
   value replaces one bit per question (:func:`grouped_flip_sums`; the same distribution).

Every result names the method that produced it.  Each column (metric) is computed on its own
(Monte Carlo: a table of the 256 sums of each group of 8 questions, one look-up per group and
pattern), so a metric's p-value never depends on which other metrics are tested alongside it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ragaudit.exceptions import InputError
from ragaudit.stats._binomial import binomial_half_pmf as _binomial_half_pmf
from ragaudit.stats._binomial import log_outcomes as _log_outcomes
from ragaudit.stats.lattice_fft import fft_lattice_pvalue
from ragaudit.stats.resampling import (
    _BATCH_ENTRIES,
    SeedLike,
    _paired_differences,
    as_generator,
    check_count,
)

__all__ = [
    "EXACT_ENUMERATION",
    "EXACT_FFT",
    "EXACT_LATTICE",
    "EXACT_VALUES",
    "MAX_EXACT",
    "MONTE_CARLO",
    "PermutationResult",
    "paired_permutation_test",
]

EXACT_LATTICE = "exact (lattice)"
EXACT_FFT = "exact (lattice, FFT)"
EXACT_ENUMERATION = "exact (enumeration)"
EXACT_VALUES = "exact (distinct values)"
MONTE_CARLO = "Monte Carlo"
MAX_EXACT = 30
#: From this many questions on, random sign patterns are drawn per distinct value.
GROUPED_FROM_N = 2_000
# Exact enumeration handles the last `_EXACT_BLOCK` non-zero differences as one vectorised
# block of sums and loops over the sign patterns of the remaining ones.
_EXACT_BLOCK = 16
_MAX_DENOMINATOR = 720  # lattice units tried: u / q for q = 1..720 (u the smallest |d|)
_LATTICE_MAX_COST = 50_000_000  # multiply-adds of the direct convolution
#: Largest sum of lattice steps K given to the FFT convolution (:mod:`.lattice_fft`): at most
#: about a CPU second (10,000 differences of sd 0.03 at 4 decimals: 0.4 s;
#: ``benchmarks/exact_reach.py``).
FFT_MAX_TOTAL = 2_500_000
_VALUES_MAX_PATTERNS = 1 << 20


@dataclass(frozen=True)
class PermutationResult:
    """Result of :func:`paired_permutation_test`.

    Attributes
    ----------
    statistic : float
        Observed mean difference ``mean(b - a)``.
    pvalue : float
        Two-sided p-value.
    n_permutations : int
        Sign patterns evaluated: ``2**m`` for enumeration, the number of support points for
        the lattice and distinct-value methods, the random draws for Monte Carlo.
    exact : bool
        Whether the p-value is exact (every sign pattern accounted for).
    method : str
        ``"exact (lattice)"``, ``"exact (enumeration)"``, ``"exact (distinct values)"`` or
        ``"Monte Carlo"``.
    n_differing : int
        Questions with a non-zero difference (the only ones that carry information).
    """

    statistic: float
    pvalue: float
    n_permutations: int
    exact: bool
    method: str = EXACT_ENUMERATION
    n_differing: int = 0


def _lattice_steps(magnitudes: np.ndarray) -> np.ndarray | None:
    """Positive integers ``k`` with ``magnitudes = k * unit`` for one unit, or None."""
    unit = magnitudes.min()
    ratios = np.unique(magnitudes) / unit
    probe = ratios[:: max(1, ratios.size // 8)]  # a few ratios rule most denominators out
    for denominator in range(1, _MAX_DENOMINATOR + 1):
        probed = probe * denominator
        if not np.all(np.abs(probed - np.rint(probed)) <= 1e-9 * probed):
            continue
        scaled = ratios * denominator
        if np.all(np.abs(scaled - np.rint(scaled)) <= 1e-9 * scaled):
            return np.rint(magnitudes / unit * denominator).astype(np.int64)
    return None


def _lattice_cost(steps: np.ndarray) -> int:
    """Multiply-adds of the direct convolution: sum over steps of (count + 1), times (K + 1)."""
    _, counts = np.unique(steps, return_counts=True)
    return int(np.sum(counts + 1)) * (int(steps.sum()) + 1)


def _lattice_pvalue(steps: np.ndarray, signs: np.ndarray) -> tuple[float, int]:
    """Exact two-sided p from the integer steps of the non-zero differences and their signs."""
    total = int(steps.sum())
    observed = abs(int(np.dot(steps, signs)))
    distribution = np.ones(1)
    values, counts = np.unique(steps, return_counts=True)
    for step, count in zip(values.tolist(), counts.tolist(), strict=True):
        pmf = _binomial_half_pmf(count)
        if distribution.size == 1:
            grown = np.zeros(step * count + 1)
            grown[::step] = pmf * distribution[0]
        else:
            grown = np.zeros(distribution.size + step * count)
            for j, weight in enumerate(pmf):  # one shifted copy per binomial outcome
                grown[j * step : j * step + distribution.size] += weight * distribution
        distribution = grown
    signed = 2 * np.arange(total + 1) - total
    return float(min(1.0, distribution[np.abs(signed) >= observed].sum())), total + 1


def _values_pvalue(nonzero: np.ndarray, threshold: float) -> tuple[float, int] | None:
    """Exact p over the joint binomial counts of each distinct value, or None if too many."""
    values, counts = np.unique(np.abs(nonzero), return_counts=True)
    if _log_outcomes(counts) > np.log(_VALUES_MAX_PATTERNS):
        return None
    sums, probs = np.zeros(1), np.ones(1)
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        outcomes = value * (2.0 * np.arange(count + 1) - count)
        sums = (sums[:, None] + outcomes[None, :]).ravel()
        probs = (probs[:, None] * _binomial_half_pmf(count)[None, :]).ravel()
    return float(min(1.0, probs[np.abs(sums) >= threshold].sum())), int(sums.size)


def _enumeration_pvalue(nonzero: np.ndarray, threshold: float) -> tuple[float, int]:
    """Count of all ``2**m`` sign patterns (m <= MAX_EXACT), in bounded memory."""
    block = min(nonzero.size, _EXACT_BLOCK)
    inner, outer = np.zeros(1), np.zeros(1)
    for value in nonzero[:block]:  # doubling: the patterns with the next sign flipped
        inner = np.concatenate([inner + value, inner - value])
    for value in nonzero[block:]:
        outer = np.concatenate([outer + value, outer - value])
    count = sum(int(np.count_nonzero(np.abs(inner + shift) >= threshold)) for shift in outer)
    total = 2**nonzero.size
    return count / total, total


def _threshold(column: np.ndarray) -> float:
    # Sums of the same numbers in another order can differ by rounding; a relative tolerance
    # keeps exact ties counted as ties.
    return float(abs(column.sum()) - 1e-10 * max(np.abs(column).sum(), 1e-300))


def exact_pvalue(column: np.ndarray, exact_max_n: int) -> tuple[float, str, int] | None:
    """``(p, method, patterns)`` for one column of differences, or None if not affordable."""
    nonzero = column[column != 0]
    if nonzero.size == 0:
        return 1.0, EXACT_LATTICE, 1
    magnitudes = np.abs(nonzero)
    steps = _lattice_steps(magnitudes)
    if steps is not None and _lattice_cost(steps) <= _LATTICE_MAX_COST:
        p, support = _lattice_pvalue(steps, np.sign(nonzero).astype(np.int64))
        return p, EXACT_LATTICE, support
    if steps is not None and int(steps.sum()) <= FFT_MAX_TOTAL:
        found = fft_lattice_pvalue(steps, np.sign(nonzero).astype(np.int64))
        if found is not None:
            return found[0], EXACT_FFT, found[1]
    threshold = _threshold(nonzero)
    if nonzero.size <= exact_max_n:
        p, patterns = _enumeration_pvalue(nonzero, threshold)
        return p, EXACT_ENUMERATION, patterns
    by_value = _values_pvalue(nonzero, threshold)
    if by_value is not None:
        return by_value[0], EXACT_VALUES, by_value[1]
    return None


def grouped_flip_sums(
    columns: np.ndarray, n_patterns: int, rng: np.random.Generator
) -> np.ndarray | None:
    r"""``sum_i s_i columns[i, :]`` for random sign patterns, drawn per distinct row, or None.

    Rows with equal values are interchangeable: with :math:`c_j` rows equal to :math:`x_j`,
    :math:`\sum_i s_i x_i = \sum_j x_j (2K_j - c_j)` with independent
    :math:`K_j \sim \mathrm{Bin}(c_j, 1/2)`, the same distribution as uniform signs, at the
    cost of one binomial draw per distinct row instead of one bit per question.  Used from
    :data:`GROUPED_FROM_N` questions on when the distinct rows number at most an eighth of
    the questions (ranking metrics of 100,000 questions take a few hundred distinct values);
    None otherwise.

    >>> sums = grouped_flip_sums(np.repeat([[0.5], [-0.25]], 1500, axis=0), 4,
    ...                          np.random.default_rng(0))
    >>> sums.shape, bool(np.all(np.abs(sums) <= 1125))
    ((4, 1), True)
    """
    n = columns.shape[0]
    if n < GROUPED_FROM_N:
        return None
    varying = np.flatnonzero(np.any(columns != columns[:1], axis=0))
    if varying.size == 1:  # a constant column (the ones of the interval) needs no sorting
        _, first, counts = np.unique(columns[:, varying[0]], return_index=True, return_counts=True)
        rows = columns[first]
    else:
        rows, counts = np.unique(columns, axis=0, return_counts=True)
    if rows.shape[0] * 8 > n:
        return None
    out = np.empty((n_patterns, columns.shape[1]))
    batch = max(1, min(n_patterns, _BATCH_ENTRIES // rows.shape[0]))
    for start in range(0, n_patterns, batch):
        size = min(batch, n_patterns - start)
        kept = rng.binomial(counts[None, :], 0.5, size=(size, counts.size))
        out[start : start + size] = (2.0 * kept - counts[None, :]) @ rows
    return out


def flip_sums(columns: np.ndarray, n_patterns: int, rng: np.random.Generator) -> np.ndarray:
    """``sum_g s_g columns[g, j]`` for ``n_patterns`` uniform sign patterns, shape (R, k).

    Every column sees the same patterns.  A pattern is random bytes, one bit per observation;
    each column becomes a table of the 256 sums of every group of 8 observations, so a pattern's
    sum is one look-up per group (as :func:`monte_carlo_pvalues`).
    Many questions with few distinct rows draw one binomial per distinct row instead
    (:func:`grouped_flip_sums`: the same distribution).
    """
    grouped = grouped_flip_sums(columns, n_patterns, rng)
    if grouped is not None:
        return grouped
    n, k = columns.shape
    groups = -(-n // 8)
    bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)
    tables = []
    for j in range(k):  # one column at a time: its sums never depend on the other columns
        padded = np.zeros(groups * 8)
        padded[:n] = columns[:, j]
        tables.append(np.ascontiguousarray(padded.reshape(groups, 8) @ bits.T))
    totals = [float(np.ascontiguousarray(columns[:, j]).sum()) for j in range(k)]
    out = np.empty((n_patterns, k))
    batch = max(1, min(n_patterns, _BATCH_ENTRIES // groups))
    offsets = (np.arange(groups) * 256)[None, :]
    for start in range(0, n_patterns, batch):
        rows = min(batch, n_patterns - start)
        cells = offsets + rng.integers(0, 256, size=(rows, groups), dtype=np.uint8)
        for j in range(k):
            out[start : start + rows, j] = totals[j] - 2.0 * tables[j].ravel()[cells].sum(axis=1)
    return out


def monte_carlo_pvalues(
    diffs: np.ndarray, n_permutations: int, rng: np.random.Generator
) -> np.ndarray:
    """Add-one Monte Carlo p per column; every column sees the same sign patterns.

    A pattern is drawn as random bytes, one bit per question (bit set = sign flipped).  Each
    column is turned into a table of the 256 possible sums of every group of 8 questions, so
    the flipped sum of a pattern is one table look-up per group.  Each column is computed on
    its own, so its p-value does not depend on the other columns.  A column of many questions
    but few distinct values draws its patterns per distinct value instead
    (:func:`grouped_flip_sums`), from a copy of the generator as it was on entry, so it too
    depends on nothing but itself and the seed.
    """
    start_state = copy.deepcopy(rng)
    grouped: dict[int, float] = {}
    for j in range(diffs.shape[1]):
        column = np.ascontiguousarray(diffs[:, j])
        sums = grouped_flip_sums(column[:, None], n_permutations, copy.deepcopy(start_state))
        if sums is not None:
            count = np.count_nonzero(np.abs(sums[:, 0]) >= _threshold(column))
            grouped[j] = (count + 1) / (n_permutations + 1)
    rest = [j for j in range(diffs.shape[1]) if j not in grouped]
    out = np.empty(diffs.shape[1])
    for j, p in grouped.items():
        out[j] = p
    if rest:
        out[rest] = _byte_pvalues(diffs[:, rest], n_permutations, rng)
    return out


def _byte_pvalues(diffs: np.ndarray, n_permutations: int, rng: np.random.Generator) -> np.ndarray:
    n, n_columns = diffs.shape
    groups = -(-n // 8)
    bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)  # (256, 8)
    tables, thresholds, totals = [], [], []
    for j in range(n_columns):
        column = np.ascontiguousarray(diffs[:, j])
        padded = np.zeros(groups * 8)
        padded[:n] = column
        tables.append(np.ascontiguousarray(padded.reshape(groups, 8) @ bits.T))  # (groups, 256)
        thresholds.append(_threshold(column))
        totals.append(float(column.sum()))
    batch = max(1, min(n_permutations, _BATCH_ENTRIES // groups))
    offsets = (np.arange(groups) * 256)[None, :]
    count = np.zeros(n_columns, dtype=np.int64)
    for start in range(0, n_permutations, batch):
        rows = min(batch, n_permutations - start)
        patterns = rng.integers(0, 256, size=(rows, groups), dtype=np.uint8)
        cells = offsets + patterns  # index into each column's flattened table
        for j, table in enumerate(tables):
            flipped = table.ravel()[cells].sum(axis=1)
            # sum(s_i d_i) with s_i = -1 for the flipped questions
            sums = totals[j] - 2.0 * flipped
            count[j] += np.count_nonzero(np.abs(sums) >= thresholds[j])
    return np.asarray((count + 1) / (n_permutations + 1))


def check_exact_max_n(exact_max_n: int) -> int:
    """Validate the enumeration limit (0..MAX_EXACT)."""
    if (
        isinstance(exact_max_n, bool)
        or not isinstance(exact_max_n, int | np.integer)
        or not 0 <= exact_max_n <= MAX_EXACT
    ):
        raise InputError(
            f"exact_max_n: expected an integer between 0 and {MAX_EXACT}, found {exact_max_n!r}"
        )
    return int(exact_max_n)


def paired_permutation_test(
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_permutations: int = 10_000,
    exact_max_n: int = 20,
    rng: SeedLike | None = 0,
) -> PermutationResult:
    r"""Two-sided paired permutation (sign-flip) test of ``mean(b - a) = 0``.

    .. math:: p = \frac{\#\{s \in \{-1,1\}^n : |\sum_i s_i d_i| \ge |\sum_i d_i|\}}{2^n}

    computed exactly when the differences lie on a lattice, when at most ``exact_max_n`` of
    them are non-zero, or when they take few distinct values; otherwise by Monte Carlo with
    ``n_permutations`` random patterns (see the module docstring).  For 0/1 metrics the
    exact p equals McNemar's exact p.

    Parameters
    ----------
    a, b : array_like, shape (n,)
    n_permutations : int, default 10000
        Random sign patterns when no exact method applies.
    exact_max_n : int, default 20
        Enumerate all sign patterns up to this many *non-zero* differences (at most 30).
    rng : int or numpy.random.Generator, default 0

    Returns
    -------
    PermutationResult

    References
    ----------
    Fisher, R. A. (1935). *The Design of Experiments*, section 21 (the paired sign-flip test).
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. *Psychometrika* 12, 153-157.
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero.
    *Statistical Applications in Genetics and Molecular Biology* 9(1), article 39.

    Examples
    --------
    One question better, one worse, by the same amount: no evidence at all.

    >>> paired_permutation_test([0, 1, 1], [1, 0, 1]).pvalue
    1.0

    40 questions, 3 where B gains a third of a point and none where it loses: the zero
    differences do not matter, the p-value is exact, ``2 / 2**3``.

    >>> r = paired_permutation_test([0.0] * 40, [1 / 3] * 3 + [0.0] * 37)
    >>> r.pvalue, r.method, r.n_differing
    (0.25, 'exact (lattice)', 3)
    """
    n_permutations = check_count(n_permutations, "permutations")
    exact_max_n = check_exact_max_n(exact_max_n)
    diffs = _paired_differences(np.asarray(a), np.asarray(b))
    differing = int(np.count_nonzero(diffs))
    exact = exact_pvalue(diffs, exact_max_n)
    if exact is not None:
        p, method, patterns = exact
        return PermutationResult(float(diffs.mean()), p, patterns, True, method, differing)
    p_mc = monte_carlo_pvalues(diffs[:, None], n_permutations, as_generator(rng))[0]
    return PermutationResult(
        float(diffs.mean()),
        float(min(1.0, p_mc)),
        n_permutations,
        False,
        MONTE_CARLO,
        differing,
    )
