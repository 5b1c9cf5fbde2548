"""RAG traces from OpenInference spans: the question, the retrieved documents, the answer, the
time and the cost of each request.

OpenInference (the semantic conventions Phoenix and Arize record) marks each span with
``openinference.span.kind`` and flattens lists into numbered attributes.  What is read:

=================  =======================================================================
trace part         where
=================  =======================================================================
question           the root span's ``input.value`` (a JSON object's ``question``, ``query``
                   or ``input`` when ``input.mime_type`` is ``application/json``)
question id        the root span's ``metadata`` JSON ``id`` or ``question_id`` (OpenInference's
                   ``using_metadata``), when present
retrieved          every ``RETRIEVER`` span in start order: ``retrieval.documents.N.document.
                   id``, ``.score``, ``.content``
answer             the root span's ``output.value``, else the last ``LLM`` span's
                   ``llm.output_messages.0.message.content``, else its ``output.value``
tokens, cost       summed over ``LLM`` spans: ``llm.token_count.prompt`` / ``.completion``,
                   ``llm.cost.total`` (unknown when an LLM span lacks it)
latency            the root span's end minus start (``total``), the ``RETRIEVER`` and ``LLM``
                   spans' durations summed (``retrieve``, ``generate``)
=================  =======================================================================

The OpenTelemetry GenAI conventions are read beside them: a span with ``gen_ai.operation.name``
``retrieval`` is a retriever (``gen_ai.retrieval.documents``, a JSON list of ``{"id", "score"}``
objects; the question from ``gen_ai.retrieval.query.text`` when the root span has no input),
``chat``, ``text_completion`` or ``generate_content`` an LLM span (``gen_ai.usage.input_tokens``,
``.output_tokens``; the answer from ``gen_ai.output.messages`` when the root span has no
output).  The GenAI conventions record no cost.

Span kinds outside both lists, and spans other than the root with neither, are counted, never
fatal.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.data.spans import Span
from ragaudit.exceptions import FormatError

__all__ = ["KNOWN_KINDS", "Trace", "TraceDocument", "assemble_traces"]

KIND = "openinference.span.kind"
#: ``OpenInferenceSpanKindValues`` of openinference-semantic-conventions.
KNOWN_KINDS = frozenset(
    {
        "CHAIN",
        "RETRIEVER",
        "LLM",
        "EMBEDDING",
        "RERANKER",
        "TOOL",
        "AGENT",
        "GUARDRAIL",
        "EVALUATOR",
        "PROMPT",
        "UNKNOWN",
    }
)
_DOCS = "retrieval.documents."
#: The OpenTelemetry GenAI conventions (``gen_ai.operation.name``): a retrieval span, the model
#: calls, and the other operations they name (read as known kinds, not counted).
GENAI_OP = "gen_ai.operation.name"
GENAI_LLM = frozenset({"chat", "text_completion", "generate_content"})
GENAI_OTHER = frozenset(
    {"embeddings", "execute_tool", "invoke_agent", "create_agent", "invoke_workflow"}
)


@dataclass(frozen=True)
class TraceDocument:
    """One retrieved document of a trace: ``document.id``, ``.score``, ``.content``."""

    id: str | None
    score: float | None
    content: str | None


@dataclass(frozen=True)
class Trace:
    """One request, read from its spans (see the module docstring).

    Attributes
    ----------
    trace_id : str
    line : int
        The file line of its root span.
    question : str or None
    question_id : str or None
    answer : str or None
    documents : tuple of TraceDocument
    n_retrievers, n_llm : int
        Its ``RETRIEVER`` and ``LLM`` spans.
    input_tokens, output_tokens : int or None
    cost_usd : float or None
        None when an LLM span lacks ``llm.cost.total`` (or there is none).
    latency_ms : dict
        ``total`` (root span), ``retrieve`` and ``generate`` (sums of span durations).
    unknown_kinds : Counter
        Span kinds outside OpenInference's list (``"(none)"`` for spans without one).
    """

    trace_id: str
    line: int
    question: str | None
    question_id: str | None
    answer: str | None
    documents: tuple[TraceDocument, ...]
    n_retrievers: int
    n_llm: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    latency_ms: dict[str, float]
    unknown_kinds: Counter[str] = field(default_factory=Counter)


def _where(span: Span, key: str) -> str:
    return f"{span.where}.attributes[{key}]" if span.where else f"attributes.{key}"


def _text(span: Span, key: str, path: str) -> str | None:
    value = span.attributes.get(key)
    if value is None or isinstance(value, str):
        return value
    raise FormatError(
        f"expected a string, found {shorten(value)}",
        path=path,
        line=span.line,
        field=_where(span, key),
    )


def _number(span: Span, key: str, path: str, kind: type = float) -> Any:
    value = span.attributes.get(key)
    if value is None:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    if kind is int:
        ok = ok and float(value).is_integer()
    if not ok:
        what = "an integer >= 0" if kind is int else "a number >= 0"
        raise FormatError(
            f"expected {what}, found {shorten(value)}",
            path=path,
            line=span.line,
            field=_where(span, key),
        )
    return kind(value)


def _decoded(span: Span, key: str, text: str, path: str, expected: str) -> Any:
    """The JSON value of a span attribute that holds JSON text; bad JSON is a one-line error
    naming the file, line and attribute ("EXPECTED, found ...")."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise FormatError(
            f"{expected}, found {shorten(text)}", path=path, line=span.line, field=_where(span, key)
        ) from None


