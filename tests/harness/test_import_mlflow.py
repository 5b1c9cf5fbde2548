"""``import --from mlflow``: traces written by ``mlflow.genai.evaluate`` (mlflow 3.18.0, offline,
sqlite store; tests/fixtures/mlflow/, scripts/make_mlflow_fixtures.py) become saved runs whose
exact verdicts match scipy's binomial test on the discordant pairs counted from the raw
assessments, with latency, tokens and cost as MLflow recorded them.  mlflow is not installed
here: the file is plain JSON."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main

from .conftest import exact_mcnemar_verdict

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "mlflow"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def raw(name):
    lines = (TRACES / f"{name}.traces.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def verdicts(traces, scorer="exact_match"):
    """``{question id: 0/1}`` straight from the traces' feedback assessments."""
    out = {}
    for t in traces:
        qid = json.loads(t["info"]["trace_metadata"]["mlflow.traceInputs"])["question_id"]
        found = t["info"]["assessments"]
        [value] = [a["feedback"]["value"] for a in found if a["assessment_name"] == scorer]
        out[qid] = int(value)
    return out


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    for name in ("sys-a", "sys-b", "sys-d"):
        made = invoke("import", "--from", "mlflow", TRACES / f"{name}.traces.jsonl", "--out", out,
                      "--cluster-by", "topic", "--format", "json")  # fmt: skip
        assert made.exit_code == 0, made.output
    return out


def test_compare_of_two_evaluations_is_the_exact_mcnemar_test(imported):
    seen = set()
    for a, b in (("sys-a", "sys-b"), ("sys-a", "sys-d"), ("sys-b", "sys-d")):
        left, right = verdicts(raw(a)), verdicts(raw(b))
        assert left.keys() == right.keys() and len(left) == 40
        out = invoke("compare", imported / f"{a}.json", imported / f"{b}.json", "-m",
                     "exact_match", "--format", "json")  # fmt: skip
        assert out.exit_code == 0, out.output
        seen.add(exact_mcnemar_verdict(out.output, left, right))
    assert "SIGNIFICANT" in seen and len(seen) == 2  # both sides of the rule are seen


def test_latency_tokens_and_cost_are_mlflows_own(imported):
    traces = raw("sys-a")
    rows = {r["id"]: r for r in json.loads((imported / "sys-a.json").read_text())["rows"]}
    durations = []
    for t in traces:
        info = t["info"]
        qid = json.loads(info["trace_metadata"]["mlflow.traceInputs"])["question_id"]
        usage = json.loads(info["trace_metadata"]["mlflow.trace.tokenUsage"])
        cost = json.loads(info["trace_metadata"]["mlflow.trace.cost"])["total_cost"]
        row = rows[qid]
        assert row["latency_ms"]["total"] == info["execution_duration_ms"]
        assert (row["usage"]["input_tokens"], row["usage"]["output_tokens"]) == (
            usage["input_tokens"],
            usage["output_tokens"],
        )
        assert row["usage"]["cost_usd"] == cost
        assert row["tags"] == [json.loads(info["trace_metadata"]["mlflow.traceInputs"])["topic"]]
        durations.append(info["execution_duration_ms"])
    out = invoke("import", "--from", "mlflow", TRACES / "sys-a.traces.jsonl", "--out",
                 imported / "again", "--format", "json")  # fmt: skip
    [made] = json.loads(out.output)["imports"]
    numbers = {n["key"]: n for n in made["numbers"]}
    # numpy's default (linear) quantile of the recorded durations, the dashboard's p95
    assert numbers["latency_p95"]["value"] == pytest.approx(np.quantile(durations, 0.95), abs=1e-9)
    assert numbers["cost_per_question"]["value"] == pytest.approx(
        np.mean([json.loads(t["info"]["trace_metadata"]["mlflow.trace.cost"])["total_cost"]
                 for t in traces]), rel=1e-12)  # fmt: skip
    assert made["metrics"] == ["digits_overlap", "exact_match", "answered"]  # sorted, then answered


