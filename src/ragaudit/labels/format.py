"""The chunk-label file (``format: ragaudit.chunk_labels``, version 1).

Chunk labels say, for each question, which chunks of its gold document(s) contain the answer
(grade 2) and which are merely related (grade 1); every other candidate chunk is grade 0.  They
are only meaningful for the chunking they were made with (chunk ids change with chunk size,
overlap, chunker and corpus), so the file records that chunking and loading it against a run
chunked differently is an error.

.. code-block:: yaml

    format: ragaudit.chunk_labels
    version: 1
    chunking: {chunker: fixed, chunk_size: 800, chunk_overlap: 100, corpus_sha256: "..."}
    labeller: heuristic
    questions:
      q01:
        question: "In which year was the company founded?"
        doc_sources: [01-company-overview]
        n_candidate_chunks: 4
        answer_chunks: [<chunk id>]        # grade 2
        supporting_chunks: [<chunk id>]    # grade 1
        labeller: heuristic

A question being labelled by a person and interrupted carries ``complete: false`` and the
grades given so far (``graded: {chunk id: grade}``); it is skipped by :meth:`ChunkLabels.to_qrels`
and resumed by the next ``ragaudit labels build --labeller human``.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragaudit._io import atomic_write_text
from ragaudit._yaml import compose_yaml, construct_yaml
from ragaudit.data.formats import read_text, shorten
from ragaudit.data.qrels import Qrels
from ragaudit.exceptions import FormatError, InputError
from ragaudit.labels.paths import fresh_labels_path

__all__ = [
    "LABELS_FORMAT",
    "LABELS_VERSION",
    "ChunkLabels",
    "Chunking",
    "QuestionLabels",
    "check_label_ids",
    "dump_chunk_labels",
    "is_chunk_label_file",
    "load_chunk_labels",
    "read_label_file",
    "retrieved_chunk_ids",
    "save_chunk_labels",
]

LABELS_FORMAT = "ragaudit.chunk_labels"
LABELS_VERSION = 1
_CHUNKING_KEYS = ("chunker", "chunk_size", "chunk_overlap", "corpus_sha256")


@dataclass(frozen=True)
class Chunking:
    """How the corpus was chunked when the labels were made (``corpus_sha256`` may be None)."""

    chunker: str
    chunk_size: int
    chunk_overlap: int
    corpus_sha256: str | None = None

    def describe(self) -> str:
        """``"chunker=fixed, chunk_size=800, chunk_overlap=100"`` (for messages)."""
        return (
            f"chunker={self.chunker}, chunk_size={self.chunk_size}, "
            f"chunk_overlap={self.chunk_overlap}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The YAML ``chunking`` block."""
        return {
            "chunker": self.chunker,
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
            "corpus_sha256": self.corpus_sha256,
        }


@dataclass
class QuestionLabels:
    """The labels of one question (see the module docstring for the fields)."""

    question: str
    doc_sources: list[str]
    n_candidate_chunks: int
    answer_chunks: list[str] = field(default_factory=list)
    supporting_chunks: list[str] = field(default_factory=list)
    labeller: str = ""
    complete: bool = True
    graded: dict[str, int] = field(default_factory=dict)

    def grades(self) -> dict[str, int]:
        """``{chunk id: grade}`` for the positive grades (2 answer, 1 supporting)."""
        out = {c: 1 for c in self.supporting_chunks}
        out.update({c: 2 for c in self.answer_chunks})
        return out

    def to_dict(self) -> dict[str, Any]:
        """The YAML entry of this question."""
        out: dict[str, Any] = {
            "question": self.question,
            "doc_sources": list(self.doc_sources),
            "n_candidate_chunks": self.n_candidate_chunks,
            "answer_chunks": list(self.answer_chunks),
            "supporting_chunks": list(self.supporting_chunks),
            "labeller": self.labeller,
        }
        if not self.complete:
            out["complete"] = False
            out["graded"] = dict(self.graded)
        return out


