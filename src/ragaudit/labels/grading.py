"""A person grades a run's answers in the terminal: the human grades ``ragaudit calibrate`` reads.

Prediction-powered inference (:mod:`ragaudit.stats.ppi`) assumes that the questions with a
human verdict are a uniformly random sample of the judged questions (missing completely at
random).  So the order of presentation is fixed before anyone reads an answer: a seeded
uniformly random permutation of the judged questions (:func:`sample_order`), and a sample of
``n`` is its first ``n``.  Any prefix of a random permutation is itself a uniformly random
subset, so a session that stops early still leaves a random sample (as long as it did not
stop *because* of what it saw), and raising ``n`` later with the same seed extends the
sample instead of redrawing it.  Skipping a question is recorded, never replaced by the next
one: replacing the hard questions by easier ones is exactly the selection PPI cannot correct.

:class:`GradingSession` is the resumable session of ``ragaudit labels verdicts``: it opens a
verdict file (or resumes the one there, checking it was drawn from the same run, seed and
sample), saves each verdict as soon as it is typed (locked, re-read and merged, so two sessions
on one file never lose each other's verdicts), and asks through injected ``ask``/``show``
callables, as :mod:`ragaudit.labels.human` does, so it runs without a terminal.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit._io import locked
from ragaudit._validate import check_int
from ragaudit.data.human_grades import (
    GradeSample,
    HumanGrades,
    answer_fingerprint,
    read_human_grades_file,
    save_human_grades,
)
from ragaudit.data.per_question import judged_values
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.labels.human import Ask, _ask_stdin

__all__ = [
    "GRADE_CHOICES",
    "GRADE_PROMPT",
    "UNDECIDED_HOW",
    "GradingSession",
    "GradingSummary",
    "grade_answers",
    "merge_human_grades",
    "sample_order",
    "undecided_ids",
]

GRADE_PROMPT = "verdict (c correct, w wrong, s skip, q quit)"
#: The answers :data:`GRADE_PROMPT` accepts.
GRADE_CHOICES: tuple[str, ...] = ("c", "w", "s", "q")
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


#: The header's ``how`` of a ``labels verdicts --only-undecided`` file.
UNDECIDED_HOW = "every answer the offline judges left undecided, in a seeded order"


def undecided_ids(run: SavedRun, metric: str = "correct") -> list[str]:
    """Ids of the answered questions whose offline ``metric`` verdict is undecided (null with a
    reason in ``judges.reasons``), in run order.

    >>> from ragaudit.data.saved_run import SavedRun
    >>> rows = [{"id": "a", "retrieved": [], "answer": "x", "judges": {"correct": None,
    ...          "reasons": {"correct": "no claim"}}},
    ...         {"id": "b", "retrieved": [], "answer": "y", "judges": {"correct": True}}]
    >>> undecided_ids(SavedRun.from_dict({"config": {"k": 1}, "rows": rows}))
    ['a']
    """
    return [
        str(row["id"])
        for row in run.rows
        if row.get("answer") is not None
        and metric in ((row.get("judges") or {}).get("reasons") or {})
    ]


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
            answer = str(ask(GRADE_PROMPT, GRADE_CHOICES)).strip().lower()
        except (EOFError, KeyboardInterrupt):
            return GradingSummary(graded, skipped, stopped=True)
        if answer == "q":
            return GradingSummary(graded, skipped, stopped=True)
        if answer not in _VALUES:
            choices = ", ".join(GRADE_CHOICES)
            raise InputError(f"verdict: expected one of {choices}, found {answer!r}")
        value = _VALUES[answer]
        if value is None:
            skipped += 1
        else:
            graded += 1
        if on_verdict is not None:
            on_verdict(qid, value)
    return GradingSummary(graded, skipped, stopped=False)


def merge_human_grades(current: HumanGrades, path: str | os.PathLike[str]) -> HumanGrades:
    """Save ``current`` to ``path`` without losing what another session wrote there since.

    Two ``labels verdicts`` sessions on one file each hold their verdicts in memory; each
    save used to rewrite the whole file from its own memory, so one person's verdicts
    vanished.  Now every save holds a lock on ``<path>.lock`` (:func:`ragaudit._io.locked`),
    re-reads the file, keeps every question it holds that ``current`` does not, and writes
    the union atomically.  A question both graded keeps ``current``'s verdict (the later
    save).  Returns the union, so the caller can skip questions the other session graded.

    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "h.jsonl"
    >>> first = merge_human_grades(HumanGrades((("q1", 1.0),), run="r"), file)
    >>> second = merge_human_grades(HumanGrades((("q2", 0.0),), run="r"), file)
    >>> dict(read_human_grades_file(file))
    {'q1': 1.0, 'q2': 0.0}
    """
    with locked(path):
        theirs = None
        if Path(path).exists():
            theirs = read_human_grades_file(path, current.metric, allow_empty=True)
        if theirs is not None and theirs.run in (None, current.run):
            ours = dict(current.entries)
            merged = dict(theirs.entries)
            merged.update(ours)
            prints = {qid: (qid, fingerprint, 0) for qid, fingerprint, _ in theirs.answers}
            prints.update({qid: (qid, fingerprint, 0) for qid, fingerprint, _ in current.answers})
            current = HumanGrades(
                tuple(merged.items()), current.metric, current.run, current.sample,
                answers=tuple(prints[q] for q in merged if q in prints),
            )  # fmt: skip
        save_human_grades(current, path)
    return current


@dataclass
class GradingSession:
    """A person's resumable grading of a saved run's judged answers, bound to one verdict file.

    Open one with :meth:`open`; :meth:`grade` asks for the verdicts and saves each as it is
    typed.  ``order`` is the sample (the first ``sample.n`` of the seed's order, see
    :func:`sample_order`); ``entries`` holds every verdict in the file, this session's and any
    other session's (``None`` is a skip); ``fingerprints`` the SHA-256 of each graded answer.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> rows = [{"id": f"q{i}", "retrieved": [], "answer": f"a{i}",
    ...          "metrics": {"correct": i % 2}} for i in range(1, 6)]
    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": rows})
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "human.jsonl"
    >>> session = GradingSession.open(run, file, sample_size=3, seed=0)
    >>> session.order
    ('q3', 'q5', 'q4')
    >>> answers = iter(["c", "q"])
    >>> session.grade(lambda q: q, ask=lambda *a: next(answers), show=lambda *a: None)
    GradingSummary(graded=1, skipped=0, stopped=True)
    >>> again = GradingSession.open(run, file)  # resumes: same seed and sample
    >>> again.entries, again.sample.n, again.to_go
    ({'q3': 1.0}, 3, 2)
    """

    path: Path
    run: str
    metric: str
    sample: GradeSample
    order: tuple[str, ...]
    answers: Mapping[str, str | None]
    entries: dict[str, float | None] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        run: SavedRun,
        path: str | os.PathLike[str],
        metric: str = "correct",
        *,
        sample_size: int | None = None,
        seed: int | None = None,
        only_undecided: bool = False,
    ) -> GradingSession:
        """Start a session on ``path`` (a ``.jsonl`` file), or resume the one it holds.

        With ``only_undecided`` the questions are those whose offline ``metric`` verdict is
        undecided (null, with its reason in ``judges.reasons``): a person decides them.  The
        header then says it is not a random sample of the judged questions (``calibrate``
        needs one of those); the order is still the seeded one.

        A new session grades the first ``sample_size`` (default: all) of the seed-``seed``
        (default 0) order of the run's judged ``metric`` questions.  A resumed one keeps the
        file's seed and, unless ``sample_size`` is given, its ``n``; a larger ``sample_size``
        extends the sample.  Nothing is written until :meth:`save`.

        Raises
        ------
        InputError
            ``path`` is not ``.jsonl``; its header is missing, or names another run, another
            seed or another number of judged questions; a verdict grades an answer the run
            no longer has; ``sample_size`` exceeds the judged questions, or is smaller than
            the file's graded questions need.
        """
        population = (
            undecided_ids(run, metric) if only_undecided else list(judged_values(run, metric))
        )
        if not population:
            raise InputError(f"run {run.name!r} has no undecided {metric!r} verdicts to grade")
        where = os.fspath(path)  # as the user wrote it, for messages
        path = Path(path)
        if path.suffix.lower() != ".jsonl":
            raise InputError(f"--out: expected a .jsonl file, found {where!r}")
        answers = {q.id: q.answer for q in run.questions}
        entries: dict[str, float | None] = {}
        fingerprints: dict[str, str] = {}  # question id -> SHA-256 of the answer graded
        if path.exists():
            existing = read_human_grades_file(path, metric, allow_empty=True)
            header = existing.sample
            if header is not None and header.how == UNDECIDED_HOW and not only_undecided:
                only_undecided = True  # resuming a session on the undecided answers
                population = undecided_ids(run, metric)
            if header is None or header.seed is None or header.n is None:
                raise InputError(
                    f"{where}:1: sample: expected the header `ragaudit labels verdicts` writes "
                    "(seed and n of its sample), found none; choose another --out"
                )
            if existing.run != run.name or header.of != len(population):
                raise InputError(
                    f"{where}:1: run: expected verdicts on run {run.name!r} "
                    f"({len(population)} judged questions), found run {existing.run!r} "
                    f"({header.of}); choose another --out"
                )
            if seed is not None and seed != header.seed:
                raise InputError(
                    f"--seed {seed}: {where} was drawn with seed {header.seed}; pass that "
                    "seed (or none) to resume, or choose another --out"
                )
            seed = header.seed
            sample_size = header.n if sample_size is None else sample_size
            existing.check_answers(answers, run.name)  # the run changed since: refuse
            entries = dict(existing.entries)
            fingerprints = {qid: fingerprint for qid, fingerprint, _ in existing.answers}
        seed = 0 if seed is None else seed
        n = len(population) if sample_size is None else sample_size
        if n > len(population):
            raise InputError(
                f"--sample {n}: expected at most the run's {len(population)} judged {metric!r} "
                "questions"
            )
        order = tuple(sample_order(population, seed)[:n])
        outside = [qid for qid in entries if qid not in set(order)]
        if outside:
            raise InputError(
                f"{where}: id: expected questions among the first {n} of the seed-{seed} "
                f"order, found {outside[0]!r} (graded with a larger --sample? pass it again)"
            )
        sample = GradeSample(
            random=not only_undecided, n=n, of=len(population), seed=seed,
            how=UNDECIDED_HOW if only_undecided else "",
        )  # fmt: skip
        return cls(path, run.name, metric, sample, order, answers, entries, fingerprints)

    @property
    def graded(self) -> int:
        """Verdicts in the file (skips not counted)."""
        return sum(value is not None for value in self.entries.values())

    @property
    def skipped(self) -> int:
        """Questions of the file recorded as skipped."""
        return len(self.entries) - self.graded

    @property
    def to_go(self) -> int:
        """Questions of the sample with no verdict or skip yet."""
        return len(self.order) - len(self.entries)

    def save(self) -> None:
        """Write the header and every verdict, merged with what another session wrote since
        (:func:`merge_human_grades`); the other session's verdicts join :attr:`entries`."""
        prints = self.fingerprints
        recorded = tuple((q, prints[q], 0) for q in self.entries if q in prints)
        current = HumanGrades(
            tuple(self.entries.items()), self.metric, self.run, self.sample, answers=recorded
        )
        merged = merge_human_grades(current, self.path)  # an unwritable path: exit 2
        for qid, value in merged.entries:
            self.entries.setdefault(qid, value)
        for qid, fingerprint, _ in merged.answers:
            self.fingerprints.setdefault(qid, fingerprint)

    def record(self, qid: str, value: float | None) -> None:
        """One verdict (1.0 correct, 0.0 wrong, None skipped), saved at once."""
        self.entries[qid] = value
        self.fingerprints[qid] = answer_fingerprint(self.answers[qid])
        self.save()

    def grade(
        self,
        describe: Callable[[str], str],
        *,
        ask: Ask | None = None,
        show: Callable[[str], Any] | None = None,
    ) -> GradingSummary:
        """Ask for a verdict on each question of :attr:`order` the file does not hold yet
        (:func:`grade_answers`), saving each one as it is typed.  Questions another session
        grades meanwhile are skipped here (:attr:`entries` grows at every save)."""
        return grade_answers(
            self.order, describe, done=self.entries, on_verdict=self.record, ask=ask, show=show
        )
