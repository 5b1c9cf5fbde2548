"""``import --from openinference`` refuses a malformed or truncated span file in one line, exit 2,
naming the file, the line and the field; the files start as spans the OpenTelemetry SDK wrote."""

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from ragaudit.cli import main

SPANS = "resourceSpans[0].scopeSpans[0].spans[0]"


def _write(tracer):
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", "How many days of leave?")
        root.set_attribute("output.value", "25 days.")
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attribute("openinference.span.kind", "RETRIEVER")
            span.set_attribute("retrieval.documents.0.document.id", "leave")
            span.set_attribute("retrieval.documents.0.document.score", 2.5)
            span.set_attribute("retrieval.documents.0.document.content", "25 days of leave.")
        with tracer.start_as_current_span("llm") as span:
            span.set_attribute("openinference.span.kind", "LLM")
            span.set_attribute("llm.token_count.prompt", 12)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One trace, as OTLP/JSON lines (retriever, llm, root: the order spans end) and as span
    JSON lines, both written by the SDK's exporters."""
    root = tmp_path_factory.mktemp("spans")
    otlp, sdk = root / "otlp.jsonl", root / "sdk.jsonl"
    with sdk.open("w", encoding="utf-8") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(otlp)))
        provider.add_span_processor(
            SimpleSpanProcessor(
                ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
            )
        )
        _write(provider.get_tracer("bad-input"))
        provider.shutdown()
    return otlp.read_text(encoding="utf-8").splitlines(), sdk.read_text(
        encoding="utf-8"
    ).splitlines()


def _span(line):
    return json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]


def _edit(lines, n, change):
    doc = json.loads(lines[n])
    change(doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    return [*lines[:n], json.dumps(doc), *lines[n + 1 :]]


def _attr(key, value):
    def change(span):
        for a in span["attributes"]:
            if a["key"] == key:
                a["value"] = value

    return change


def _sdk_edit(lines, n, change):
    doc = json.loads(lines[n])
    change(doc)
    return [*lines[:n], json.dumps(doc), *lines[n + 1 :]]


CASES = [
    ("truncated line", lambda o, s: [*o[:1], o[1][: len(o[1]) // 2]], 2, None,
     "expected one JSON document per line"),
    ("not json", lambda o, s: ["\x00garbage"], 1, None, "expected OTLP/JSON or one span per line"),
    ("empty file", lambda o, s: [""], None, None, "expected spans, found an empty file"),
    ("neither otlp nor span", lambda o, s: [o[0], '{"foo": 1}'], 2, None,
     "expected an OTLP/JSON document"),
    ("no start time", lambda o, s: _edit(o, 0, lambda sp: sp.pop("startTimeUnixNano")), 1,
     f"{SPANS}.startTimeUnixNano", "missing"),
    ("end before start", lambda o, s: _edit(o, 0, lambda sp: sp.update(
        endTimeUnixNano=str(int(sp["startTimeUnixNano"]) - 5_000_000))), 1,
     f"{SPANS}.endTimeUnixNano", "the span ends 5 ms before it starts"),
    ("time not digits", lambda o, s: _edit(o, 0, lambda sp: sp.update(startTimeUnixNano="-1")),
     1, f"{SPANS}.startTimeUnixNano", "expected a time in nanoseconds"),
    ("trace id not hex", lambda o, s: _edit(o, 0, lambda sp: sp.update(traceId="xyz")), 1,
     f"{SPANS}.traceId", "expected a hex id"),
    ("unknown value type", lambda o, s: _edit(o, 0, _attr(
        "retrieval.documents.0.document.id", {"bytesValue": "AA=="})), 1,
     f"{SPANS}.attributes[1].value", "expected an OTLP AnyValue"),
    ("score is text", lambda o, s: _edit(o, 0, _attr(
        "retrieval.documents.0.document.score", {"stringValue": "high"})), 1,
     f"{SPANS}.attributes[retrieval.documents.0.document.score]", "expected a number"),
    ("negative tokens", lambda o, s: _edit(o, 1, _attr(
        "llm.token_count.prompt", {"intValue": "-3"})), 2,
     f"{SPANS}.attributes[llm.token_count.prompt]", "expected an integer >= 0"),
    ("span twice", lambda o, s: [*o, o[0]], 4, SPANS, "appears twice"),
    ("root span missing", lambda o, s: o[:2], 2, SPANS, "2 root spans"),
    ("sdk: bad start time", lambda o, s: _sdk_edit(s, 1, lambda d: d.update(start_time="today")),
     2, "start_time", "expected an ISO 8601 time"),
    ("sdk: no context", lambda o, s: _sdk_edit(s, 0, lambda d: d.pop("context")), 1, None,
     "expected an OTLP/JSON document"),
    ("sdk: attribute object", lambda o, s: _sdk_edit(s, 2, lambda d: d["attributes"].update(
        {"metadata": {"id": 1}})), 3, "attributes.metadata", "expected a string, number"),
    # JSON held as text in an attribute: one reader, each message saying what was expected
    ("sdk: metadata not JSON", lambda o, s: _sdk_edit(s, 2, lambda d: d["attributes"].update(
        {"metadata": "{id: 1"})), 3, "attributes.metadata", "expected a JSON object, found"),
    ("sdk: JSON input not JSON", lambda o, s: _sdk_edit(s, 2, lambda d: d["attributes"].update(
        {"input.mime_type": "application/json"})), 3, "attributes.input.value",
     "input.mime_type is application/json, found"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "make", "line", "field", "message"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_bad_span_file_is_refused_in_one_line(
    tmp_path, written, case, make, line, field, message
):
    otlp, sdk = written
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(make(otlp, sdk)) + "\n", encoding="utf-8")
    out = CliRunner().invoke(
        main, ["import", "--from", "openinference", str(bad), "--out", str(tmp_path / "out")],
        catch_exceptions=False,
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    [text] = out.output.strip().splitlines()
    where = str(bad) + (f":{line}" if line else "") + (f": {field}" if field else "")
    assert text.startswith(f"ragaudit: error: {where}: "), text
    assert message in text
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_the_unbroken_files_import(tmp_path, written):
    for n, lines in enumerate(written):
        good = tmp_path / f"good{n}.jsonl"
        good.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = CliRunner().invoke(
            main, ["import", "--from", "openinference", str(good), "--out", str(tmp_path / "out")]
        )
        assert out.exit_code == 0, out.output
