"""Golden sets checked like code: what ``ragaudit golden check`` finds before a run is made.

:func:`check_golden` reads a golden set and the corpus it is meant for and lists, each finding
with its question, line and a fix:

* **unknown keys**, with the nearest accepted name (``difflib``, lower case, ratio >= 0.6).
  A key within :data:`~ragaudit.data.golden_fields.MISSPELLING_SIMILARITY` (0.8) of an
  accepted name is a misspelling (``keyword`` -> ``keywords``), which ``run`` refuses with
  the same message: a problem.  Other unknown keys (``difficulty``) are the question's own
  metadata, which ragaudit keeps and never reads: listed as a note.  The rest of the check
  reads a misspelt key as the name it misspells;
* **sources not in the corpus** (with the nearest document id);
* **reference answers found nowhere in the corpus**: an answerable question's reference
  answer is *found* when every number of it and at least :data:`ANSWER_WORDS_FOUND` (60%)
  of its other content words (stopwords removed, lightly stemmed:
  :func:`ragaudit._text.content_tokens`) occur in its source documents plus at most one
  other document (an answer may recall a superseded rule from another document).  Words and
  numbers the question itself contains are not looked for.  A reference with nothing left to
  check (``"No."``) is a note, not a problem;
* **keywords that no chunk contains**: a keyword is *contained* in a chunk when its tokens
  (:func:`ragaudit._text.tokenize`: lower case, whole words and numbers) occur there as a
  contiguous run, so ``"24"`` matches ``24 days`` but not ``240`` or ``2024``;
* **duplicate questions** (the same tokens in the same order) and **near-duplicates**:
  Jaccard similarity of their content-word sets >= :data:`NEAR_DUPLICATE` (0.8).

A clean golden set has no problem (:attr:`GoldenCheck.ok`).  Anything ``run`` would refuse
other than a misspelt key (a missing field, a wrong type, a duplicate id) raises the loader's
own one-line error.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit._text import content_tokens, tokenize
from ragaudit.data.chunks import Chunk, Document
from ragaudit.data.golden import GoldenSet, golden_from_records, load_golden
from ragaudit.data.golden_fields import (
    known_keys,
    misspelt_key,
    nearest_key,
    unknown_key_message,
)
from ragaudit.exceptions import unreadable

__all__ = [
    "ANSWER_WORDS_FOUND",
    "CHECKS",
    "NEAR_DUPLICATE",
    "Finding",
    "GoldenCheck",
    "check_corpus_golden",
    "check_golden",
    "golden_records",
]

#: Share of a reference answer's non-number content words one document must hold.
ANSWER_WORDS_FOUND = 0.6
#: Jaccard similarity of content-word sets from which two questions are near-duplicates.
NEAR_DUPLICATE = 0.8
#: The checks, in report order.
CHECKS: tuple[str, ...] = (
    "unknown key",
    "source not in corpus",
    "answer not in corpus",
    "keyword in no chunk",
    "duplicate question",
    "near-duplicate question",
)


@dataclass(frozen=True)
class Finding:
    """One thing :func:`check_golden` found.

    ``problem`` findings make the check fail; the others (unknown keys kept as metadata, a
    reference answer with nothing to check) are notes.
    """

    check: str
    qid: str | None
    line: int | None
    detail: str
    problem: bool = True

    def to_dict(self) -> dict[str, Any]:
        """``{"check", "id", "line", "detail", "problem"}``."""
        return {
            "check": self.check,
            "id": self.qid,
            "line": self.line,
            "detail": self.detail,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class GoldenCheck:
    """What :func:`check_golden` found in a golden set against a corpus."""

    path: str
    corpus: str | None
    n_questions: int
    n_answerable: int
    n_documents: int
    n_chunks: int
    findings: tuple[Finding, ...]

    @property
    def problems(self) -> tuple[Finding, ...]:
        """The findings that make the check fail."""
        return tuple(f for f in self.findings if f.problem)

    @property
    def ok(self) -> bool:
        """No problem found (notes allowed)."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``golden check --format json``)."""
        return {
            "golden": self.path,
            "corpus": self.corpus,
            "n_questions": self.n_questions,
            "n_answerable": self.n_answerable,
            "n_documents": self.n_documents,
            "n_chunks": self.n_chunks,
            "ok": self.ok,
            "problems": len(self.problems),
            "findings": [f.to_dict() for f in self.findings],
            "rules": {
                "answer_words_found": ANSWER_WORDS_FOUND,
                "near_duplicate_jaccard": NEAR_DUPLICATE,
                "misspelling_similarity": 0.8,
            },
        }


