"""Human grades: a person's verdicts on a subset of questions (the input of ``ragaudit
calibrate``).  "Human grades" names what a person decided, apart from the judges'
judgments (:mod:`ragaudit.judges`) and the verdict (significance call) of a comparison
(:mod:`ragaudit.stats.verdicts`); the file format and the CLI keep the word "verdicts".

Two spellings of the same thing, one verdict per question:

* JSONL (``.jsonl``), one object a line::

      {"id": "q01", "correct": true}
      {"id": "q07", "correct": false, "note": "cites the wrong policy"}

* YAML or JSON mapping (any other suffix), question id -> verdict::

      q01: true
      q07: false

A verdict is ``true``/``false``, ``1``/``0`` or ``"correct"``/``"wrong"``; other keys are
ignored.  The field is ``correct`` unless ``calibrate --metric`` names another.

A JSONL file may also say how its questions were chosen, which the prediction-powered
interval depends on (it assumes a uniformly random sample of the judged questions).
``ragaudit labels verdicts`` writes such files: a header first line, and a line per question
that the person skipped::

    {"format": "ragaudit.human-verdicts", "version": 1, "run": "k3", "metric": "correct",
     "sample": {"random": true, "seed": 0, "n": 20, "of": 60}}
    {"id": "q17", "correct": true}
    {"id": "q03", "skipped": true}

(the header is one line in the file).  Each line that ``labels verdicts`` writes also carries
``answer_sha256``, the SHA-256 of the answer the person graded (:func:`answer_fingerprint`):
``calibrate`` refuses a verdict whose answer differs from the run's, since it grades another
answer.  ``sample.random`` is true when the questions are the
first ``n`` of a seeded uniformly random order of the run's ``of`` judged questions; a file
made some other way may say ``"random": false`` and why in ``"how"``, and ``calibrate`` then
warns.  Files without a header read as before: how their questions were chosen is unknown.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ragaudit._io import atomic_write_text
from ragaudit._yaml import compose_yaml, construct_yaml
from ragaudit.data.formats import json_lines, read_text, shorten
from ragaudit.exceptions import FormatError

__all__ = [
    "FORMAT",
    "GradeSample",
    "HumanGrades",
    "answer_fingerprint",
    "dump_human_grades",
    "read_human_grades",
    "read_human_grades_file",
    "save_human_grades",
]

#: The ``format`` value of a verdict file's header line.
FORMAT = "ragaudit.human-verdicts"
_VERSION = 1

_SHA256 = re.compile(r"[0-9a-f]{64}")
_FINGERPRINT = "answer_sha256"

_WORDS = {"correct": 1.0, "wrong": 0.0, "incorrect": 0.0, "yes": 1.0, "no": 0.0}


@dataclass(frozen=True)
class GradeSample:
    """How the questions of a verdict file were chosen (its header's ``sample``).

    Attributes
    ----------
    random : bool
        The questions are the first ``n`` of a seeded uniformly random order of the run's
        ``of`` judged questions (what prediction-powered inference assumes).
    n, of, seed : int or None
        Sample size, number of judged questions it was drawn from, and the seed.
    how : str
        In words, how the questions were chosen (for a sample that is not random).
    """

    random: bool
    n: int | None = None
    of: int | None = None
    seed: int | None = None
    how: str = ""

    def describe(self) -> str:
        """One phrase for reports.

        >>> GradeSample(True, 20, 60, 0).describe()
        'a uniformly random sample of 20 of 60 judged questions (seed 0)'
        >>> GradeSample(False, how="the hardest ones").describe()
        'not a random sample (the hardest ones)'
        """
        if self.random:
            return (
                f"a uniformly random sample of {self.n} of {self.of} judged questions "
                f"(seed {self.seed})"
            )
        return "not a random sample" + (f" ({self.how})" if self.how else "")

    def to_dict(self) -> dict[str, Any]:
        """The header's ``sample`` object."""
        out: dict[str, Any] = {"random": self.random, "seed": self.seed, "n": self.n, "of": self.of}
        if self.how:
            out["how"] = self.how
        return out


@dataclass(frozen=True)
class HumanGrades(Mapping[str, float]):
    """A verdict file: ``{question id: 0.0 or 1.0}`` (a read-only mapping) and its header.

    Attributes
    ----------
    entries : tuple of (str, float or None)
        In file order (the order they were given); ``None`` = the person skipped it.
    metric : str
        The verdict's key (``correct`` unless ``--metric`` names another).
    run : str or None
        The run whose answers were graded (header).
    sample : GradeSample or None
        How the questions were chosen; None when the file does not say.
    path : str or None
        The file it was read from.
    answers : tuple of (str, str, int)
        ``(question id, answer fingerprint, line)`` for each line that records which answer
        was graded (:func:`answer_fingerprint`); empty for files that do not say.

    Examples
    --------
    >>> v = HumanGrades((("q2", 1.0), ("q5", None), ("q1", 0.0)))
    >>> dict(v), v.skipped
    ({'q2': 1.0, 'q1': 0.0}, ('q5',))
    """

    entries: tuple[tuple[str, float | None], ...]
    metric: str = "correct"
    run: str | None = None
    sample: GradeSample | None = None
    path: str | None = None
    answers: tuple[tuple[str, str, int], ...] = ()

    @classmethod
    def of(cls, verdicts: HumanGrades | Mapping[str, float]) -> HumanGrades:
        """``verdicts`` itself, or a plain ``{question id: verdict}`` mapping as verdicts
        whose header says nothing (no run, no sample, nothing skipped).

        >>> v = HumanGrades.of({"q1": 1.0, "q2": 0.0})
        >>> dict(v), v.sample, v.skipped
        ({'q1': 1.0, 'q2': 0.0}, None, ())
        >>> HumanGrades.of(v) is v
        True
        """
        if isinstance(verdicts, HumanGrades):
            return verdicts
        return cls(tuple(verdicts.items()))

    @cached_property  # computed once: lookups would otherwise rebuild it each time
    def verdicts(self) -> dict[str, float]:
        """``{question id: verdict}`` without the skipped questions."""
        return {qid: value for qid, value in self.entries if value is not None}

    @cached_property
    def skipped(self) -> tuple[str, ...]:
        """Questions of the sample the person skipped."""
        return tuple(qid for qid, value in self.entries if value is None)

    @cached_property
    def done(self) -> frozenset[str]:
        """Every question with a verdict or a skip."""
        return frozenset(qid for qid, _ in self.entries)

    def check_answers(self, answers: Mapping[str, str | None], run: str | None) -> int:
        """Refuse a verdict that grades another answer than ``answers[question id]`` (the
        run's); return how many verdicts were checked (lines without ``answer_sha256`` are not).

        >>> v = HumanGrades((("q1", 1.0),), path="h.jsonl",
        ...                   answers=(("q1", answer_fingerprint("4"), 2),))
        >>> v.check_answers({"q1": "4"}, "k3")
        1
        >>> try:
        ...     v.check_answers({"q1": "5"}, "k3")
        ... except FormatError as error:
        ...     print(str(error)[:63])
        h.jsonl:2: answer_sha256: expected the answer of run 'k3' to q1
        """
        checked = 0
        for qid, fingerprint, line in self.answers:
            if qid not in answers:
                continue
            checked += 1
            if answer_fingerprint(answers[qid]) != fingerprint:
                raise FormatError(
                    f"expected the answer of run {run!r} to {qid}, found a verdict on another "
                    "answer (it was graded on a different run or before the run changed): "
                    "grade this run's answers with `ragaudit labels verdicts`",
                    path=self.path, line=line, field=_FINGERPRINT,
                )  # fmt: skip
        return checked

    def __getitem__(self, key: str) -> float:
        return self.verdicts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.verdicts)

    def __len__(self) -> int:
        return len(self.verdicts)


