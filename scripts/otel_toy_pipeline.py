"""A toy RAG pipeline instrumented with OpenTelemetry and the OpenInference conventions.

BM25 over the bundled corpus retrieves ``k`` chunks, the offline extractive reader answers;
each question is one trace: a CHAIN root span (the question in, the answer out, the question id
in its ``metadata``), a RETRIEVER span (``retrieval.documents.N.document.id/score/content``)
and an LLM span (``llm.token_count.*``, ``llm.cost.total``: made-up prices, so $/question has
something to add up).  The spans are written by the SDK's own exporters: OTLP/JSON lines
(``opentelemetry-exporter-otlp-json-file``) or one ``ReadableSpan.to_json`` per line.

``tests/pipeline/test_trace_import.py`` runs it at test time; run it by hand to write the
example file of ``docs/guide/interop.md``::

    uv run python scripts/otel_toy_pipeline.py docs/examples/openinference-spans.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.trace import Tracer

from ragaudit.data.chunks import Chunk
from ragaudit.pipeline.generators import ExtractiveReader
from ragaudit.pipeline.retrievers import BM25Retriever

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
PRICE_IN, PRICE_OUT = 0.15e-6, 0.6e-6  # made-up $/token


def traced_pipeline(
    tracer: Tracer,
    chunks: Sequence[Chunk],
    ids: dict[str, str],
    k: int = 3,
    conventions: str = "openinference",
) -> Callable[[str], dict[str, Any]]:
    """``pipeline(question)`` for :func:`ragaudit.evaluate_pipeline`, tracing each call with
    the OpenInference conventions, or with the OpenTelemetry GenAI ones (``"genai"``)."""
    retriever = BM25Retriever(chunks)
    reader = ExtractiveReader.fit(chunks)
    by_id = {c.chunk_id: c for c in chunks}

    def genai(question: str) -> dict[str, Any]:
        """The same pipeline traced with the GenAI conventions only: no question or answer on
        the root span, documents as a JSON list of ids and scores, no cost."""
        with tracer.start_as_current_span("rag"):
            with tracer.start_as_current_span("retrieval") as span:
                span.set_attribute(gen_ai.GEN_AI_OPERATION_NAME, "retrieval")
                span.set_attribute(gen_ai.GEN_AI_RETRIEVAL_QUERY_TEXT, question)
                hits = retriever.retrieve(question, k)
                docs = [{"id": cid, "score": float(score)} for cid, score in hits]
                span.set_attribute(gen_ai.GEN_AI_RETRIEVAL_DOCUMENTS, json.dumps(docs))
            context = [by_id[cid] for cid, _ in hits]
            with tracer.start_as_current_span("chat toy") as span:
                span.set_attribute(gen_ai.GEN_AI_OPERATION_NAME, "chat")
                answer = reader.generate(question, context).answer
                prompt = len(question.split()) + sum(len(c.text.split()) for c in context)
                span.set_attribute(gen_ai.GEN_AI_USAGE_INPUT_TOKENS, prompt)
                span.set_attribute(gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS, len(answer.split()))
                message = {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
                span.set_attribute(gen_ai.GEN_AI_OUTPUT_MESSAGES, json.dumps([message]))
        return {"answer": answer, "chunk_ids": [cid for cid, _ in hits],
                "scores": [float(s) for _, s in hits]}  # fmt: skip

    def pipeline(question: str) -> dict[str, Any]:
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, question)
            root.set_attribute(SpanAttributes.METADATA, json.dumps({"id": ids[question]}))
            with tracer.start_as_current_span("bm25") as span:
                span.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
                span.set_attribute(SpanAttributes.INPUT_VALUE, question)
                hits = retriever.retrieve(question, k)
                for n, (cid, score) in enumerate(hits):
                    prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{n}."
                    span.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, cid)
                    span.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, float(score))
                    span.set_attribute(
                        prefix + DocumentAttributes.DOCUMENT_CONTENT, by_id[cid].text
                    )
            context = [by_id[cid] for cid, _ in hits]
            with tracer.start_as_current_span("reader") as span:
                span.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
                span.set_attribute(SpanAttributes.INPUT_VALUE, question)
                answer = reader.generate(question, context).answer
                prompt = len(question.split()) + sum(len(c.text.split()) for c in context)
                completion = len(answer.split())
                cost = prompt * PRICE_IN + completion * PRICE_OUT
                span.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
                span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_PROMPT, prompt)
                span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, completion)
                span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_TOTAL, prompt + completion)
                span.set_attribute("llm.cost.total", cost)
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return {
            "answer": answer,
            "chunk_ids": [cid for cid, _ in hits],
            "scores": [float(s) for _, s in hits],
            "cost_usd": cost,
        }

    return genai if conventions == "genai" else pipeline


def main(out: str, n_questions: int = 21) -> None:
    """Trace the first ``n_questions`` of the bundled benchmark to ``out`` (OTLP/JSON lines)."""
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from ragaudit.data.golden import load_golden
    from ragaudit.pipeline.chunking import chunk_documents
    from ragaudit.pipeline.corpus import load_corpus

    bundled = Path(__file__).resolve().parent.parent / "src" / "ragaudit" / "benchmark"
    chunks = chunk_documents(load_corpus(bundled / "corpus"), 800, 100, "fixed")
    golden = list(load_golden(bundled / "golden.yaml"))[:n_questions]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    pipeline = traced_pipeline(
        provider.get_tracer("toy-rag"), chunks, {q.question: q.id for q in golden}
    )
    for question in golden:
        pipeline(question.question)
    provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