def _question(root: Span, path: str) -> str | None:
    value = _text(root, "input.value", path)
    if value is not None and root.attributes.get("input.mime_type") == "application/json":
        parsed = _decoded(root, "input.value", value, path, "input.mime_type is application/json")
        if isinstance(parsed, dict):
            found = [parsed[k] for k in ("question", "query", "input") if k in parsed]
            return found[0] if found and isinstance(found[0], str) else None
        return parsed if isinstance(parsed, str) else None
    return value


def _question_id(root: Span, path: str) -> str | None:
    metadata = _json_attribute(root, "metadata", path, "expected a JSON object")
    if not isinstance(metadata, dict):
        return None
    for key in ("id", "question_id"):
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    return None


def _documents(span: Span, path: str) -> list[TraceDocument]:
    indexes = set()
    for key in span.attributes:
        if key.startswith(_DOCS):
            head = key[len(_DOCS) :].partition(".")[0]
            if not head.isdigit():
                raise FormatError(
                    "expected retrieval.documents.N.document.<id|score|content|metadata>",
                    path=path,
                    line=span.line,
                    field=_where(span, key),
                )
            indexes.add(int(head))
    out = []
    for n in sorted(indexes):
        base = f"{_DOCS}{n}.document."
        doc_id = span.attributes.get(base + "id")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if doc_id is not None and not isinstance(doc_id, str):
            raise FormatError(
                f"expected a string, found {shorten(doc_id)}",
                path=path,
                line=span.line,
                field=_where(span, base + "id"),
            )
        score = span.attributes.get(base + "score")
        if score is not None and (not isinstance(score, (int, float)) or isinstance(score, bool)):
            raise FormatError(
                f"expected a number, found {shorten(score)}",
                path=path,
                line=span.line,
                field=_where(span, base + "score"),
            )
        content = _text(span, base + "content", path)
        if doc_id is None and content is None:
            raise FormatError(
                "a document with neither an id nor a content",
                path=path,
                line=span.line,
                field=_where(span, base + "id"),
            )
        out.append(TraceDocument(doc_id, None if score is None else float(score), content))
    return out


def _kind(span: Span) -> str | None:
    """The span's OpenInference kind, or its GenAI operation as one."""
    kind = span.attributes.get(KIND)
    operation = span.attributes.get(GENAI_OP)
    if kind is not None or operation is None:
        return None if kind is None else str(kind)
    if operation == "retrieval":
        return "RETRIEVER"
    if operation in GENAI_LLM:
        return "LLM"
    return "UNKNOWN" if operation in GENAI_OTHER else f"{GENAI_OP}={operation}"


def _json_attribute(span: Span, key: str, path: str, expected: str = "expected JSON") -> Any:
    raw = _text(span, key, path)
    return None if raw is None else _decoded(span, key, raw, path, expected)


def _genai_documents(span: Span, path: str) -> list[TraceDocument]:
    key = "gen_ai.retrieval.documents"
    given = _json_attribute(span, key, path)
    if given is None:
        return []
    if not isinstance(given, list) or not all(isinstance(d, dict) for d in given):
        raise FormatError(f"expected a JSON list of objects, found {shorten(given)}", path=path,
                          line=span.line, field=_where(span, key))  # fmt: skip
    out = []
    for n, doc in enumerate(given):
        doc_id, score, content = doc.get("id"), doc.get("score"), doc.get("content")
        ok_score = score is None or (
            isinstance(score, (int, float)) and not isinstance(score, bool)
        )
        if (
            not isinstance(doc_id, str)
            or not ok_score
            or not isinstance(content, (str, type(None)))
        ):
            raise FormatError(
                f"expected {{id: string, score: number}}, found {shorten(doc)}", path=path,
                line=span.line, field=f"{_where(span, key)}[{n}]",
            )  # fmt: skip
        out.append(TraceDocument(doc_id, None if score is None else float(score), content))
    return out


def _genai_answer(span: Span, path: str) -> str | None:
    messages = _json_attribute(span, "gen_ai.output.messages", path)
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    parts = messages[-1].get("parts") or []
    texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    return "".join(t for t in texts if isinstance(t, str)) if texts else None