def test_compare_cluster_by_tag_uses_the_inputs_topic(imported):
    out = invoke("compare", imported / "sys-a.json", imported / "sys-d.json", "-m",
                 "exact_match", "--cluster-by", "tag", "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["clustered"] is not None


def test_json_output_of_the_trace_import_has_no_infinity(tmp_path):
    # 21 traces give p95 latency no finite upper bound: JSON has no infinity, so it is null
    # (the report raised ValueError on it, and TypeError on its read-only summary, before)
    spans = Path(__file__).resolve().parents[2] / "docs" / "examples" / "openinference-spans.jsonl"
    out = invoke("import", "--from", "openinference", spans, "--out", tmp_path, "--format", "json")
    assert out.exit_code == 0, out.output
    numbers = {n["key"]: n for n in json.loads(out.output)["numbers"]}
    assert numbers["latency_p95"]["ci_high"] is None and numbers["latency_p95"]["n"] == 21


def test_a_run_id_without_mlflow_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.startswith("mlflow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    out = invoke("import", "--from", "mlflow", "runs:/9b7a447f", "--out", tmp_path)
    assert out.exit_code == 2
    assert out.output.strip() == (
        "ragaudit: error: --from mlflow runs:/9b7a447f: reading traces from a tracking server "
        "needs mlflow: pip install 'ragaudit[mlflow]' (or pass a file of Trace.to_json() lines)"
    )
    assert not list(tmp_path.iterdir())


def test_without_the_trace_cost_the_spans_costs_are_summed(tmp_path):
    # MLflow writes mlflow.trace.cost only where it aggregates client side: the spans'
    # mlflow.llm.cost is the fallback
    lines = []
    expected = {}
    for t in raw("sys-b"):
        spans_cost = sum(
            json.loads(s["attributes"]["mlflow.llm.cost"])["total_cost"]
            for s in t["data"]["spans"]
            if "mlflow.llm.cost" in s["attributes"]
        )
        qid = json.loads(t["info"]["trace_metadata"]["mlflow.traceInputs"])["question_id"]
        expected[qid] = spans_cost if t["info"]["state"] == "OK" else None  # s13: no LLM span
        t["info"]["trace_metadata"].pop("mlflow.trace.cost", None)
        lines.append(json.dumps(t))
    file = tmp_path / "no-cost.traces.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = invoke("import", "--from", "mlflow", file, "--out", tmp_path / "runs")
    assert out.exit_code == 0, out.output
    rows = json.loads((tmp_path / "runs" / "no-cost.json").read_text())["rows"]
    got = {r["id"]: r["usage"]["cost_usd"] for r in rows}
    assert got.pop("s13") is expected.pop("s13") is None
    assert got == pytest.approx(expected, rel=1e-12)


def test_a_failed_trace_is_kept_with_its_error(tmp_path):
    [failed] = [t for t in raw("sys-b") if t["info"]["state"] == "ERROR"]
    [root] = [s for s in failed["data"]["spans"] if not s["parent_span_id"]]
    out = invoke("import", "--from", "mlflow", TRACES / "sys-b.traces.jsonl", "--out", tmp_path,
                 "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output
    [made] = json.loads(out.output)["imports"]
    assert made["errors"] == ["s13"]
    rows = {r["id"]: r for r in json.loads((tmp_path / "sys-b.json").read_text())["rows"]}
    row = rows["s13"]
    assert len(rows) == 40  # kept in every denominator
    assert row["generation_error"] == f"trace state ERROR: {root['status']['message']}"
    assert row["answer"] is None and row["metrics"]["answered"] == 0.0
    assert row["latency_ms"]["total"] == failed["info"]["execution_duration_ms"]
    assert row["usage"] == {"input_tokens": None, "output_tokens": None, "cost_usd": None}
    numbers = {n["key"]: n for n in made["numbers"]}
    assert numbers["answered"]["value"] == pytest.approx(39 / 40)
