"""Lists of question ids in the text reports, cut to a readable length with the rest counted.

``funnel`` names the questions that died at each stage and ``compare`` the questions that
differ on a 0/1 metric: at 100,000 questions that is tens of thousands of ids per line
(megabytes of terminal output).  The text formats show the first :data:`SHOWN_IDS` of each
list, in the order the result holds them (sorted), and count the rest; ``--all-ids`` lists
every one, and the JSON output (the machine format) always holds every id.  The report page
cuts its lists the same way, to ``report --max-drilldowns``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ALL_IDS_HINT", "SHOWN_IDS", "cut_ids"]

#: Ids shown per list in the text output of ``funnel`` and ``compare`` (``--all-ids``: all).
SHOWN_IDS = 20
#: What a cut list of ``funnel`` and ``compare`` says after the count of the rest.
ALL_IDS_HINT = "--all-ids or --format json lists every id"


def cut_ids(ids: Sequence[str], limit: int | None, sep: str = ", ", hint: str = "") -> str:
    """``ids`` joined by ``sep``: the first ``limit`` of them and how many more, with ``hint``
    (how to see them all) in parentheses; every id when ``limit`` is None.

    >>> cut_ids(["q1", "q2", "q3"], 2), cut_ids(["a (x)", "b (y)"], 1, "; ")
    ('q1, q2 and 1 more', 'a (x) and 1 more')
    >>> cut_ids([f"q{i}" for i in range(1, 1235)], 2, hint=ALL_IDS_HINT)
    'q1, q2 and 1,232 more (--all-ids or --format json lists every id)'
    >>> cut_ids(["q1", "q2"], 2, hint=ALL_IDS_HINT), cut_ids(["q1", "q2"], None)
    ('q1, q2', 'q1, q2')
    """
    if limit is None or len(ids) <= limit:
        return sep.join(ids)
    more = f"{sep.join(ids[:limit])} and {len(ids) - limit:,} more"
    return f"{more} ({hint})" if hint else more
