"""A person grades a run's answers in the terminal: the verdicts ``ragaudit calibrate`` reads.

Prediction-powered inference (:mod:`ragaudit.stats.ppi`) assumes that the questions with a
human verdict are a uniformly random sample of the judged questions (missing completely at
random).  So the order of presentation is fixed before anyone reads an answer: a seeded
uniformly random permutation of the judged questions (:func:`sample_order`), and a sample of
``n`` is its first ``n``.  Any prefix of a random permutation is itself a uniformly random
subset, so a session that stops early still leaves a random sample (as long as it did not
stop *because* of what it saw), and raising ``n`` later with the same seed extends the
sample instead of redrawing it.  Skipping a question is recorded, never replaced by the next
one: replacing the hard questions by easier ones is exactly the selection PPI cannot correct.

Each verdict is handed to ``on_verdict`` as soon as it is typed (the CLI saves the file
atomically there), so an interrupted session resumes where it stopped.  The terminal I/O is
injected as in :mod:`ragaudit.labels.human`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit._io import locked
from ragaudit._validate import check_int
from ragaudit.data.human_verdicts import (
    HumanVerdicts,
    read_human_verdict_file,
    save_human_verdicts,
)
from ragaudit.exceptions import InputError
from ragaudit.labels.human import Ask, _ask_stdin

__all__ = [
    "VERDICT_CHOICES",
    "VERDICT_PROMPT",
    "GradingSummary",
    "grade_answers",
    "merge_human_verdicts",
    "sample_order",
]

VERDICT_PROMPT = "verdict (c correct, w wrong, s skip, q quit)"
#: The answers :data:`VERDICT_PROMPT` accepts.
VERDICT_CHOICES: tuple[str, ...] = ("c", "w", "s", "q")
_VALUES: dict[str, float | None] = {"c": 1.0, "w": 0.0, "s": None}


def sample_order(ids: Sequence[str], seed: int) -> list[str]:
    """``ids`` in a seeded uniformly random order: ``ids[p]`` for ``p`` =
    ``numpy.random.default_rng(seed).permutation(len(ids))``.

    The first ``n`` are a uniformly random sample of size ``n``, for every ``n``.

    Examples
    --------
    >>> sample_order(["q1", "q2", "q3", "q4", "q5"], seed=0)
    ['q3', 'q5', 'q4', 'q1', 'q2']
    >>> sample_order(["q1", "q2", "q3", "q4", "q5"], seed=0)[:2]  # a sample of 2
    ['q3', 'q5']
    """
    check_int(seed, "seed", minimum=0)
    permutation = np.random.default_rng(seed).permutation(len(ids))
    return [ids[int(i)] for i in permutation]


@dataclass(frozen=True)
class GradingSummary:
    """What one session did: verdicts typed, questions skipped, whether the person stopped."""

    graded: int
    skipped: int
    stopped: bool


def grade_answers(
    order: Sequence[str],
    describe: Callable[[str], str],
    *,
    done: Collection[str] = (),
    on_verdict: Callable[[str, float | None], None] | None = None,
    ask: Ask | None = None,
    show: Callable[[str], Any] | None = None,
) -> GradingSummary:
    """Ask a person for a verdict on each question of ``order`` not in ``done``, in order.

    ``describe(qid)`` is the text shown before the question (the question, the reference
    answer, the model's answer, the evidence).  The person types ``c`` (correct, 1.0),
    ``w`` (wrong, 0.0), ``s`` (skip, recorded as None) or ``q`` (quit; so does the end of
    the input or Ctrl-C).  ``on_verdict(qid, value)`` is called after each answer.

    Examples
    --------
    >>> answers = iter(["c", "s", "q"])
    >>> saved = []
    >>> grade_answers(["q3", "q1", "q2", "q4"], lambda q: q, done={"q1"},
    ...               on_verdict=lambda q, v: saved.append((q, v)),
    ...               ask=lambda *a: next(answers), show=lambda *a: None)
    GradingSummary(graded=1, skipped=1, stopped=True)
    >>> saved
    [('q3', 1.0), ('q2', None)]
    """
    ask = ask or _ask_stdin
    echo = show or print
    graded = skipped = 0
    total = len(order)
    for position, qid in enumerate(order, start=1):
        if qid in done:
            continue
        echo(f"=== answer {position} of {total} ({qid}) ===")
        echo(describe(qid))
        try:
            answer = str(ask(VERDICT_PROMPT, VERDICT_CHOICES)).strip().lower()
        except (EOFError, KeyboardInterrupt):
            return GradingSummary(graded, skipped, stopped=True)
        if answer == "q":
            return GradingSummary(graded, skipped, stopped=True)
        if answer not in _VALUES:
            choices = ", ".join(VERDICT_CHOICES)
            raise InputError(f"verdict: expected one of {choices}, found {answer!r}")
        value = _VALUES[answer]
        if value is None:
            skipped += 1
        else:
            graded += 1
        if on_verdict is not None:
            on_verdict(qid, value)
    return GradingSummary(graded, skipped, stopped=False)


def merge_human_verdicts(current: HumanVerdicts, path: str | os.PathLike[str]) -> HumanVerdicts:
    """Save ``current`` to ``path`` without losing what another session wrote there since.

    Two ``labels verdicts`` sessions on one file each hold their verdicts in memory; each
    save used to rewrite the whole file from its own memory, so one person's verdicts
    vanished.  Now every save holds a lock on ``<path>.lock`` (:func:`ragaudit._io.locked`),
    re-reads the file, keeps every question it holds that ``current`` does not, and writes
    the union atomically.  A question both graded keeps ``current``'s verdict (the later
    save).  Returns the union, so the caller can skip questions the other session graded.

    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "h.jsonl"
    >>> first = merge_human_verdicts(HumanVerdicts((("q1", 1.0),), run="r"), file)
    >>> second = merge_human_verdicts(HumanVerdicts((("q2", 0.0),), run="r"), file)
    >>> dict(read_human_verdict_file(file))
    {'q1': 1.0, 'q2': 0.0}
    """
    with locked(path):
        theirs = None
        if Path(path).exists():
            theirs = read_human_verdict_file(path, current.metric, allow_empty=True)
        if theirs is not None and theirs.run in (None, current.run):
            ours = dict(current.entries)
            merged = dict(theirs.entries)
            merged.update(ours)
            prints = {qid: (qid, fingerprint, 0) for qid, fingerprint, _ in theirs.answers}
            prints.update({qid: (qid, fingerprint, 0) for qid, fingerprint, _ in current.answers})
            current = HumanVerdicts(
                tuple(merged.items()), current.metric, current.run, current.sample,
                answers=tuple(prints[q] for q in merged if q in prints),
            )  # fmt: skip
        save_human_verdicts(current, path)
    return current
