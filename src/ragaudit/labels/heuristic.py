"""An offline labeller: a chunk's grade comes from the reference keywords it contains.

Keywords are matched with the offline judges' rules (:mod:`ragaudit.judges.keywords`: case,
punctuation and thousands separators ignored, whole words in order, whole numbers with their
unit, plurals folded, weak keywords such as ``"No"`` or ``"3"`` never taken as evidence), so
the labels and the ``evidence_in_context`` judge agree on what "contains" means.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.data.chunks import Chunk
from ragaudit.judges.keywords import keyword_tokens, match_tokens, number_phrases, strong_keywords
from ragaudit.judges.offline import keyword_hit

__all__ = ["HeuristicLabeller"]


class HeuristicLabeller:
    """Grade 2 when a chunk contains every reference keyword, 1 when some, 0 when none.

    .. math:: g(c) = 2 \\cdot [h(c) = 1] + [0 < h(c) < 1], \\quad
              h(c) = |\\{k \\in K : k \\in c\\}| / |K|

    Weak keywords (``"No"``, ``"3"``: see :mod:`ragaudit.judges.keywords`) are left out.
    Without other keywords, a chunk stating every number of the reference answer with its
    unit (:func:`~ragaudit.judges.keywords.number_phrases`) is grade 2; with neither, every
    chunk is grade 0 (the builder reports such questions).

    Examples
    --------
    >>> chunks = [Chunk("c0", "D", 0, "Flights are booked 14 days ahead in Waypoint."),
    ...           Chunk("c1", "D", 1, "Book flights in Waypoint."),
    ...           Chunk("c2", "D", 2, "Hotels: 210 EUR per night.")]
    >>> HeuristicLabeller().label("When?", "14 days ahead.", ["14 days", "Waypoint"], chunks)
    {'c0': 2, 'c1': 1, 'c2': 0}
    >>> HeuristicLabeller().label("Cap?", "210 EUR a night.", [], chunks)
    {'c0': 0, 'c1': 0, 'c2': 2}
    """

    name = "heuristic"

    def label(
        self,
        question: str,
        reference_answer: str,
        keywords: Sequence[str],
        candidates: list[Chunk],
    ) -> dict[str, int]:
        """Grade every candidate (see the class docstring)."""
        grades: dict[str, int] = {}
        strong = strong_keywords(keywords)
        numbers = number_phrases(reference_answer)
        for chunk in candidates:
            if strong:
                hit = keyword_hit(chunk.text, strong) or 0.0
                grades[chunk.chunk_id] = 2 if hit == 1.0 else (1 if hit > 0 else 0)
            else:
                words = keyword_tokens(chunk.text)
                stated = bool(numbers) and all(match_tokens(n, words) for n in numbers)
                grades[chunk.chunk_id] = 2 if stated else 0
        return grades