def _tokens(span: Span, keys: tuple[str, str], path: str) -> int | None:
    value = _number(span, keys[0], path, int)
    return value if value is not None else _number(span, keys[1], path, int)


def _total(counts: Sequence[int | None]) -> int | None:
    """The sum, or None when a span did not record its count (unknown, never 0)."""
    known = [c for c in counts if c is not None]
    return sum(known) if len(known) == len(counts) else None


def _trace(trace_id: str, spans: Sequence[Span], path: str) -> Trace:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in ids]
    roots.sort(key=lambda s: (s.start_ns, -s.end_ns))
    root = roots[0]
    if len(roots) > 1:
        extra = roots[1]
        raise FormatError(
            f"trace {trace_id} has {len(roots)} root spans (spans whose parent is not in the "
            f"trace): {root.name!r} and {extra.name!r}; a truncated export?",
            path=path,
            line=extra.line,
            field=extra.where or "parent_id",
        )
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.line))
    kinds = [_kind(s) for s in ordered]
    unknown: Counter[str] = Counter(
        "(none)" if k is None else str(k)
        for s, k in zip(ordered, kinds, strict=True)
        if k not in KNOWN_KINDS and s is not root
    )
    retrievers = [s for s, k in zip(ordered, kinds, strict=True) if k == "RETRIEVER"]
    llms = [s for s, k in zip(ordered, kinds, strict=True) if k == "LLM"]
    documents = [d for s in retrievers for d in (_documents(s, path) or _genai_documents(s, path))]
    answer = _text(root, "output.value", path)
    if answer is None and llms:
        answer = _text(llms[-1], "llm.output_messages.0.message.content", path)
        answer = answer if answer is not None else _text(llms[-1], "output.value", path)
        answer = answer if answer is not None else _genai_answer(llms[-1], path)
    question = _question(root, path)
    if question is None and retrievers:
        question = _text(retrievers[0], "gen_ai.retrieval.query.text", path)
    prompt = [
        _tokens(s, ("llm.token_count.prompt", "gen_ai.usage.input_tokens"), path) for s in llms
    ]
    completion = [
        _tokens(s, ("llm.token_count.completion", "gen_ai.usage.output_tokens"), path) for s in llms
    ]
    costs = [_number(s, "llm.cost.total", path) for s in llms]
    return Trace(
        trace_id=trace_id,
        line=root.line,
        question=question,
        question_id=_question_id(root, path),
        answer=answer,
        documents=tuple(documents),
        n_retrievers=len(retrievers),
        n_llm=len(llms),
        input_tokens=_total(prompt) if llms else None,
        output_tokens=_total(completion) if llms else None,
        cost_usd=sum(costs) if llms and None not in costs else None,
        latency_ms={
            "total": root.duration_ms,
            **({"retrieve": sum(s.duration_ms for s in retrievers)} if retrievers else {}),
            **({"generate": sum(s.duration_ms for s in llms)} if llms else {}),
        },
        unknown_kinds=unknown,
    )


def assemble_traces(spans: Sequence[Span], path: str) -> list[Trace]:
    """Group ``spans`` by trace id, in the order their root spans start.

    Raises
    ------
    FormatError
        A span id seen twice, or a trace with two roots (a parent missing from the file).

    Examples
    --------
    >>> from ragaudit.data.spans import Span
    >>> root = Span(1, "", "t1", "a", None, "rag", 0, 9_000_000,
    ...             {"input.value": "Leave?", "output.value": "25 days."})
    >>> ret = Span(2, "", "t1", "b", "a", "bm25", 1_000_000, 2_000_000,
    ...            {"openinference.span.kind": "RETRIEVER",
    ...             "retrieval.documents.0.document.id": "c7"})
    >>> trace, = assemble_traces([root, ret], "spans.jsonl")
    >>> trace.question, trace.answer, [d.id for d in trace.documents], trace.latency_ms
    ('Leave?', '25 days.', ['c7'], {'total': 9.0, 'retrieve': 1.0})
    """
    by_trace: dict[str, list[Span]] = {}
    seen: set[tuple[str, str]] = set()
    for span in spans:
        key = (span.trace_id, span.span_id)
        if key in seen:
            raise FormatError(
                f"span {span.span_id} of trace {span.trace_id} appears twice",
                path=path,
                line=span.line,
                field=span.where or "context.span_id",
            )
        seen.add(key)
        by_trace.setdefault(span.trace_id, []).append(span)
    traces = [_trace(tid, group, path) for tid, group in by_trace.items()]
    starts = {tid: min(s.start_ns for s in group) for tid, group in by_trace.items()}
    return sorted(traces, key=lambda t: (starts[t.trace_id], t.line))