def _verdict(value: Any, where: str, line: int | None, field: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value in (0, 1):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in _WORDS:
        return _WORDS[value.strip().lower()]
    raise FormatError(
        f"expected true/false, 1/0 or 'correct'/'wrong', found {value!r}",
        path=where, line=line, field=field,
    )  # fmt: skip


def _optional_int(sample: Mapping[str, Any], key: str, where: str) -> int | None:
    value = sample.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FormatError(
            f"expected a whole number >= 0 or null, found {shorten(value)}",
            path=where, line=1, field=f"sample.{key}",
        )  # fmt: skip
    return value


def _header(row: Mapping[str, Any], where: str) -> tuple[str | None, str | None, GradeSample]:
    """``(run, metric, sample)`` of a header line (line 1)."""
    if row.get("format") != FORMAT:
        raise FormatError(
            f"expected {FORMAT!r}, found {shorten(row.get('format'))}",
            path=where, line=1, field="format",
        )  # fmt: skip
    if row.get("version") != _VERSION:
        raise FormatError(
            f"expected version {_VERSION}, found {shorten(row.get('version'))}",
            path=where, line=1, field="version",
        )  # fmt: skip
    sample = row.get("sample")
    if not isinstance(sample, dict) or not isinstance(sample.get("random"), bool):
        raise FormatError(
            'expected {"random": true/false, "seed": ..., "n": ..., "of": ...}, found '
            + shorten(sample),
            path=where, line=1, field="sample",
        )  # fmt: skip
    how = sample.get("how", "")
    if not isinstance(how, str):
        raise FormatError(
            f"expected text, found {shorten(how)}", path=where, line=1, field="sample.how"
        )
    for key in ("run", "metric"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise FormatError(
                f"expected text, found {shorten(row[key])}", path=where, line=1, field=key
            )
    return (
        row.get("run"),
        row.get("metric"),
        GradeSample(
            random=sample["random"],
            n=_optional_int(sample, "n", where),
            of=_optional_int(sample, "of", where),
            seed=_optional_int(sample, "seed", where),
            how=how,
        ),
    )


def _from_jsonl(where: str, field: str) -> HumanGrades:
    entries: dict[str, float | None] = {}
    answers: list[tuple[str, str, int]] = []
    run: str | None = None
    sample: GradeSample | None = None
    for number, row in json_lines(where):
        if not isinstance(row, dict):
            raise FormatError(
                f"expected an object, found {type(row).__name__}", path=where, line=number
            )
        if "format" in row:
            if number != 1:
                raise FormatError(
                    "expected the header (the line with 'format') on line 1 only",
                    path=where, line=number, field="format",
                )  # fmt: skip
            run, _, sample = _header(row, where)
            continue
        qid = row.get("id")
        if not isinstance(qid, str) or not qid:
            raise FormatError(
                f"expected a question id string, found {qid!r}", path=where, line=number, field="id"
            )
        if qid in entries:
            raise FormatError(f"duplicate question id {qid!r}", path=where, line=number, field="id")
        if _FINGERPRINT in row:
            answers.append((qid, _fingerprint(row[_FINGERPRINT], where, number), number))
        if row.get("skipped") is True:
            if field in row:
                raise FormatError(
                    f"expected a verdict or 'skipped', found both {field!r} and 'skipped'",
                    path=where, line=number, field=field,
                )  # fmt: skip
            entries[qid] = None
            continue
        if field not in row:
            raise FormatError(
                f"expected a verdict, found no {field!r} key (keys: {', '.join(row)})",
                path=where, line=number, field=field,
            )  # fmt: skip
        entries[qid] = _verdict(row[field], where, number, field)
    return HumanGrades(tuple(entries.items()), field, run, sample, where, tuple(answers))


def _fingerprint(value: Any, where: str, line: int) -> str:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise FormatError(
            "expected 64 lowercase hex digits (SHA-256 of the graded answer), found "
            + shorten(value),
            path=where, line=line, field=_FINGERPRINT,
        )  # fmt: skip
    return value


def answer_fingerprint(answer: str | None) -> str:
    """SHA-256 (hex) of the UTF-8 answer text: what a verdict line records as the answer it
    grades.  No answer (a failed generation) hashes as the empty text.

    >>> answer_fingerprint("42")[:16]
    '73475cb40a568e8d'
    >>> answer_fingerprint(None) == answer_fingerprint("")
    True
    """
    return hashlib.sha256((answer or "").encode("utf-8")).hexdigest()


def _from_mapping(text: str, where: str, field: str) -> HumanGrades:
    import yaml

    node = compose_yaml(text, where)  # the one safe YAML reader (JSON is YAML too)
    if not isinstance(node, yaml.MappingNode):
        raise FormatError(
            "expected a mapping of question id -> verdict (or a .jsonl file), found "
            f"{'nothing' if node is None else node.tag.rsplit(':', 1)[-1]}",
            path=where,
        )
    verdicts: dict[str, float | None] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        qid = construct_yaml(key_node, where)
        value = construct_yaml(value_node, where)
        if str(qid) in verdicts:
            raise FormatError(f"duplicate question id {qid!r}", path=where, line=line)
        verdicts[str(qid)] = _verdict(value, where, line, str(qid))
    return HumanGrades(tuple(verdicts.items()), field, path=where)


def read_human_grades_file(
    path: str | os.PathLike[str], field: str = "correct", *, allow_empty: bool = False
) -> HumanGrades:
    """Read a verdict file: the verdicts, the skipped questions and the header, if any.

    ``allow_empty`` accepts a file with no verdict yet (a session that has only begun).

    Raises
    ------
    FormatError
        ``FILE:LINE: field: expected ..., found ...``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> header = {"format": FORMAT, "version": 1, "run": "k3", "metric": "correct",
    ...           "sample": {"random": True, "seed": 0, "n": 3, "of": 60}}
    >>> lines = [header, {"id": "q4", "correct": True}, {"id": "q9", "skipped": True}]
    >>> _ = (folder / "h.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> v = read_human_grades_file(folder / "h.jsonl")
    >>> dict(v), v.skipped, v.sample.describe()
    ({'q4': 1.0}, ('q9',), 'a uniformly random sample of 3 of 60 judged questions (seed 0)')
    """
    file = Path(path)
    where = str(file)
    if file.suffix.lower() == ".jsonl":
        verdicts = _from_jsonl(where, field)
    else:
        verdicts = _from_mapping(read_text(file), where, field)
    if not verdicts and not allow_empty:
        raise FormatError("expected at least one human verdict, found none", path=where)
    return verdicts


def read_human_grades(path: str | os.PathLike[str], field: str = "correct") -> HumanGrades:
    """Read ``{question id: 0.0 or 1.0}`` from a JSONL file or a YAML/JSON mapping.

    The same :class:`HumanGrades` as :func:`read_human_grades_file` (a mapping of the
    verdicts), so :func:`~ragaudit.diagnose.calibration.calibrate` still sees how the sample
    was drawn and which questions were skipped.

    Raises
    ------
    FormatError
        ``FILE:LINE: field: expected ..., found ...``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "h.yaml").write_text("q01: true\\nq02: wrong\\n")
    >>> dict(read_human_grades(folder / "h.yaml"))
    {'q01': 1.0, 'q02': 0.0}
    """
    return read_human_grades_file(path, field)


def dump_human_grades(verdicts: HumanGrades) -> str:
    """The JSONL text of ``verdicts``: the header (when it has a sample), then one line each.

    >>> print(dump_human_grades(HumanGrades(
    ...     (("q2", 1.0), ("q5", None)), run="k3", sample=GradeSample(True, 2, 9, 0))), end="")
    {"format": "ragaudit.human-verdicts", "version": 1, "run": "k3", "metric": "correct", \
"sample": {"random": true, "seed": 0, "n": 2, "of": 9}}
    {"id": "q2", "correct": true}
    {"id": "q5", "skipped": true}
    """
    lines = []
    if verdicts.sample is not None:
        header = {
            "format": FORMAT,
            "version": _VERSION,
            "run": verdicts.run,
            "metric": verdicts.metric,
            "sample": verdicts.sample.to_dict(),
        }
        lines.append(json.dumps(header, ensure_ascii=False))
    graded = {qid: fingerprint for qid, fingerprint, _ in verdicts.answers}
    for qid, value in verdicts.entries:
        row: dict[str, Any] = {"id": qid}
        if value is None:
            row["skipped"] = True
        else:
            row[verdicts.metric] = bool(value)
        if qid in graded:
            row[_FINGERPRINT] = graded[qid]
        lines.append(json.dumps(row, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def save_human_grades(verdicts: HumanGrades, path: str | os.PathLike[str]) -> None:
    """Write :func:`dump_human_grades` to ``path`` atomically (readers never see half a file)."""
    atomic_write_text(path, dump_human_grades(verdicts))
