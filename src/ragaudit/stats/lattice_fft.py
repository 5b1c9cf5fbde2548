r"""Exact lattice sign-flip p-values at large n: FFT convolutions of scaled binomials.

When the non-zero :math:`|d_i|` are integer multiples :math:`k_i` of one unit (values rounded
to 4 decimals have unit :math:`10^{-4}`), the positive part :math:`P = \sum_i k_i [s_i = 1]` of
a uniform sign pattern has the exact distribution

.. math:: P = \sum_j v_j B_j,\qquad B_j \sim \mathrm{Bin}(c_j, 1/2)\ \text{independent},

over the distinct steps :math:`v_j` with multiplicities :math:`c_j` (Fisher 1935; the
generating function of :mod:`ragaudit.stats.permutation`).  The direct convolution there costs
:math:`\sum_j (c_j + 1)\,(K + 1)` with :math:`K = \sum_i k_i`: :math:`10^{12}` for 10,000
questions at 4 decimals.  Here each group is a scaled binomial pmf, and the groups are
convolved pairwise by FFT, smallest first (a Huffman tree, so no node waits on a long one).

**Window.**  A node whose steps have :math:`S_2 = \sum_j c_j v_j^2` keeps only
:math:`|P - E P| \le t` with :math:`t = \sqrt{S_2 \ln(2/\varepsilon)/2}`: by Hoeffding's
inequality (1963) the mass dropped is at most :math:`\varepsilon = 10^{-20}` per node, so
:math:`t` grows as :math:`\sqrt n` while the support grows as :math:`n` (10,000 questions at 4
decimals: a window about an eighth of the support).

**Floating-point floor.**  FFT convolution in double precision adds an absolute error of about
:math:`10^{-16}` times the largest probability per entry; summed over a tail it stays below
:data:`FLOOR` (measured against the direct convolution, ``tests/stats/test_lattice_fft.py``).
A p-value below :data:`FLOOR` is reported as :data:`FLOOR`, an upper bound: a verdict at any
level above it is unchanged, and the printed p says ``< 0.001`` anyway.

References
----------
Fisher, R. A. (1935). *The Design of Experiments*, section 21.
Hoeffding, W. (1963). Probability inequalities for sums of bounded random variables. *JASA*
58(301), 13-30.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ragaudit.stats._binomial import binomial_half_pmf

__all__ = ["FLOOR", "MAX_SUPPORT", "fft_lattice_pvalue"]

#: Smallest p-value reported; anything below is reported as this bound.
FLOOR = 1e-12
#: Largest window (entries) of the final distribution; beyond it the p-value is not computed.
MAX_SUPPORT = 1 << 25
_EPSILON = 1e-20
_LOG_TERM = math.log(2.0 / _EPSILON) / 2.0
_DIRECT = 64  # below this many entries on one side, direct convolution beats the FFT


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    size = a.size + b.size - 1
    if min(a.size, b.size) <= _DIRECT:
        return np.convolve(a, b)
    from scipy import fft as sfft  # 0.2 s to import: only when a large lattice needs it

    length = sfft.next_fast_len(size, real=True)
    out = sfft.irfft(sfft.rfft(a, length) * sfft.rfft(b, length), length)[:size]
    return np.maximum(out, 0.0)  # round-off below 0 is not probability


def _window(offset: int, pmf: np.ndarray, mean: float, s2: float) -> tuple[int, np.ndarray]:
    """Keep ``|P - mean| <= t`` (Hoeffding: at most ``_EPSILON`` of mass dropped)."""
    half = math.sqrt(s2 * _LOG_TERM)
    start = max(0, math.floor(mean - half) - offset)
    stop = min(pmf.size, math.ceil(mean + half) - offset + 1)
    return offset + start, pmf[start:stop]


def fft_lattice_pvalue(steps: np.ndarray, signs: np.ndarray) -> tuple[float, int] | None:
    r"""Exact two-sided sign-flip p from integer steps and their observed signs, or None.

    .. math:: p = \Pr\big[|2P - K| \ge |T|\big] = \min\big(1,\ 2\Pr[P \ge (K + |T|)/2]\big),
              \qquad T = \sum_i k_i \operatorname{sign}(d_i)

    (the distribution of :math:`P` is symmetric about :math:`K/2`).  Returns ``(p, window)``:
    the p-value, at least :data:`FLOOR`, and the entries of the final distribution kept; None
    when that window would exceed :data:`MAX_SUPPORT`.

    Examples
    --------
    Steps 1, 2 and 3, all positive: only the observed pattern and its mirror reach
    :math:`|T| = 6`, so p = 2 / 8.

    >>> fft_lattice_pvalue(np.array([1, 2, 3]), np.array([1, 1, 1]))
    (0.25, 7)
    """
    steps = np.asarray(steps, dtype=np.int64)
    total = int(steps.sum())
    observed = abs(int(np.dot(steps, np.asarray(signs, dtype=np.int64))))
    if observed == 0:
        return 1.0, 1
    values, counts = np.unique(steps, return_counts=True)
    s2_all = float(np.sum(counts * values.astype(float) ** 2))
    if 2.0 * math.sqrt(s2_all * _LOG_TERM) + 1 > MAX_SUPPORT:
        return None
    # Each node: (entries, tiebreak, offset, pmf, mean, s2); the heap pops the shortest first.
    heap: list[tuple[int, int, int, np.ndarray, float, float]] = []
    for order, (value, count) in enumerate(zip(values.tolist(), counts.tolist(), strict=True)):
        pmf = np.zeros(value * count + 1)
        pmf[::value] = binomial_half_pmf(count)
        mean, s2 = value * count / 2.0, float(count) * value * value
        offset, pmf = _window(0, pmf, mean, s2)
        heap.append((pmf.size, order, offset, pmf, mean, s2))
    heapq.heapify(heap)
    order = len(heap)
    while len(heap) > 1:
        _, _, off_a, pmf_a, mean_a, s2_a = heapq.heappop(heap)
        _, _, off_b, pmf_b, mean_b, s2_b = heapq.heappop(heap)
        mean, s2 = mean_a + mean_b, s2_a + s2_b
        offset, pmf = _window(off_a + off_b, _convolve(pmf_a, pmf_b), mean, s2)
        heapq.heappush(heap, (pmf.size, order, offset, pmf, mean, s2))
        order += 1
    _, _, offset, pmf, _, _ = heap[0]
    threshold = (total + observed) // 2  # P >= (K + |T|) / 2: T and K share their parity
    start = min(max(threshold - offset, 0), pmf.size)
    tail = float(pmf[start:].sum())
    return float(min(1.0, max(2.0 * tail, FLOOR))), int(pmf.size)
