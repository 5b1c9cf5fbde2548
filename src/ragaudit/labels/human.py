"""Interactive labelling in the terminal: a person grades every candidate chunk.

Each grade is handed to ``on_grade`` as soon as it is typed (the builder saves the label file
atomically there), so an interrupted session loses nothing and the next one resumes where it
stopped.  Type ``q`` (or end the input) to stop.

The terminal I/O is injected: ``ragaudit labels build`` passes click's prompt and echo; without
them the labeller reads ``input()`` and writes ``print()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragaudit.data.chunks import Chunk

__all__ = ["GRADE_CHOICES", "GRADE_PROMPT", "Ask", "HumanLabeller", "LabellingStopped"]

GRADE_PROMPT = "grade (0 not relevant, 1 related, 2 contains the answer, q quit)"
#: The answers :data:`GRADE_PROMPT` accepts.
GRADE_CHOICES: tuple[str, ...] = ("0", "1", "2", "q")

#: ``ask(prompt, choices) -> answer``: one of ``choices``, asked again until it is; raises
#: ``EOFError`` or ``KeyboardInterrupt`` when the person leaves.
Ask = Callable[[str, Sequence[str]], str]


def _ask_stdin(prompt: str, choices: Sequence[str]) -> str:
    """Ask on stdin until the answer is one of ``choices``."""
    while True:
        answer = input(f"{prompt}: ").strip().lower()
        if answer in choices:
            return answer
        print(f"Error: {answer!r} is not one of {', '.join(map(repr, choices))}.")


class LabellingStopped(Exception):
    """The person stopped the session (``q``, end of input or Ctrl-C); progress is saved."""


class HumanLabeller:
    """Ask a person for the grade of each candidate chunk.

    Parameters
    ----------
    ask : callable, optional
        ``ask(prompt, choices) -> answer`` (see :data:`Ask`); default: ``input()``, asked
        again until the answer is valid.
    show : callable, optional
        Prints one block of text; default ``print``.

    Examples
    --------
    >>> answers = iter(["2", "0"])
    >>> labeller = HumanLabeller(ask=lambda *a: next(answers), show=lambda *a: None)
    >>> chunks = [Chunk("c0", "D", 0, "14 days."), Chunk("c1", "D", 1, "Hotels.")]
    >>> labeller.label("When?", "14 days", ["14 days"], chunks)
    {'c0': 2, 'c1': 0}
    """

    name = "human"
    incremental = True

    def __init__(
        self,
        *,
        ask: Ask | None = None,
        show: Callable[[str], Any] | None = None,
    ) -> None:
        self._ask = ask or _ask_stdin
        self._echo = show or print

    def label(
        self,
        question: str,
        reference_answer: str,
        keywords: Sequence[str],
        candidates: list[Chunk],
        *,
        already: Mapping[str, int] | None = None,
        on_grade: Callable[[str, int], None] | None = None,
    ) -> dict[str, int]:
        """Grade the candidates not in ``already``; call ``on_grade`` after each answer.

        Raises
        ------
        LabellingStopped
            The person typed ``q`` or the input ended.
        """
        grades = dict(already or {})
        self._echo(f"QUESTION: {question}")
        self._echo(f"REFERENCE ANSWER: {reference_answer}")
        if keywords:
            self._echo("KEYWORDS: " + ", ".join(keywords))
        for i, chunk in enumerate(candidates, start=1):
            if chunk.chunk_id in grades:
                continue
            self._echo(f"--- chunk {i}/{len(candidates)}: {chunk.doc_id} #{chunk.index} ---")
            self._echo(chunk.text)
            try:
                answer = self._ask(GRADE_PROMPT, GRADE_CHOICES)
            except (EOFError, KeyboardInterrupt):
                raise LabellingStopped from None
            if str(answer).strip().lower() == "q":
                raise LabellingStopped
            grade = int(answer)
            grades[chunk.chunk_id] = grade
            if on_grade is not None:
                on_grade(chunk.chunk_id, grade)
        return grades
