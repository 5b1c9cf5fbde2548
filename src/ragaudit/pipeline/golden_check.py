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
* **duplicate questions** (the same tokens in the same order);
* the validity checks of :mod:`ragaudit.pipeline.golden_validity`: the answer stated in the
  question, paraphrase duplicates (BM25 similarity), coverage skew with its design effect,
  documents in conflict on a reference's fact; and, with an LLM generator, the closed-book
  leak of :mod:`ragaudit.pipeline.golden_closed_book`.  Each check carries a
  :class:`~ragaudit.pipeline.golden_findings.CheckSummary` (n, flagged, interval, method).

A clean golden set has no problem (:attr:`GoldenCheck.ok`).  Anything ``run`` would refuse
other than a misspelt key (a missing field, a wrong type, a duplicate id) raises the loader's
own one-line error.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragaudit._text import content_tokens, tokenize
from ragaudit.data.chunks import Chunk, Document
from ragaudit.data.golden import GoldenQuestion, GoldenSet, golden_from_records, load_golden
from ragaudit.data.golden_fields import (
    known_keys,
    misspelt_key,
    nearest_key,
    unknown_key_message,
)
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import unreadable
from ragaudit.pipeline.golden_closed_book import ClosedBook, closed_book_leak
from ragaudit.pipeline.golden_findings import CheckSummary, Finding
from ragaudit.pipeline.golden_validity import (
    Coverage,
    answer_in_question,
    conflicts,
    coverage,
    paraphrase_pairs,
    summarise,
)

__all__ = [
    "ANSWER_WORDS_FOUND",
    "CHECKS",
    "CheckSummary",
    "Finding",
    "GoldenCheck",
    "check_corpus_golden",
    "check_golden",
    "check_questions",
    "golden_of_run",
    "golden_records",
    "run_golden_check",
]

