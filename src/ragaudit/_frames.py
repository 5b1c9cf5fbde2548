"""``to_pandas()`` for result objects: one helper, pandas imported only when called.

pandas is an optional dependency (extra ``pandas``); without it the call fails with a message
naming the extra to install.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaudit._io import require

__all__ = ["records_frame"]


def records_frame(records: Sequence[dict[str, Any]], index: str | None = None) -> Any:
    """A ``pandas.DataFrame`` of ``records`` (one dict per row), indexed by ``index``.

    >>> records_frame([{"qid": "q1", "hit": 1.0}], index="qid").loc["q1", "hit"]
    np.float64(1.0)
    """
    pandas = require("pandas", extra="pandas", feature="to_pandas()")
    frame = pandas.DataFrame.from_records(list(records))
    if index is not None and index in frame.columns:
        frame = frame.set_index(index)
    return frame
