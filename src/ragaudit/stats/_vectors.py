"""Input checks shared by the clustered, judge-noise and PPI statistics."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragaudit.exceptions import InputError

__all__ = ["finite_vector"]


def finite_vector(values: Any, name: str, minimum: int = 1) -> np.ndarray:
    """``values`` as a 1-D float array of at least ``minimum`` finite numbers.

    >>> finite_vector([1, 0], "labels")
    array([1., 0.])
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array, found shape {array.shape}")
    if array.size < minimum:
        raise InputError(f"{name}: expected at least {minimum} values, found {array.size}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InputError(
            f"{name}: expected finite values, found NaN or infinity at position(s) "
            f"{', '.join(map(str, bad[:10].tolist()))}"
        )
    return array
