"""Production traces as a saved run: ``ragaudit import --from openinference SPANS``.

The spans are read by :func:`~ragaudit.data.spans.read_spans` (OTLP/JSON or span JSON lines)
and grouped into requests by :func:`~ragaudit.data.traces.assemble_traces` (question, retrieved
documents, answer, latency, tokens and cost per trace).  Then, as for the RAGAS import
(:mod:`ragaudit.pipeline.replay`), the harness replays every question, so the offline judges,
the retrieval metrics and the summary are computed exactly as for a run ragaudit made:

* **with** ``--golden`` (and ``--corpus``): a trace is matched to a golden question by the id
  in its root span's ``metadata``, else by its question text (whitespace squashed).  Every
  golden question is a row: one with no trace keeps its place as a generation error ("no
  trace"), so it stays in every denominator.  Traces matching no golden question, and later
  traces of a question already matched, are counted and listed (not rows).
* **without** ``--golden``: every trace with a question is a row (id from its ``metadata``, else
  ``t1``, ``t2`` ... in start order); no gold documents, so retrieval metrics are undefined
  but the answer stages of the funnel, p95 latency and $/question come out.

A retrieved document is the chunk of ``--corpus`` whose chunk id is its ``document.id``, else
the chunk its ``document.content`` matches (exact text, else token overlap >= ``min_overlap``),
else dropped and counted.  Without ``--corpus`` each distinct ``document.id`` is its own chunk
and its own document (its first recorded content).

Latency is the trace's own (root span end minus start), so ``latency_ms.total`` of each row
is exactly its root span's duration; cost is ``llm.cost.total`` summed over its LLM spans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ragaudit._io import refuse_input_as_output
from ragaudit._version import version
from ragaudit.data.chunks import Chunk, chunk_id
from ragaudit.data.context_match import MIN_OVERLAP, ContextIndex
from ragaudit.data.golden import GoldenQuestion, golden_from_records
from ragaudit.data.saved_run import SavedRun
from ragaudit.data.spans import read_spans
from ragaudit.data.traces import Trace, TraceDocument, assemble_traces
from ragaudit.exceptions import InputError
from ragaudit.judges.offline import is_abstention
from ragaudit.llm.citations import extract_citations
from ragaudit.pipeline.build import golden_for_corpus
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import saved_run_path
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus
from ragaudit.pipeline.generators import Generation
from ragaudit.pipeline.harness import evaluate_configuration
from ragaudit.pipeline.retrievers import Retriever

__all__ = ["TraceImport", "import_traces"]


@dataclass(frozen=True)
class TraceImport:
    """A saved run made from traces, with what was matched, counted and left out.

    Attributes
    ----------
    saved : SavedRun
    n_spans, n_traces : int
    matched : int
        Traces that became a row.
    unmatched_traces : tuple of str
        ``trace_id (line N): question`` of traces matching no golden question.
    unmatched_questions : tuple of str
        Golden question ids with no trace (rows with the generation error "no trace").
    repeated_traces : tuple of str
        Traces of a question already matched (the first in start order is kept).
    no_question : tuple of str
        Traces whose root span has no question (``input.value``).
    no_retriever : tuple of str
        Question ids whose trace has no ``RETRIEVER`` span (nothing retrieved).
    unknown_kinds : dict
        ``{span kind: spans}`` for kinds outside OpenInference's list.
    documents : dict
        Retrieved documents: ``total``, ``by_id``, ``exact``, ``overlap``, ``unmatched``
        (dropped), ``repeated`` (same chunk twice in a trace, kept once).
    """

    saved: SavedRun
    n_spans: int
    n_traces: int
    matched: int
    unmatched_traces: tuple[str, ...]
    unmatched_questions: tuple[str, ...]
    repeated_traces: tuple[str, ...]
    no_question: tuple[str, ...]
    no_retriever: tuple[str, ...]
    unknown_kinds: dict[str, int]
    documents: dict[str, int]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _describe(trace: Trace) -> str:
    question = trace.question or ""
    short = question if len(question) <= 50 else question[:47] + "..."
    return f"{trace.trace_id} (line {trace.line}): {short!r}"


class _TraceReplay:
    """Retriever and generator at once: each question's recorded chunks, answer, time, cost."""

    def __init__(
        self, rankings: Mapping[str, list[tuple[str, float | None]]], traces: Mapping[str, Trace]
    ) -> None:
        self._rankings = rankings
        self._traces = traces

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float | None]]:
        return self._rankings.get(question, [])[:depth]

    def generate(self, question: str, context: list[Chunk]) -> Generation:
        trace = self._traces.get(question)
        if trace is None:  # latency {} is recorded as no time, not as this replay's time
            return Generation("", False, error="import: no trace for this question", latency_ms={})
        extra = {"trace_id": trace.trace_id}
        usage = None
        if trace.n_llm:
            usage = {
                "input_tokens": trace.input_tokens,
                "output_tokens": trace.output_tokens,
                "cost_usd": trace.cost_usd,
            }
        if trace.answer is None:
            return Generation(
                "",
                False,
                error="import: the trace records no answer",
                usage=usage,
                latency_ms=dict(trace.latency_ms),
                row_extra=extra,
            )
        abstained = is_abstention(trace.answer)
        return Generation(
            trace.answer,
            abstained,
            [] if abstained else extract_citations(trace.answer),
            usage=usage,
            latency_ms=dict(trace.latency_ms),
            row_extra=extra,
        )


