"""``import --from openinference``: spans written by the OpenTelemetry SDK (OTLP/JSON through its
file exporter, span JSON lines through its console exporter) over a toy pipeline
(scripts/otel_toy_pipeline.py) give the saved run `evaluate_pipeline` gives for the same
pipeline in-process; latency and cost come from the spans exactly; nothing is dropped silently.
"""

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.semconv")
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from ragaudit.diagnose.trace_numbers import trace_numbers
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.live import evaluate_pipeline
from ragaudit.pipeline.trace_import import import_traces

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "src" / "ragaudit" / "benchmark"
N = 21  # (21 - 1) * 0.95 = 19: numpy's p95 is exactly the 20th order statistic


def _toy():
    spec = importlib.util.spec_from_file_location(
        "otel_toy", ROOT / "scripts" / "otel_toy_pipeline.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _traced(tmp_path_factory, conventions):
    root = tmp_path_factory.mktemp(conventions)
    golden = yaml.safe_load((BENCH / "golden.yaml").read_text(encoding="utf-8"))[:N]
    golden_path = root / "golden.yaml"
    golden_path.write_text(yaml.safe_dump(golden), encoding="utf-8")
    chunks = chunk_documents(load_corpus(BENCH / "corpus"), 800, 100, "fixed")
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    otlp, lines = root / "spans.otlp.jsonl", root / "spans.sdk.jsonl"
    with lines.open("w", encoding="utf-8") as sdk_out:
        provider.add_span_processor(SimpleSpanProcessor(memory))
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(otlp)))
        provider.add_span_processor(
            SimpleSpanProcessor(
                ConsoleSpanExporter(
                    out=sdk_out, formatter=lambda span: span.to_json(indent=None) + "\n"
                )
            )
        )
        pipeline = _toy().traced_pipeline(
            provider.get_tracer("toy"),
            chunks,
            {q["question"]: q["id"] for q in golden},
            conventions=conventions,
        )
        live = evaluate_pipeline(
            pipeline,
            golden_path,
            corpus=BENCH / "corpus",
            k=3,
            out_dir=root / "live",
            max_workers=1,
            record_latency=False,
        )
        provider.shutdown()
    return {
        "root": root,
        "golden": golden_path,
        "live": live,
        "spans": memory.get_finished_spans(),
        "otlp": otlp,
        "lines": lines,
    }


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The toy pipeline evaluated in-process, its spans exported three ways by the SDK."""
    return _traced(tmp_path_factory, "openinference")


@pytest.fixture(scope="module")
def traced_genai(tmp_path_factory):
    """The same, traced with the OpenTelemetry GenAI conventions only."""
    return _traced(tmp_path_factory, "genai")


SAME = ("id", "question", "context_ids", "answer", "abstained", "citations", "judges", "metrics")


@pytest.mark.parametrize("layout", ["otlp", "lines"])
def test_same_saved_run_from_the_spans_as_in_process(traced, layout):
    imported = import_traces(
        traced[layout],
        corpus=BENCH / "corpus",
        golden=traced["golden"],
        out_dir=traced["root"] / layout,
    )
    live, saved = traced["live"], imported.saved
    assert imported.matched == N and imported.documents["by_id"] == 3 * N
    assert not (imported.unmatched_traces or imported.unmatched_questions or imported.no_retriever)
    assert [{k: r[k] for k in SAME} for r in saved.rows] == [
        {k: r[k] for k in SAME} for r in live.rows
    ]
    assert saved.summary["metrics"] == live.summary["metrics"]
    assert [r["usage"]["cost_usd"] for r in saved.rows] == [
        r["usage"]["cost_usd"] for r in live.rows
    ]
    # the BM25 scores recorded on the retriever span are the pipeline's own
    assert [[d["score"] for d in r["retrieved"]] for r in saved.rows] == [
        [d["score"] for d in r["retrieved"]] for r in live.rows
    ]


def test_latency_is_the_root_spans_and_p95_their_order_statistic(traced):
    imported = import_traces(
        traced["otlp"],
        corpus=BENCH / "corpus",
        golden=traced["golden"],
        out_dir=traced["root"] / "p95",
    )
    roots = [s for s in traced["spans"] if s.parent is None]
    by_trace = {
        format(s.context.trace_id, "032x"): (s.end_time - s.start_time) / 1e6 for s in roots
    }
    rows = imported.saved.rows
    assert [r["latency_ms"]["total"] for r in rows] == [by_trace[r["trace_id"]] for r in rows]
    p95 = {n.key: n for n in trace_numbers(imported.saved)}["latency_p95"]
    assert len(roots) == N and p95.value == sorted(by_trace.values())[19]


def test_without_golden_the_answer_stages_latency_and_cost_come_out(traced):
    imported = import_traces(traced["otlp"], out_dir=traced["root"] / "free")
    saved = imported.saved
    assert [r["id"] for r in saved.rows] == [r["id"] for r in traced["live"].rows]  # metadata ids
    numbers = {n.key: n for n in trace_numbers(saved)}
    answered = sum(not r["abstained"] for r in traced["live"].rows)
    assert (numbers["answered"].count, numbers["answered"].n) == (answered, N)
    costs = [s.attributes["llm.cost.total"] for s in traced["spans"] if s.name == "reader"]
    assert numbers["cost_per_question"].value == pytest.approx(sum(costs) / N, rel=1e-12)
    assert numbers["latency_p95"].value is not None
    # without a corpus each document id is its own chunk: the same ids, best first
    assert [r["context_ids"] for r in saved.rows] == [r["context_ids"] for r in traced["live"].rows]


def test_unmatched_repeated_retrieverless_and_unknown_kinds_are_counted(tmp_path, traced):
    """Spans written by the SDK for odd traces: nothing is dropped without a count."""
    golden = yaml.safe_load(traced["golden"].read_text(encoding="utf-8"))
    provider = TracerProvider()
    out = tmp_path / "odd.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    tracer = provider.get_tracer("odd")

    def trace(question, kinds=("RETRIEVER",), answer="I don't know.", qid=None):
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            if qid is not None:
                root.set_attribute("metadata", json.dumps({"id": qid}))
            if question is not None:
                root.set_attribute("input.value", question)
            root.set_attribute("output.value", answer)
            for kind in kinds:
                with tracer.start_as_current_span(kind.lower()) as span:
                    if kind is not None:
                        span.set_attribute("openinference.span.kind", kind)

    trace(golden[0]["question"])
    trace(golden[0]["question"])  # the same question again: first kept
    trace("Is this question in the golden set?")
    trace(golden[1]["question"], kinds=("LLM",))  # no retriever
    trace(golden[2]["question"], kinds=("RETRIEVER", "WIDGET"))  # unknown kind
    trace(None)  # no question
    trace(None, qid=golden[3]["id"])  # no question text, but its id: matched by id
    provider.shutdown()
    got = import_traces(
        out, corpus=BENCH / "corpus", golden=traced["golden"], out_dir=tmp_path / "out"
    )
    assert (got.n_traces, got.matched) == (7, 4)
    assert len(got.repeated_traces) == 1 and len(got.no_question) == 1
    assert len(got.unmatched_traces) == 1 and "in the golden set" in got.unmatched_traces[0]
    assert got.no_retriever == (golden[1]["id"],)
    assert got.unknown_kinds == {"WIDGET": 1}
    assert len(got.saved.rows) == N and len(got.unmatched_questions) == N - 4
    assert golden[3]["id"] not in got.unmatched_questions
    errors = [r["generation_error"] for r in got.saved.rows]
    assert errors.count("import: no trace for this question") == N - 4
    assert json.loads(Path(got.saved.path).read_text())["config"]["traces"]["unmatched_traces"] == 1


def test_the_genai_conventions_give_the_same_saved_run(traced_genai):
    """No question or answer on the root span, documents as ids and scores only, no cost:
    matched by question text, chunks by id; the rows are the in-process ones."""
    t = traced_genai
    imported = import_traces(t["otlp"], corpus=BENCH / "corpus", golden=t["golden"],
                             out_dir=t["root"] / "import")  # fmt: skip
    live, saved = t["live"], imported.saved
    assert imported.matched == N and imported.documents["by_id"] == 3 * N
    assert imported.unknown_kinds == {}
    assert [{k: r[k] for k in SAME} for r in saved.rows] == [
        {k: r[k] for k in SAME} for r in live.rows
    ]
    tokens = {s.context.trace_id: s.attributes for s in t["spans"] if s.name == "chat toy"}
    assert sorted(r["usage"]["input_tokens"] for r in saved.rows) == sorted(
        a["gen_ai.usage.input_tokens"] for a in tokens.values()
    )
    assert {r["usage"]["cost_usd"] for r in saved.rows} == {None}  # GenAI records no cost