@dataclass
class ChunkLabels:
    """A chunk-label file in memory.

    Examples
    --------
    >>> labels = ChunkLabels(Chunking("fixed", 800, 100), "heuristic", {
    ...     "q1": QuestionLabels("Q?", ["D"], 3, ["c2"], ["c1"], "heuristic")})
    >>> labels.to_qrels().to_dict()
    {'q1': {'c1': 1, 'c2': 2}}
    >>> labels.check_chunking({"chunk_size": 400, "chunk_overlap": 100, "chunker": "fixed"})
    Traceback (most recent call last):
    ...
    ragaudit.exceptions.InputError: chunk labels: made for chunker=fixed, chunk_size=800, \
chunk_overlap=100 but the run uses chunker=fixed, chunk_size=400, chunk_overlap=100; chunk ids \
differ between chunkings: label that chunking into a new file with ragaudit labels build \
--chunk-size 400 --chunk-overlap 100 --chunker fixed --out chunk_labels.yaml
    """

    chunking: Chunking
    labeller: str
    questions: dict[str, QuestionLabels] = field(default_factory=dict)
    path: str | None = None

    def complete_questions(self) -> list[str]:
        """Ids of the fully labelled questions, in file order."""
        return [q for q, lab in self.questions.items() if lab.complete]

    def to_qrels(self) -> Qrels:
        """Chunk-level :class:`~ragaudit.data.qrels.Qrels` of the complete questions.

        Grades: 2 for answer chunks, 1 for supporting chunks (other candidates are 0 and
        omitted).
        """
        return Qrels(
            {q: self.questions[q].grades() for q in self.complete_questions()},
            unit="chunk",
            name=self.path,
        )

    def check_chunking(self, config: Mapping[str, Any]) -> None:
        """Raise InputError unless ``config`` (a saved run's) matches the labels' chunking.

        Only keys present in both are compared (a run without ``corpus_sha256`` is not
        checked for it).
        """
        mine = self.chunking.to_dict()
        clash = [
            key
            for key in _CHUNKING_KEYS
            if mine.get(key) is not None
            and config.get(key) is not None
            and str(mine[key]) != str(config[key])
        ]
        if not clash:
            return
        where = self.path or "chunk labels"
        fresh = fresh_labels_path(self.path)
        if clash == ["corpus_sha256"]:
            raise InputError(
                f"{where}: made for a different corpus (corpus_sha256 {mine['corpus_sha256'][:12]}"
                f" vs the run's {str(config['corpus_sha256'])[:12]}); label the run's corpus "
                f"into a new file: ragaudit labels build --corpus DIR --golden FILE --out {fresh}"
            )
        theirs = Chunking(
            str(config.get("chunker", self.chunking.chunker)),
            int(config.get("chunk_size", self.chunking.chunk_size)),
            int(config.get("chunk_overlap", self.chunking.chunk_overlap)),
        )
        raise InputError(
            f"{where}: made for {self.chunking.describe()} but the run uses "
            f"{theirs.describe()}; chunk ids differ between chunkings: label that chunking into "
            f"a new file with ragaudit labels build --chunk-size {theirs.chunk_size} "
            f"--chunk-overlap {theirs.chunk_overlap} --chunker {theirs.chunker} --out {fresh}"
        )

    def labelled_ids(self) -> dict[str, dict[str, int]]:
        """``{question: {chunk id: grade}}`` of every id the file names (graded ones too)."""
        return {q: {**lab.graded, **lab.grades()} for q, lab in self.questions.items()}

    def check_ids(self, known: Collection[str], against: str, hint: str = "") -> None:
        """Refuse labels most of whose chunk ids are unknown (see :func:`check_label_ids`)."""
        where = self.path or "chunk labels"
        check_label_ids(self.labelled_ids(), known, where=where, against=against, hint=hint)

    def check_run_ids(
        self,
        rows: Iterable[Mapping[str, Any]],
        chunk_texts: Collection[str] | None = None,
        *,
        corpus_hint: bool = False,
    ) -> None:
        """Refuse labels made for another chunking than a saved run's: against the chunk ids of
        the run's corpus when ``chunk_texts`` is given, else against the chunks the run
        retrieved for any question (``corpus_hint`` adds "pass --corpus" to the message)."""
        if chunk_texts is not None:
            self.check_ids(chunk_texts, "chunks of the run's corpus and chunking")
            return
        hint = "; if the run only missed them, pass --corpus to check the whole chunking"
        self.check_ids(
            retrieved_chunk_ids(rows),
            "among the chunks this run retrieved for any question",
            hint if corpus_hint else "",
        )

    def to_dict(self) -> dict[str, Any]:
        """The whole file as plain data (keys in the documented order)."""
        return {
            "format": LABELS_FORMAT,
            "version": LABELS_VERSION,
            "chunking": self.chunking.to_dict(),
            "labeller": self.labeller,
            "questions": {q: lab.to_dict() for q, lab in self.questions.items()},
        }