_JSON = (".json", ".jsonl", ".ndjson", ".csv")


def golden_records(
    path: str | Path, key_lines: dict[tuple[int, str], int] | None = None
) -> tuple[list[tuple[int | None, dict[str, Any]]], bool]:
    """``([(line, {key: value})], text_cells)``: the raw questions of a golden-set file, with
    the same readers as :func:`~ragaudit.data.golden.load_golden` (YAML, JSON, JSON Lines,
    CSV); ``text_cells`` is True for CSV.  In YAML, ``key_lines`` (when given) is filled with
    ``{(question index, key): the key's own line}``."""
    from ragaudit.data.formats import read_text
    from ragaudit.data.formats.yaml_ import compose_yaml, construct_yaml

    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise unreadable(file, exc) from None
    suffix = file.suffix.lower()
    if (
        suffix in _JSON
        or (suffix not in (".yaml", ".yml") and raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"))
    ):  # fmt: skip
        from ragaudit.data.formats.records import read_records

        records, text_cells = read_records(file)
        return [(line, dict(rec)) for line, rec in records if isinstance(rec, Mapping)], text_cells
    import yaml

    root = compose_yaml(read_text(file), str(file))
    items = root
    if isinstance(root, yaml.MappingNode):
        found = [v for k, v in root.value if getattr(k, "value", None) == "questions"]
        items = found[0] if found else None
    if not isinstance(items, yaml.SequenceNode):
        load_golden(file)  # raises the loader's own error for a layout it refuses
        return [], False
    nodes = [node for node in items.value if isinstance(node, yaml.MappingNode)]
    if key_lines is not None:
        for i, node in enumerate(nodes):
            key_lines.update({(i, str(k.value)): k.start_mark.line + 1 for k, _ in node.value})
    return [
        (
            node.start_mark.line + 1,
            {str(k.value): construct_yaml(v, str(file)) for k, v in node.value},
        )
        for node in nodes
    ], False


def _key_findings(
    records: Sequence[tuple[int | None, Mapping[str, Any]]],
    columns: Mapping[str, str],
    key_lines: Mapping[tuple[int, str], int],
) -> tuple[list[Finding], dict[str, str]]:
    """Unknown keys, and ``{misspelt key: the accepted name it misspells}``."""
    mapped = set(columns.values())
    findings: list[Finding] = []
    misspelt: dict[str, str] = {}
    first: dict[str, int | None] = {}
    owner: dict[str, str | None] = {}
    count: dict[str, int] = {}
    for i, (line, record) in enumerate(records):
        for key in record:
            if key in mapped or key in known_keys():
                continue
            first.setdefault(key, key_lines.get((i, key), line))
            owner.setdefault(key, None if record.get("id") is None else str(record["id"]))
            count[key] = count.get(key, 0) + 1
    for key, line in first.items():
        near = misspelt_key(key, mapped)
        nearest = near or nearest_key(key)
        detail = unknown_key_message(key, near) + f" (in {count[key]} question(s))"
        if not near and nearest:
            detail += f"; nearest accepted name {nearest!r}"
        findings.append(Finding("unknown key", owner[key], line, detail, problem=near is not None))
        if near is not None:
            misspelt[key] = near
    return findings, misspelt


def _renamed(
    records: Sequence[tuple[int | None, Mapping[str, Any]]], misspelt: Mapping[str, str]
) -> list[tuple[int | None, dict[str, Any]]]:
    """The records with each misspelt key read as the name it misspells (when the question
    does not also have that name), so the other checks see what the author meant."""
    out = []
    for line, record in records:
        fixed = {}
        for key, value in record.items():
            target = misspelt.get(key)
            fixed[target if target and target not in record else key] = value
        out.append((line, fixed))
    return out


def _source_findings(golden: GoldenSet, doc_ids: Sequence[str]) -> list[Finding]:
    known = set(doc_ids)
    out = []
    for q in golden:
        for source in q.sources:
            if source not in known:
                near = difflib.get_close_matches(source, list(doc_ids), n=1, cutoff=0.6)
                fix = f"; did you mean {near[0]!r}?" if near else ""
                out.append(
                    Finding("source not in corpus", q.id, q.line,
                            f"{source!r} names no document of the corpus{fix}")
                )  # fmt: skip
    return out


def _is_number(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


def _answer_findings(golden: GoldenSet, documents: Sequence[Document]) -> list[Finding]:
    doc_tokens = {d.doc_id: set(content_tokens(d.text)) for d in documents}
    out = []
    for q in golden:
        if not q.answerable:
            continue
        # what the question already says (a number it quotes) is not looked for
        tokens = set(content_tokens(q.answer or "")) - set(content_tokens(q.question))
        numbers = {t for t in tokens if _is_number(t)}
        words = tokens - numbers
        if not tokens:
            out.append(
                Finding("answer not in corpus", q.id, q.line,
                        f"reference answer {q.answer!r} has no content word or number beyond "
                        "the question's to look for (not checked)", problem=False)
            )  # fmt: skip
            continue
        sources: set[str] = set().union(*(doc_tokens.get(s, set()) for s in q.sources))
        need = math.ceil(ANSWER_WORDS_FOUND * len(words))
        places = [sources | held for held in doc_tokens.values()] or [sources]
        if any(numbers <= held and len(words & held) >= need for held in places):
            continue
        best = max(places, key=lambda held: len(tokens & held))
        missing = sorted(tokens - best)
        out.append(
            Finding("answer not in corpus", q.id, q.line,
                    f"reference answer {q.answer!r} is not in the corpus (every number and "
                    f"{ANSWER_WORDS_FOUND:.0%} of its words in its sources plus at most one "
                    f"other document); missing at best: {', '.join(missing[:8])}")
        )  # fmt: skip
    return out


def _keyword_findings(golden: GoldenSet, chunks: Sequence[Chunk]) -> list[Finding]:
    texts = [f" {' '.join(tokenize(c.text))} " for c in chunks]
    out = []
    for q in golden:
        for keyword in q.keywords:
            needle = f" {' '.join(tokenize(keyword))} "
            if not needle.strip() or not any(needle in text for text in texts):
                out.append(
                    Finding("keyword in no chunk", q.id, q.line,
                            f"keyword {keyword!r} is in no chunk of the corpus (as whole words); "
                            "a correct answer cannot quote it from the context")
                )  # fmt: skip
    return out


def _duplicate_findings(golden: GoldenSet) -> list[Finding]:
    """Exact duplicates by token sequence; near-duplicates by the Jaccard similarity of the
    content-word sets, computed for every pair at once as a sparse product."""
    from scipy import sparse

    questions = list(golden)
    out: list[Finding] = []
    seen: dict[str, str] = {}
    exact: set[tuple[int, int]] = set()
    index = {q.id: i for i, q in enumerate(questions)}
    for i, q in enumerate(questions):
        key = " ".join(tokenize(q.question))
        if key in seen:
            exact.add((index[seen[key]], i))
            out.append(Finding("duplicate question", q.id, q.line,
                               f"the same question as {seen[key]}"))  # fmt: skip
        else:
            seen[key] = q.id
    sets = [set(content_tokens(q.question)) for q in questions]
    vocab = {t: j for j, t in enumerate(sorted(set().union(*sets)))} if sets else {}
    if not vocab:
        return out
    rows = [i for i, s in enumerate(sets) for _ in s]
    cols = [vocab[t] for s in sets for t in s]
    m = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(sets), len(vocab)))
    inter = sparse.triu(m @ m.T, k=1).tocoo()
    sizes = np.array([len(s) for s in sets], dtype=float)
    jaccard = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
    for i, j, sim in zip(inter.row, inter.col, jaccard, strict=True):
        if sim >= NEAR_DUPLICATE and (int(i), int(j)) not in exact:
            a, b = questions[int(i)], questions[int(j)]
            out.append(
                Finding("near-duplicate question", b.id, b.line,
                        f"nearly the same question as {a.id} (Jaccard {sim:.2f} of their "
                        "content words): paraphrases are correlated, not independent evidence")
            )  # fmt: skip
    return out