def _chunks_from_traces(traces: list[Trace]) -> list[Chunk]:
    """Each distinct ``document.id`` (else content) as its own one-chunk document."""
    chunks: dict[str, Chunk] = {}
    for trace in traces:
        for doc in trace.documents:
            key = _doc_key(doc)
            if key not in chunks:
                chunks[key] = Chunk(key, key, 0, doc.content or "")
    return list(chunks.values())


def _doc_key(doc: TraceDocument) -> str:
    return doc.id if doc.id is not None else chunk_id("content", 0, doc.content or "")


def import_traces(
    path: str | Path,
    *,
    corpus: str | Path | None = None,
    golden: str | Path | None = None,
    golden_columns: Mapping[str, str] | None = None,
    k: int | None = None,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    chunker: str = "fixed",
    min_overlap: float = MIN_OVERLAP,
    name: str | None = None,
    out_dir: str | Path = "ragaudit-results",
    save_as: str = "json",
) -> TraceImport:
    """Turn a file of OpenInference spans into a saved run (see the module docstring).

    Parameters
    ----------
    path : str or Path
        OTLP/JSON or span JSON lines.
    corpus : str or Path, optional
        The documents retrieved from (needed with ``golden``).
    golden : str or Path, optional
    golden_columns : mapping, optional
        ``--map`` for the golden set.
    k : int, optional
        Cut-off (default: the most documents a trace retrieved, at least 1).
    chunk_size, chunk_overlap, chunker, min_overlap :
        How ``corpus`` is chunked and contents matched, as ``ragaudit import``.
    name : str, optional
        Run name (default: the file's stem).
    out_dir : str or Path
    save_as : {"json", "parquet"}, default "json"

    Returns
    -------
    TraceImport
        The saved run is also written to ``<out_dir>/<name>.json`` (or ``.parquet``).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> def span(sid, parent, start, end, **attrs):
    ...     return {"traceId": "ab12", "spanId": sid, "parentSpanId": parent, "name": sid,
    ...             "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
    ...             "attributes": [{"key": k.replace("_", "."), "value": {"stringValue": v}}
    ...                            for k, v in attrs.items()]}
    >>> spans = [span("01", "", 0, 40_000_000, input_value="Leave?", output_value="25 days."),
    ...          span("02", "01", 1_000_000, 9_000_000, openinference_span_kind="RETRIEVER",
    ...               **{"retrieval_documents_0_document_id": "leave"})]
    >>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    >>> _ = (root / "spans.jsonl").write_text(json.dumps(doc) + "\\n")
    >>> got = import_traces(root / "spans.jsonl", out_dir=root / "out")
    >>> row = got.saved.rows[0]
    >>> row["question"], row["context_ids"], row["answer"], row["latency_ms"]
    ('Leave?', ['leave'], '25 days.', {'total': 40.0, 'retrieve': 8.0})
    """
    file = str(path)
    target = saved_run_path(out_dir, name or Path(file).stem, save_as=save_as)
    refuse_input_as_output(target, [file, golden])
    if golden is not None and corpus is None:
        raise InputError(
            "--golden: needs --corpus with --from openinference (the golden set's sources "
            "name corpus documents)"
        )
    spans = read_spans(path)
    traces = assemble_traces(spans, file)
    # with a golden set, a trace whose root span carries only the question id still matches
    asked = [
        t
        for t in traces
        if (t.question is not None and t.question.strip())
        or (golden is not None and t.question_id is not None)
    ]
    no_question = tuple(_describe(t) for t in traces if t not in asked)
    documents = load_corpus(corpus) if corpus is not None else None
    if documents is not None:
        chunks = chunk_documents(documents, chunk_size, chunk_overlap, chunker)
    else:
        chunks = _chunks_from_traces(asked)
    unmatched_traces: list[str] = []
    repeated: list[str] = []
    chosen: dict[str, Trace] = {}  # golden question id -> its trace
    if golden is not None:
        assert documents is not None
        golden_set = golden_for_corpus(golden, documents, chunks, columns=golden_columns)
        by_id = golden_set.by_id()
        by_text: dict[str, GoldenQuestion] = {}
        for g in golden_set:
            by_text.setdefault(_squash(g.question), g)
        for trace in asked:
            found = by_id.get(trace.question_id) if trace.question_id is not None else None
            if found is None and trace.question:
                found = by_text.get(_squash(trace.question))
            if found is None:
                unmatched_traces.append(_describe(trace))
            elif found.id in chosen:
                repeated.append(_describe(trace))
            else:
                chosen[found.id] = trace
    else:
        records: list[tuple[int | None, dict[str, Any]]] = []
        texts: set[str] = set()
        for n, trace in enumerate(asked, start=1):
            if _squash(str(trace.question)) in texts:
                repeated.append(_describe(trace))
                continue
            texts.add(_squash(str(trace.question)))
            qid = trace.question_id or f"t{n}"
            records.append((trace.line, {"id": qid, "question": trace.question}))
            chosen[qid] = trace
        golden_set = golden_from_records(
            records, path=file, require_sources=False, require_answer=False
        )
    index = ContextIndex(chunks, min_overlap)
    chunk_ids = {c.chunk_id for c in chunks}
    counts = Counter(
        {"total": 0, "by_id": 0, "exact": 0, "overlap": 0, "unmatched": 0, "repeated": 0}
    )
    rankings: dict[str, list[tuple[str, float | None]]] = {}
    by_question: dict[str, Trace] = {}
    for g in golden_set:
        matched = chosen.get(g.id)
        if matched is None:
            continue
        by_question[g.question] = matched
        ranking: list[tuple[str, float | None]] = []
        for doc in matched.documents:
            counts["total"] += 1
            if documents is None:
                cid: str | None = _doc_key(doc)
                how = "by_id"
            elif doc.id is not None and doc.id in chunk_ids:
                cid, how = doc.id, "by_id"
            else:
                match = index.match(doc.content) if doc.content else None
                cid = None if match is None else match.chunk_id
                how = "unmatched" if match is None or cid is None else match.how
            if cid is None:
                counts["unmatched"] += 1
            elif any(cid == seen for seen, _ in ranking):
                counts["repeated"] += 1
            else:
                counts[how] += 1
                ranking.append((cid, doc.score))
        rankings[g.question] = ranking
    no_retriever = tuple(
        g.id for g in golden_set if g.id in chosen and not chosen[g.id].n_retrievers
    )
    depth = k if k is not None else max([len(r) for r in rankings.values()] + [1])
    unknown: Counter[str] = Counter()
    for trace in traces:
        unknown.update(trace.unknown_kinds)
    config: dict[str, Any] = {
        "k": depth,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "chunker": chunker,
        "retriever": "import:openinference",
        "generator": "import:openinference",
        "judges": "offline",
        "imported_from": Path(file).name,
        "context_match": {"min_overlap": min_overlap, **dict(counts)},
        "traces": {
            "spans": len(spans),
            "traces": len(traces),
            "matched": len(chosen),
            "unmatched_traces": len(unmatched_traces),
            "unmatched_questions": len(golden_set) - len(chosen),
            "repeated_traces": len(repeated),
            "no_question": len(no_question),
            "no_retriever": len(no_retriever),
            "unknown_span_kinds": dict(unknown),
        },
        "corpus_sha256": None if documents is None else corpus_sha256(documents),
        "golden_sha256": golden_set.sha256,
        "ragaudit_version": version(),
    }
    replay = _TraceReplay(rankings, by_question)
    saved = evaluate_configuration(
        golden_set,
        chunks,
        cast(Retriever, replay),
        replay,
        config=config,
        name=name or Path(file).stem,
        out_dir=out_dir,
        record_latency=True,
        depth=depth,
    )
    return TraceImport(
        saved=saved,
        n_spans=len(spans),
        n_traces=len(traces),
        matched=len(chosen),
        unmatched_traces=tuple(unmatched_traces),
        unmatched_questions=tuple(g.id for g in golden_set if g.id not in chosen),
        repeated_traces=tuple(repeated),
        no_question=no_question,
        no_retriever=no_retriever,
        unknown_kinds=dict(unknown),
        documents=dict(counts),
    )