#: Share of a reference answer's non-number content words one document must hold.
ANSWER_WORDS_FOUND = 0.6
#: The checks, in report order.
CHECKS: tuple[str, ...] = (
    "unknown key",
    "source not in corpus",
    "answer not in corpus",
    "keyword in no chunk",
    "duplicate question",
    "answer in question",
    "paraphrase duplicate",
    "closed-book leak",
    "conflict",
)


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
    summaries: tuple[CheckSummary, ...] = ()
    coverage: Coverage | None = None
    closed_book: ClosedBook | None = None

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
            "checks": [s.to_dict() for s in self.summaries],
            "coverage": None if self.coverage is None else self.coverage.to_dict(),
            "closed_book": None if self.closed_book is None else self.closed_book.to_dict(),
            "rules": {
                "answer_words_found": ANSWER_WORDS_FOUND,
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


def _duplicate_findings(golden: GoldenSet) -> tuple[list[Finding], set[tuple[str, str]]]:
    """Exact duplicates by token sequence, and the ``(first, second)`` id pairs found."""
    out: list[Finding] = []
    seen: dict[str, str] = {}
    exact: set[tuple[str, str]] = set()
    for q in golden:
        key = " ".join(tokenize(q.question))
        if key in seen:
            exact.add((seen[key], q.id))
            out.append(Finding("duplicate question", q.id, q.line,
                               f"the same question as {seen[key]}"))  # fmt: skip
        else:
            seen[key] = q.id
    return out, exact


def check_golden(
    golden_path: str | Path,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    *,
    columns: Mapping[str, str] | None = None,
    corpus: str | None = None,
    generator: Any = None,
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
    generator : LLMGenerator, optional
        With one, every answerable question is also asked with an empty context
        (:func:`~ragaudit.pipeline.golden_closed_book.closed_book_leak`).

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
    found = check_questions(golden, documents, chunks, corpus=corpus, generator=generator)
    findings = sorted((*key_findings, *found.findings), key=lambda f: CHECKS.index(f.check))
    return replace(found, findings=tuple(findings))


def check_questions(
    golden: GoldenSet,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    *,
    corpus: str | None = None,
    generator: Any = None,
) -> GoldenCheck:
    """Every check of :func:`check_golden` but the file's own keys, on questions already read
    (a golden set, or the questions a saved run carries: :func:`golden_of_run`)."""
    doc_ids = [d.doc_id for d in documents]
    questions = list(golden)
    missing = _answer_findings(golden, documents)
    duplicates, exact = _duplicate_findings(golden)
    leaks, leak_summary = answer_in_question(questions)
    paraphrases, paraphrase_summary = paraphrase_pairs(questions, exact)
    conflicting, conflict_summary = conflicts(questions, documents)
    checked = sum(1 for q in questions if q.answerable)
    unfound = sum(1 for f in missing if f.problem)
    findings = [
        *_source_findings(golden, doc_ids),
        *missing,
        *_keyword_findings(golden, chunks),
        *duplicates,
        *leaks,
        *paraphrases,
        *conflicting,
    ]
    summaries: tuple[CheckSummary, ...] = (
        summarise("answer not in corpus", unfound, checked, "answerable questions",
                  f"unanswerable in fact: every number and {ANSWER_WORDS_FOUND:.0%} of the "
                  "reference's content words in its sources plus at most one other document"),
        leak_summary,
        paraphrase_summary,
        conflict_summary,
    )  # fmt: skip
    closed = None
    if generator is not None:
        leaks_found, closed = closed_book_leak(questions, generator)
        findings.extend(leaks_found)
        summaries = (*summaries, closed.summary)
    return GoldenCheck(
        path=golden.path or "",
        corpus=corpus,
        n_questions=len(golden),
        n_answerable=sum(1 for q in golden if q.answerable),
        n_documents=len(documents),
        n_chunks=len(chunks),
        findings=tuple(sorted(findings, key=lambda f: CHECKS.index(f.check))),
        summaries=summaries,
        coverage=coverage(questions),
        closed_book=closed,
    )


def golden_of_run(run: SavedRun) -> GoldenSet:
    """The golden questions a saved run carries (id, question, reference answer, sources =
    ``gold_docs``, answerable, keywords), for :func:`check_questions`.

    >>> run = SavedRun.from_dict({"name": "r", "config": {"k": 1}, "rows": [{"id": "q1",
    ...     "question": "Q?", "reference_answer": "A.", "gold_docs": ["d"], "retrieved": []}]})
    >>> golden_of_run(run)[0].sources
    ('d',)
    """
    questions = tuple(
        GoldenQuestion(
            id=q.id, question=q.question, answer=q.reference_answer or "",
            sources=tuple(q.gold_docs), answerable=q.answerable, keywords=tuple(q.keywords),
        )
        for q in run.questions
    )
    return GoldenSet(questions, path=f"run {run.name}")


def run_golden_check(run: SavedRun, corpus_dir: str | Path) -> GoldenCheck:
    """:func:`check_questions` of the questions ``run`` carries against the corpus in
    ``corpus_dir``, chunked as the run was (what ``report --corpus`` shows)."""
    from ragaudit.pipeline.corpus import load_corpus, run_chunks

    chunks = run_chunks(corpus_dir, run.config)
    return check_questions(golden_of_run(run), load_corpus(corpus_dir), chunks,
                           corpus=str(corpus_dir))  # fmt: skip


def check_corpus_golden(
    golden_path: str | Path,
    corpus_dir: str | Path,
    *,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    columns: Mapping[str, str] | None = None,
    generator: Any = None,
) -> GoldenCheck:
    """:func:`check_golden` against the corpus in ``corpus_dir``, chunked as ``run`` chunks
    it (the same defaults); ``generator`` adds the closed-book leak."""
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.corpus import load_corpus

    documents = load_corpus(corpus_dir)
    chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    return check_golden(
        golden_path, documents, chunks, columns=columns, corpus=str(corpus_dir),
        generator=generator,
    )  # fmt: skip