def check_label_ids(
    labelled: Mapping[str, Mapping[str, int]],
    known: Collection[str],
    *,
    where: str,
    against: str = "chunks of this corpus and chunking",
    hint: str = "",
) -> None:
    """Refuse chunk labels when most labelled chunk ids are not in ``known``.

    Labels made for another corpus or chunking (or another tool's ids) pass every header
    check and then score every chunk metric 0; more than half of the labelled ids being
    unknown is taken as that, and the message names a few of them.

    >>> check_label_ids({"q1": {"c1": 2, "x9": 1}}, {"c1", "c2"}, where="l.yaml")
    >>> check_label_ids({"q1": {"x1": 2, "x2": 1}}, {"c1"}, where="l.yaml")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.exceptions.InputError: l.yaml: 2 of 2 labelled chunk ids are not chunks of ...
    """
    ids = list(dict.fromkeys(c for grades in labelled.values() for c in grades))
    unknown = [c for c in ids if c not in known]
    if ids and 2 * len(unknown) > len(ids):
        few = ", ".join(repr(c) for c in unknown[:3])
        raise InputError(
            f"{where}: {len(unknown)} of {len(ids)} labelled chunk ids are not {against} "
            f"(e.g. {few}); these labels were made for another corpus or chunking: label it "
            "into a new file with ragaudit labels build --corpus DIR --golden FILE --chunk-size N "
            f"--chunk-overlap M --out {fresh_labels_path(where)}{hint}"
        )


