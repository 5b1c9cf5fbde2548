"""Which corpus chunk a passage of text is: how another tool's contexts become chunk ids.

RAGAS, DeepEval and most pipelines export the retrieved contexts as *text*.  ragaudit's
retrieval metrics, funnel and chunk labels need chunk ids, so each passage is matched to one
chunk of the corpus, chunked as ragaudit chunks it:

1. **Exact text.**  The passage equals a chunk's text once both are stripped and their runs of
   white space collapsed: that chunk (the first in corpus order when several are equal).
2. **Best overlap.**  Otherwise each chunk ``c`` scores the share of the passage's tokens it
   holds, counting repeated tokens (multisets, tokens as :func:`ragaudit._text.tokenize` cuts
   them)::

       overlap(p, c) = sum_t min(n_p(t), n_c(t)) / sum_t n_p(t)

   and the best chunk is taken when its overlap is at least ``min_overlap``
   (:data:`MIN_OVERLAP`, 0.5: most of the passage is in that chunk).  Ties go to the earlier
   chunk in corpus order.
3. Otherwise the passage is **unmatched**; callers count and report it.

**Joined cells.**  A CSV export holds a question's contexts in one cell, joined by a delimiter
(DeepEval: ``|``).  Splitting at every delimiter cuts a context that holds the delimiter itself
(a markdown table), so :meth:`ContextIndex.segment` cuts the cell only where every piece is a
whole chunk (exact text), and falls back to splitting at every delimiter otherwise.

A passage cut by another chunker (smaller, larger or shifted chunks) is mapped to the chunk
that holds most of it; a passage that spans two of our chunks evenly may fall below the
threshold and stay unmatched, which the count makes visible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragaudit._text import tokenize
from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import InputError

__all__ = ["MIN_OVERLAP", "ContextIndex", "Match"]

#: Default threshold of the overlap match (share of the passage's tokens found in the chunk).
MIN_OVERLAP = 0.5


def _squash(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Match:
    """How one passage was matched.

    Attributes
    ----------
    chunk_id, doc_id : str or None
        None when unmatched.
    how : {"exact", "overlap", "unmatched"}
    overlap : float
        1.0 for an exact match; the best overlap found otherwise (also when unmatched).
    """

    chunk_id: str | None
    doc_id: str | None
    how: str
    overlap: float


class ContextIndex:
    """Match passages of text to the chunks of a corpus (see the module docstring).

    Parameters
    ----------
    chunks : sequence of Chunk
    min_overlap : float, default :data:`MIN_OVERLAP`
        In (0, 1].

    Examples
    --------
    >>> chunks = [Chunk("c1", "A", 0, "Staff get 25 days of leave."),
    ...           Chunk("c2", "B", 0, "Laptops are replaced every three years.")]
    >>> index = ContextIndex(chunks)
    >>> index.match("Staff get 25  days of leave.")
    Match(chunk_id='c1', doc_id='A', how='exact', overlap=1.0)
    >>> index.match("laptops are replaced every 3 years").how
    'overlap'
    >>> index.match("The canteen opens at noon.").how
    'unmatched'
    """

    def __init__(self, chunks: Sequence[Chunk], min_overlap: float = MIN_OVERLAP) -> None:
        if not 0 < min_overlap <= 1:
            raise InputError(f"min_overlap: expected a number in (0, 1], found {min_overlap!r}")
        self.min_overlap = float(min_overlap)
        self._chunks = list(chunks)
        self._exact: dict[str, int] = {}
        self._postings: dict[str, list[tuple[int, int]]] = {}
        for position, chunk in enumerate(self._chunks):
            self._exact.setdefault(_squash(chunk.text), position)
            for token, count in Counter(tokenize(chunk.text)).items():
                self._postings.setdefault(token, []).append((position, count))

    def segment(self, cell: str, delimiter: str) -> list[str] | None:
        """Cut ``cell`` at delimiters so that every piece is one chunk's exact text.

        Of the ways to cut ``cell`` at some of its delimiters, the one with the fewest pieces
        in which each piece (stripped) is a chunk's text, found by dynamic programming over the
        delimiter positions: :math:`O(m^2)` look-ups for :math:`m` delimiters.  None when no
        such cut exists (a context that is not one of our chunks): the caller then splits at
        every delimiter.

        Examples
        --------
        >>> index = ContextIndex([Chunk("c1", "A", 0, "| a | b |"), Chunk("c2", "B", 0, "c")])
        >>> index.segment("| a | b ||c", "|")
        ['| a | b |', 'c']
        >>> index.segment("x|c", "|") is None
        True
        """
        cuts = [-len(delimiter)]
        start = 0
        while (found := cell.find(delimiter, start)) >= 0:
            cuts.append(found)
            start = found + len(delimiter)
        cuts.append(len(cell))
        # best[j]: fewest pieces covering cell[: cuts[j]], with the cut before it in back[j]
        best: list[int | None] = [0] + [None] * (len(cuts) - 1)
        back = [0] * len(cuts)
        for j in range(1, len(cuts)):
            for i in range(j):
                previous, current = best[i], best[j]
                if previous is None or (current is not None and previous + 1 >= current):
                    continue
                piece = cell[cuts[i] + len(delimiter) : cuts[j]]
                if _squash(piece) in self._exact:
                    best[j], back[j] = previous + 1, i
        if best[-1] is None:
            return None
        pieces = []
        j = len(cuts) - 1
        while j > 0:
            i = back[j]
            pieces.append(cell[cuts[i] + len(delimiter) : cuts[j]].strip())
            j = i
        return pieces[::-1]

    def match(self, text: str) -> Match:
        """The chunk ``text`` is (exact, else best overlap >= ``min_overlap``), or unmatched."""
        position = self._exact.get(_squash(text))
        if position is not None:
            chunk = self._chunks[position]
            return Match(chunk.chunk_id, chunk.doc_id, "exact", 1.0)
        wanted = Counter(tokenize(text))
        total = sum(wanted.values())
        if not total:
            return Match(None, None, "unmatched", 0.0)
        shared: Counter[int] = Counter()
        for token, need in wanted.items():
            for position, have in self._postings.get(token, ()):
                shared[position] += min(need, have)
        if not shared:
            return Match(None, None, "unmatched", 0.0)
        best = min(shared, key=lambda p: (-shared[p], p))
        overlap = shared[best] / total
        if overlap < self.min_overlap:
            return Match(None, None, "unmatched", overlap)
        chunk = self._chunks[best]
        return Match(chunk.chunk_id, chunk.doc_id, "overlap", overlap)