def check_golden(
    golden_path: str | Path,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    *,
    columns: Mapping[str, str] | None = None,
    corpus: str | None = None,
) -> GoldenCheck:
    """Check a golden-set file against a corpus (see the module docstring for every rule).

    Parameters
    ----------
    golden_path : str or Path
        The golden set (YAML, JSON, JSON Lines or CSV, as ``run --golden`` reads it).
    documents : sequence of Document
        The corpus (:func:`ragaudit.pipeline.corpus.load_corpus`).
    chunks : sequence of Chunk
        The corpus chunked as the runs will chunk it (keywords are looked for in chunks).
    columns : mapping, optional
        ``--map`` overrides, as ``run`` takes them.
    corpus : str, optional
        The corpus's name for the report.

    Returns
    -------
    GoldenCheck

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ragaudit.data.chunks import Chunk, Document
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "g.yaml"
    >>> _ = file.write_text('''
    ... - {id: q1, question: "How many days of leave?", answer: 24 days., sources: [leave],
    ...    keyword: ["24"]}
    ... - {id: q2, question: "How many days of leave?", answer: 9 weeks., sources: [leav]}
    ... ''')
    >>> docs = [Document("leave", "Everyone gets 24 days of leave.")]
    >>> check = check_golden(file, docs, [Chunk("leave#0", "leave", 0, docs[0].text)])
    >>> [(f.check, f.qid) for f in check.problems]  # doctest: +NORMALIZE_WHITESPACE
    [('unknown key', 'q1'), ('source not in corpus', 'q2'), ('answer not in corpus', 'q2'),
     ('duplicate question', 'q2')]
    """
    path = str(golden_path)
    columns = dict(columns or {})
    key_lines: dict[tuple[int, str], int] = {}
    records, text_cells = golden_records(path, key_lines)
    key_findings, misspelt = _key_findings(records, columns, key_lines)
    golden = golden_from_records(
        _renamed(records, misspelt), path=path, columns=columns or None, text_cells=text_cells
    )
    doc_ids = [d.doc_id for d in documents]
    findings = [
        *key_findings,
        *_source_findings(golden, doc_ids),
        *_answer_findings(golden, documents),
        *_keyword_findings(golden, chunks),
        *_duplicate_findings(golden),
    ]
    return GoldenCheck(
        path=path,
        corpus=corpus,
        n_questions=len(golden),
        n_answerable=sum(1 for q in golden if q.answerable),
        n_documents=len(documents),
        n_chunks=len(chunks),
        findings=tuple(sorted(findings, key=lambda f: CHECKS.index(f.check))),
    )


def check_corpus_golden(
    golden_path: str | Path,
    corpus_dir: str | Path,
    *,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    columns: Mapping[str, str] | None = None,
) -> GoldenCheck:
    """:func:`check_golden` against the corpus in ``corpus_dir``, chunked as ``run`` chunks
    it (the same defaults)."""
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.corpus import load_corpus

    documents = load_corpus(corpus_dir)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    return check_golden(golden_path, documents, chunks, columns=columns, corpus=str(corpus_dir))