def retrieved_chunk_ids(rows: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every chunk id a saved run's rows retrieved, for any question.

    >>> sorted(retrieved_chunk_ids([{"retrieved": [{"chunk_id": "c2"}, {"chunk_id": "c1"}]}]))
    ['c1', 'c2']
    """
    return {
        str(hit["chunk_id"])
        for row in rows
        for hit in (row.get("retrieved") or [])
        if isinstance(hit, Mapping) and hit.get("chunk_id") is not None
    }


def dump_chunk_labels(labels: ChunkLabels) -> str:
    """The YAML text of ``labels`` (deterministic: documented key order, no aliases)."""
    return yaml.safe_dump(
        labels.to_dict(), sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )


def save_chunk_labels(labels: ChunkLabels, path: str | os.PathLike[str]) -> None:
    """Write ``labels`` to ``path`` atomically (readers never see half a file)."""
    atomic_write_text(path, dump_chunk_labels(labels))
    labels.path = str(path)


def _question_lines(root: yaml.Node | None) -> dict[str, int]:
    """1-based line of each question key, for error messages."""
    if not isinstance(root, yaml.MappingNode):
        return {}
    for key, value in root.value:
        if getattr(key, "value", None) == "questions" and isinstance(value, yaml.MappingNode):
            return {str(k.value): k.start_mark.line + 1 for k, _ in value.value}
    return {}


def _str_list(value: Any, where: str, line: int | None, field_name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise FormatError(
            f"expected a list of chunk ids, found {shorten(value)}",
            path=where,
            line=line,
            field=field_name,
        )
    return [str(v) for v in value]


def is_chunk_label_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` reads as YAML whose ``format`` is ragaudit's chunk labels: the only
    kind of file that the rebuild flag of ``labels build`` may replace.

    >>> import pathlib, tempfile
    >>> book = pathlib.Path(tempfile.mkdtemp()) / "chunk_labels.yaml"
    >>> _ = book.write_text("q1: {chunks: [c3, c7]}")
    >>> is_chunk_label_file(book)
    False
    """
    try:
        root = compose_yaml(read_text(path), str(path))
        data = None if root is None else construct_yaml(root, str(path))
    except FormatError:
        return False
    return isinstance(data, Mapping) and data.get("format") == LABELS_FORMAT


def load_chunk_labels(
    path: str | os.PathLike[str], *, expect: Mapping[str, Any] | None = None
) -> ChunkLabels:
    """Read a chunk-label file; with ``expect`` (a saved run's config) check its chunking.

    Raises
    ------
    FormatError
        Not YAML, not a ``ragaudit.chunk_labels`` file, an unsupported version, or a field of
        the wrong type (the message names the file, line and field).
    InputError
        The file does not exist, or it was made for a different chunking than ``expect``.
    """
    where = str(path)
    try:
        text = read_text(path)  # the shared text reader: UTF-8, a leading BOM dropped
    except FormatError as exc:
        if Path(path).exists():
            raise
        raise FormatError(
            f"{exc.message}; build one with ragaudit labels build", path=where
        ) from None
    # the one safe YAML loader: plain data only, bounded alias expansion, short messages
    root = compose_yaml(text, where)
    data = None if root is None else construct_yaml(root, where)
    if not isinstance(data, Mapping) or data.get("format") != LABELS_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise FormatError(
            f"expected {LABELS_FORMAT!r}, found {shorten(found)}; this file is left as it is: "
            "write ragaudit's labels to a new file with ragaudit labels build --corpus DIR "
            f"--golden FILE --out {fresh_labels_path(where)}",
            path=where,
            field="format",
        )
    if data.get("version") != LABELS_VERSION:
        raise FormatError(
            f"expected version {LABELS_VERSION}, found {shorten(data.get('version'))}",
            path=where,
            field="version",
        )
    chunking_raw = data.get("chunking")
    if not isinstance(chunking_raw, Mapping):
        raise FormatError(
            "expected a mapping with chunker, chunk_size, chunk_overlap",
            path=where,
            field="chunking",
        )
    sizes = [chunking_raw.get(key) for key in ("chunk_size", "chunk_overlap")]
    sha = chunking_raw.get("corpus_sha256")
    if (
        not isinstance(chunking_raw.get("chunker"), str)
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in sizes)
        or not (sha is None or isinstance(sha, str))
    ):
        found = {key: chunking_raw.get(key) for key in ("chunker", "chunk_size", "chunk_overlap")}
        raise FormatError(
            "expected chunker (text), chunk_size and chunk_overlap (integers >= 0), found "
            + shorten(found, 120),
            path=where,
            field="chunking",
        )
    chunking = Chunking(
        str(chunking_raw["chunker"]),
        int(chunking_raw["chunk_size"]),
        int(chunking_raw["chunk_overlap"]),
        sha,
    )
    questions_raw = data.get("questions") or {}
    if not isinstance(questions_raw, Mapping):
        raise FormatError(
            "expected a mapping of question id -> labels", path=where, field="questions"
        )
    lines = _question_lines(root)
    questions: dict[str, QuestionLabels] = {}
    for qid_raw, entry in questions_raw.items():
        qid = str(qid_raw)
        line = lines.get(qid)
        prefix = f"questions.{qid}"
        if not isinstance(entry, Mapping):
            raise FormatError("expected a mapping", path=where, line=line, field=prefix)
        n_candidates = entry.get("n_candidate_chunks", 0)
        if isinstance(n_candidates, bool) or not isinstance(n_candidates, int) or n_candidates < 0:
            raise FormatError(
                f"expected an integer >= 0, found {shorten(n_candidates)}",
                path=where,
                line=line,
                field=f"{prefix}.n_candidate_chunks",
            )
        graded_raw = entry.get("graded") or {}
        if not isinstance(graded_raw, Mapping) or not all(
            isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 2
            for g in graded_raw.values()
        ):
            raise FormatError(
                "expected {chunk id: grade 0, 1 or 2}",
                path=where,
                line=line,
                field=f"{prefix}.graded",
            )
        questions[qid] = QuestionLabels(
            question=str(entry.get("question", "")),
            doc_sources=_str_list(entry.get("doc_sources"), where, line, f"{prefix}.doc_sources"),
            n_candidate_chunks=n_candidates,
            answer_chunks=_str_list(
                entry.get("answer_chunks"), where, line, f"{prefix}.answer_chunks"
            ),
            supporting_chunks=_str_list(
                entry.get("supporting_chunks"), where, line, f"{prefix}.supporting_chunks"
            ),
            labeller=str(entry.get("labeller", data.get("labeller", ""))),
            complete=entry.get("complete", True) is not False,
            graded={str(c): int(g) for c, g in graded_raw.items()},
        )
    labels = ChunkLabels(chunking, str(data.get("labeller", "")), questions, where)
    if expect is not None:
        labels.check_chunking(expect)
    return labels


def read_label_file(path: str | os.PathLike[str]) -> tuple[Qrels, bool]:
    """Labels of any format ``ragaudit agreement`` reads, and whether absent items mean 0.

    Chunk-label files (``format: ragaudit.chunk_labels``) list positive grades only, so
    their absent chunks count as 0; any other format goes through the shared reader
    (:func:`ragaudit.data.formats.read_labels`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("q1 0 A 2\\n")
    >>> qrels, implicit_zero = read_label_file(path)
    >>> dict(qrels["q1"]), implicit_zero
    ({'A': 2}, False)
    """
    from ragaudit.data.formats import declared_format, read_labels

    if declared_format(os.fspath(path)) == LABELS_FORMAT:
        return load_chunk_labels(path).to_qrels(), True
    return read_labels(os.fspath(path)), False
