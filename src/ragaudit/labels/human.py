"""Interactive labelling in the terminal: a person grades every candidate chunk.

Each grade is handed to ``on_grade`` as soon as it is typed (the builder saves the label file
atomically there), so an interrupted session loses nothing and the next one resumes where it
stopped.  Type ``q`` (or end the input) to stop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from ragaudit.pipeline.chunking import Chunk

__all__ = ["HumanLabeller", "LabellingStopped"]

_GRADE_PROMPT = "grade (0 not relevant, 1 related, 2 contains the answer, q quit)"


class LabellingStopped(Exception):
    """The person stopped the session (``q``, end of input or Ctrl-C); progress is saved."""


class HumanLabeller:
    """Ask a person for the grade of each candidate chunk (``click.prompt``).

    Parameters
    ----------
    prompt, echo : callable, optional
        Injected for tests; default ``click.prompt`` and ``click.echo``.

    Examples
    --------
    >>> answers = iter(["2", "0"])
    >>> labeller = HumanLabeller(prompt=lambda *a, **k: next(answers), echo=lambda *a: None)
    >>> chunks = [Chunk("c0", "D", 0, "14 days."), Chunk("c1", "D", 1, "Hotels.")]
    >>> labeller.label("When?", "14 days", ["14 days"], chunks)
    {'c0': 2, 'c1': 0}
    """

    name = "human"
    incremental = True

    def __init__(
        self,
        *,
        prompt: Callable[..., Any] | None = None,
        echo: Callable[[str], Any] | None = None,
    ) -> None:
        self._prompt = prompt or click.prompt
        self._echo = echo or click.echo

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
                answer = self._prompt(
                    _GRADE_PROMPT,
                    type=click.Choice(["0", "1", "2", "q"]),
                    show_choices=False,
                )
            except (click.Abort, EOFError, KeyboardInterrupt):
                raise LabellingStopped from None
            if str(answer).strip().lower() == "q":
                raise LabellingStopped
            grade = int(answer)
            grades[chunk.chunk_id] = grade
            if on_grade is not None:
                on_grade(chunk.chunk_id, grade)
        return grades
