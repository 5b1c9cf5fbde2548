"""The Labeller protocol every chunk-label builder implements.

A labeller grades the candidate chunks of one question (every chunk of its gold documents):
2 = contains the answer, 1 = related, 0 = not relevant.  Chunks it leaves out are grade 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ragaudit.data.chunks import Chunk

__all__ = ["GRADES", "Labeller"]

GRADES: tuple[int, ...] = (0, 1, 2)


@runtime_checkable
class Labeller(Protocol):
    """Grades candidate chunks for one question.

    Attributes
    ----------
    name : str
        Recorded in the label file (``heuristic``, ``llm``, ``human``...).
    """

    name: str

    def label(
        self,
        question: str,
        reference_answer: str,
        keywords: Sequence[str],
        candidates: list[Chunk],
    ) -> dict[str, int]:
        """``{chunk_id: grade}`` for (a subset of) ``candidates``; grades in {0, 1, 2}."""
        ...
