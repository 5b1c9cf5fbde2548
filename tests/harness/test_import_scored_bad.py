"""``import --from mlflow`` and ``--from promptfoo`` refuse a malformed or truncated file in one
line, exit 2, naming the file and the place (line and field); every case starts from a file the
real tool wrote (tests/fixtures/mlflow/, tests/fixtures/promptfoo/) and breaks one thing."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MLFLOW = FIXTURES / "mlflow" / "sys-a.traces.jsonl"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def refused(tool, path, out):
    made = invoke("import", "--from", tool, path, "--out", out)
    assert made.exit_code == 2, made.output
    [line] = made.output.strip().splitlines()
    assert not list(out.glob("*.json")) if out.exists() else True  # nothing half-written
    return line


def _mlflow_line(n, change):
    def edit(lines):
        trace = json.loads(lines[n])
        change(trace)
        lines[n] = json.dumps(trace)
        return lines

    return edit


def _assessment(trace, name):
    return next(a for a in trace["info"]["assessments"] if a["assessment_name"] == name)


MLFLOW_BAD = [
    ("truncated", lambda lines: [*lines[:5], lines[5][: len(lines[5]) // 2]], ":6: expected one "
     "MLflow trace as JSON"),
    ("feedback not a verdict", _mlflow_line(2, lambda t: _assessment(t, "exact_match")[
        "feedback"].update(value="maybe")), ":3: info.assessments[0].feedback.value: expected"),
    ("negative duration", _mlflow_line(0, lambda t: t["info"].update(execution_duration_ms=-4)),
     ":1: info.execution_duration_ms: expected a number >= 0, found -4"),
    ("duration as text", _mlflow_line(1, lambda t: t["info"].update(execution_duration_ms="12")),
     ":2: info.execution_duration_ms: expected a number >= 0, found '12'"),
    ("no spans", _mlflow_line(3, lambda t: t["data"].update(spans=[])), ":4: data.spans:"),
    ("token usage not JSON", _mlflow_line(4, lambda t: t["info"]["trace_metadata"].update(
        {"mlflow.trace.tokenUsage": "{input_tokens"})),
     ":5: info.trace_metadata.mlflow.trace.tokenUsage: expected JSON text"),
    ("negative tokens", _mlflow_line(4, lambda t: t["info"]["trace_metadata"].update(
        {"mlflow.trace.tokenUsage": '{"input_tokens": -1}'})),
     ":5: info.trace_metadata.mlflow.trace.tokenUsage.input_tokens: expected a number >= 0"),
    ("unknown state", _mlflow_line(6, lambda t: t["info"].update(state="DONE")),
     ":7: info.state: expected OK or ERROR, found 'DONE'"),
    ("not a trace", lambda lines: [*lines[:2], "[1, 2]", *lines[3:]], ":3: info: expected a "
     "trace"),
    ("question twice", lambda lines: [*lines, lines[0]], ":41: inputs: question 's01' appears "
     "twice"),
    ("empty", lambda lines: [], ": expected MLflow traces, one per line, found none"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "break_it", "says"), MLFLOW_BAD, ids=[c[0] for c in MLFLOW_BAD])
def test_a_malformed_mlflow_file_is_refused_naming_line_and_field(tmp_path, case, break_it, says):
    lines = break_it(MLFLOW.read_text(encoding="utf-8").splitlines())
    bad = tmp_path / "bad.traces.jsonl"
    bad.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    line = refused("mlflow", bad, tmp_path / "out")
    assert line.startswith(f"ragaudit: error: {bad}{says}"), line


def _result(n, change):
    def edit(doc):
        change(doc["results"]["results"][n])

    return edit


PROMPTFOO_BAD = [
    ("version 2", lambda d: d["results"].update(version=2), ": results.version: expected "
     "results version 3"),
    ("no results", lambda d: d.update(results=[]), ": results: expected promptfoo results"),
    ("empty results", lambda d: d["results"].update(results=[]), ": results.results: expected "
     "results, found none"),
    ("success as text", _result(4, lambda r: r.update(success="true")),
     ": results.results[4].success: expected true or false, found 'true'"),
    ("negative latency", _result(2, lambda r: r.update(latencyMs=-1)),
     ": results.results[2].latencyMs: expected a number >= 0, found -1"),
    ("latency as text", _result(2, lambda r: r.update(latencyMs="35")),
     ": results.results[2].latencyMs: expected a number >= 0, found '35'"),
    ("cost as boolean", _result(7, lambda r: r.update(cost=True)),
     ": results.results[7].cost: expected a number >= 0, found True"),
    ("assertion pass as number", _result(1, lambda r: r["gradingResult"]["componentResults"][1]
     .update({"pass": 1})), ": results.results[1].gradingResult.componentResults[1].pass: "
     "expected true or false, found 1"),
    ("tokens as text", _result(0, lambda r: r["response"]["tokenUsage"].update(prompt="5")),
     ": results.results[0].response.tokenUsage.prompt: expected a number >= 0, found '5'"),
    ("no test index", _result(3, lambda r: r.pop("testIdx")), ": results.results[3].testIdx: "
     "expected a test index >= 0"),
    ("no provider", _result(5, lambda r: r.update(provider={})), ": results.results[5].provider:"
     " expected a provider id"),
    ("unknown failure reason", _result(6, lambda r: r.update(failureReason=7)),
     ": results.results[6].failureReason: expected 0, 1 or 2, found 7"),
    ("test twice", lambda d: d["results"]["results"].append(d["results"]["results"][0]),
     ": results.results: test id 's"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "break_it", "says"), PROMPTFOO_BAD, ids=[c[0] for c in PROMPTFOO_BAD]
)
def test_a_malformed_promptfoo_file_is_refused_naming_the_place(tmp_path, case, break_it, says):
    doc = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    break_it(doc)  # in place
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    line = refused("promptfoo", bad, tmp_path / "out")
    assert line.startswith(f"ragaudit: error: {bad}{says}"), line


def test_a_truncated_promptfoo_file_is_refused_with_its_line(tmp_path):
    text = PROMPTFOO.read_text(encoding="utf-8")
    bad = tmp_path / "cut.json"
    bad.write_text(text[: len(text) // 2], encoding="utf-8")
    last = text[: len(text) // 2].count("\n") + 1
    line = refused("promptfoo", bad, tmp_path / "out")
    assert line.startswith(f"ragaudit: error: {bad}:{last}: expected promptfoo results JSON"), line


@pytest.mark.parametrize("tool", ["promptfoo", "mlflow"])
def test_the_input_is_never_overwritten(tmp_path, tool):
    # one system per file, so the saved run would be <out>/run.json: the input itself
    source = PROMPTFOO.with_name("priced.json") if tool == "promptfoo" else MLFLOW
    copy = tmp_path / "run.json"
    copy.write_bytes(source.read_bytes())
    made = invoke("import", "--from", tool, copy, "--name", "run", "--out", tmp_path)
    assert made.exit_code == 2, made.output
    assert len(made.output.strip().splitlines()) == 1
    assert copy.read_bytes() == source.read_bytes()
