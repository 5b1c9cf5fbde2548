import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ragaudit.cli import main

DATA = Path(__file__).parent.parent / "data" / "harness"
BASE = ["run", "--corpus", str(DATA / "corpus"), "--golden", str(DATA / "golden.yaml")]


def invoke(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_run_end_to_end_prints_summary_and_writes_the_run(tmp_path):
    result = invoke(
        [
            *BASE,
            "--k",
            "2",
            "--chunk-size",
            "200",
            "--chunk-overlap",
            "40",
            "--out",
            str(tmp_path),
            "--no-timing",
        ]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "k2_cs200  (8 questions: 6 answerable, 2 unanswerable; seed 0)"
    assert lines[2] == "RETRIEVAL (document level, k=2, macro mean over 6 answerable questions)"
    assert lines[3].split() == [
        "hit@2", "recall@2", "precision@2", "mrr@2", "ndcg@2", "map@2", "judged@2"
    ]  # fmt: skip
    assert lines[-1] == f"saved: {tmp_path / 'k2_cs200.json'}"
    saved = json.loads((tmp_path / "k2_cs200.json").read_text(encoding="utf-8"))
    # The printed means are the means of the saved rows (recomputed here from the file).
    answerable = [r for r in saved["rows"] if r["answerable"]]
    hit = sum(r["metrics"]["hit@k"] for r in answerable) / len(answerable)
    assert lines[4].split()[0] == f"{hit:.3f}"
    # judged@2 by hand (ir_measures' Judged@k): the top 2 chunks lifted to their documents
    # (each at its first chunk), the share that is a gold document, averaged
    shares = []
    for r in answerable:
        docs = list(dict.fromkeys(h["doc_id"] for h in r["retrieved"][:2]))
        shares.append(sum(d in r["gold_docs"] for d in docs) / min(2, len(docs)))
    assert lines[4].split()[-1] == f"{sum(shares) / len(shares):.3f}"
    correct = sum(r["metrics"]["correct"] for r in answerable)
    assert re.search(rf"\n  end-to-end correct +{int(correct)}/6 ", result.output)
    assert saved["config"]["k"] == 2 and all(r["latency_ms"] is None for r in saved["rows"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--k", "0"], "ragaudit: error: k: expected an integer >= 1, found 0"),
        (
            ["--chunk-size", "50", "--chunk-overlap", "50"],
            "ragaudit: error: chunk_size: expected a value larger than chunk_overlap (50), "
            "found 50",
        ),
        (
            ["--retriever", "qdrant"],
            "ragaudit: error: retriever: 'qdrant' needs an embedding model",
        ),
    ],
)
def test_run_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, extra, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [*BASE, "--out", str(out), *extra])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert result.output.strip().startswith(message)
    assert not out.exists()


def test_run_reports_golden_errors_with_file_line_field(tmp_path):
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        "- {id: q1, question: Why, answer: x, sources: [leave-policy]}\n"
        "- {id: q1, question: Again, answer: y, sources: [leave-policy]}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--corpus",
            str(DATA / "corpus"),
            "--golden",
            str(golden),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 2
    assert (
        result.output
        == f"ragaudit: error: {golden}:2: id: duplicate question id 'q1' (first used on line 1); "
        "ids must be unique\n"
    )


def test_import_valid_file_prints_summary_and_can_copy(tmp_path):
    assert invoke([*BASE, "--k", "2", "--out", str(tmp_path), "--no-timing"]).exit_code == 0
    source = tmp_path / "k2_cs800.json"
    result = invoke(["import", str(source), "--out", str(tmp_path / "imported")])
    assert result.exit_code == 0
    # The summary is recomputed here from the file's rows, not copied from the output.
    rows = json.loads(source.read_text(encoding="utf-8"))["rows"]
    depths = [len(r["retrieved"]) for r in rows]
    assert result.output.splitlines()[:3] == [
        f"{source}: valid ragaudit.run v1, name 'k2_cs800'",
        "8 questions (6 answerable, 2 unanswerable; 0 generation errors, 0 judge errors)",
        f"k=2, retrieved per question: {min(depths)}-{max(depths)}",
    ]
    # the means table: label, mean, n (a label may say what it counts, in words)
    cells = {line.split()[0]: line.split()[-2:] for line in result.output.splitlines() if line}
    for metric in ("hit@k", "precision@k", "correct"):
        values = [r["metrics"][metric] for r in rows if r["metrics"].get(metric) is not None]
        mean = sum(float(v) for v in values) / len(values)
        assert cells[metric] == [f"{mean:.3f}", str(len(values))], metric
    assert (
        json.loads((tmp_path / "imported" / "k2_cs800.json").read_text())["rows"]
        == json.loads(source.read_text())["rows"]
    )


def test_import_invalid_file_names_the_exact_location(tmp_path):
    doc = {
        "format": "ragaudit.run",
        "format_version": 1,
        "name": "ext",
        "config": {"k": 3},
        "rows": [
            {
                "id": f"q{i}",
                "question": "?",
                "answerable": True,
                "metrics": {},
                "retrieved": [{"chunk_id": "c", "doc_id": "d"}],
            }
            for i in range(5)
        ],
    }
    doc["rows"][3]["retrieved"][0]["chunk_id"] = 12
    path = tmp_path / "ext.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"ragaudit: error: {path}: rows[3].retrieved[0].chunk_id: expected a string, found 12 "
        "(question 'q3')\n"
    )
    missing = CliRunner().invoke(main, ["import", str(tmp_path / "nope.json")])
    assert (
        missing.exit_code == 2
        and "expected an existing file, found nothing at this path" in missing.output
    )


@pytest.mark.slow
def test_demo_runs_offline_and_is_deterministic(tmp_path):
    from ragaudit.cli.demo import run_demo

    first: list[str] = []
    ctx = run_demo(tmp_path / "a", first.append)
    second: list[str] = []
    run_demo(tmp_path / "b", second.append)
    files = ["chunk_labels.yaml", "k3_cs800.json", "k6_cs800.json", "report.html"]
    assert sorted(os.listdir(tmp_path / "a")) == files
    # wall-clock latency is the one thing that varies: each row's latency_ms and the
    # dashboard's p95 line (whose label says so); every other byte is the same
    for name in files:
        a, b = ((tmp_path / d / name).read_text(encoding="utf-8") for d in "ab")
        assert without_latency(a, name) == without_latency(b, name), name
    strip = [line.replace(str(tmp_path / "b"), str(tmp_path / "a")) for line in second]
    assert [mask_varying(x) for x in first] == [mask_varying(x) for x in strip]
    assert sum("varies run to run" in line for line in first) == 1
    text = "\n".join(first)
    # a short audit a person reads: two screens (the chapter's six numbers, wrong abstention
    # in two, latency and cost, added three dashboard lines to the 60 it had)
    assert len(text.splitlines()) <= 66
    # every analysis of the audit is in the one demo: dashboard, funnel, label bias, comparison
    assert "DASHBOARD (95% intervals" in text
    assert "FUNNEL (k3_cs800: k=3, n=54 answerable)" in text
    assert "FUNNEL (k6_cs800: k=6, n=54 answerable)" in text
    assert "label bias: document labels inflate recall@3" in text
    assert "COMPARISON (B = k6_cs800 vs A = k3_cs800;" in text
    # "answered" of the run summary and the funnel's stage 3 are told apart
    assert "answered 48/54 (any context); 47 with the evidence in the context" in text
    assert f"report: {(tmp_path / 'a' / 'report.html').as_posix()}" in text
    # The README and the harness guide show this output as it is (run from the repository root).
    shown = text.replace((tmp_path / "a").as_posix(), "ragaudit-results") + "\n"
    root = Path(__file__).parent.parent.parent
    for doc in ("README.md", "docs/guide/harness.md"):
        page = (root / doc).read_text(encoding="utf-8")
        masked = "\n".join(mask_varying(line) for line in page.splitlines())
        assert "\n".join(mask_varying(line) for line in shown.splitlines()) in masked, doc
    _demo_formats_show_the_same_numbers(ctx, text)
    k3, k6 = ctx.runs["k3_cs800"], ctx.runs["k6_cs800"]
    # precision@k is arithmetic on the ids: the k=6 context holds at most as many gold docs
    assert k6.summary["metrics"]["precision@k"] < k3.summary["metrics"]["precision@k"]
    assert k6.summary["metrics"]["recall@k"] >= k3.summary["metrics"]["recall@k"]


def mask_varying(line: str) -> str:
    """A line that says it varies from run to run, with its numbers masked."""
    return re.sub(r"\d+", "N", line) if "varies run to run" in line else line


def without_latency(text: str, name: str) -> str:
    """A demo file without its wall-clock parts (the rows' latency_ms, the p95 cells)."""
    if name.endswith(".json"):
        data = json.loads(text)
        for row in data["rows"]:
            row.pop("latency_ms", None)
        return json.dumps(data, sort_keys=True)
    if name.endswith(".html"):
        return "\n".join(mask_varying(line) for line in re.split(r"(?=<tr)", text))
    return text


def _demo_formats_show_the_same_numbers(ctx, text):
    """``demo --format json|csv|markdown`` renders the same audit through the one renderer."""
    from ragaudit.cli.demo import demo_report
    from ragaudit.reports.renderer import render

    report = demo_report(ctx)
    data = json.loads(render(report, "json"))
    markdown, table_csv = render(report, "markdown"), render(report, "csv")
    assert data["benchmark"]["questions"] == 60 and data["benchmark"]["answerable"] == 54
    for run in data["runs"]:
        for stage in run["funnel"]["stages"]:
            kept = f"| {stage['kept']} | {stage['rate']:.3f} |"
            assert kept in markdown, (run["name"], stage)
    (comparison,) = data["comparisons"]
    for metric, p_holm in zip(comparison["metrics"], comparison["p_holm"], strict=True):
        diff = f"{metric['diff']:+.3f}"
        ci = f"[{metric['ci_low']:+.3f}, {metric['ci_high']:+.3f}]"
        # the terminal audit's row and the Markdown row carry the same numbers
        assert any(
            line.split()[:1] == [metric["metric"]] and diff in line and ci in line
            for line in text.splitlines()
        ), metric["metric"]
        assert f"| {metric['metric']} | {metric['n']} |" in markdown
        assert p_holm >= metric["p_value"]
    assert "number,k3_cs800 (k=3),k6_cs800 (k=6),MDE" in table_csv
    help_text = CliRunner().invoke(main, ["demo", "--help"]).output
    assert "[table|json|csv|markdown]" in help_text


def test_run_with_chunk_labels_adds_chunk_metrics_and_checks_the_chunking(tmp_path):
    labels = tmp_path / "labels.yaml"
    built = invoke(["labels", "build", "--corpus", str(DATA / "corpus"), "--golden",
                    str(DATA / "golden.yaml"), "--chunk-size", "200", "--chunk-overlap", "40",
                    "--out", str(labels)])  # fmt: skip
    assert built.exit_code == 0, built.output
    args = [*BASE, "--k", "2", "--chunk-overlap", "40", "--chunk-labels", str(labels)]
    result = invoke([*args, "--chunk-size", "200", "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    assert "RETRIEVAL (chunk level, k=2, macro mean over" in result.output
    saved = json.loads((tmp_path / "a" / "k2_cs200.json").read_text(encoding="utf-8"))
    # Oracle from the labels file: relevant = answer + supporting chunks, top-2 retrieved chunks.
    labelled = yaml.safe_load(labels.read_text(encoding="utf-8"))["questions"]
    checked = 0
    for row in saved["rows"]:
        m = row["metrics"]
        if row["id"] not in labelled:
            assert m["chunk_hit@k"] is None and m["chunk_recall@k"] is None, row["id"]
            continue
        entry = labelled[row["id"]]
        relevant = set(entry["answer_chunks"]) | set(entry["supporting_chunks"])
        top = [r["chunk_id"] for r in row["retrieved"][:2]]
        found = sum(c in relevant for c in top)
        assert m["chunk_hit@k"] == float(found > 0), row["id"]
        assert m["chunk_recall@k"] == pytest.approx(found / len(relevant)), row["id"]
        assert m["chunk_precision@k"] == pytest.approx(found / 2), row["id"]
        checked += 1
    assert checked == 6
    wrong = CliRunner().invoke(main, [*args, "--chunk-size", "300", "--out", str(tmp_path / "b")])
    assert wrong.exit_code == 2 and "made for chunker=fixed, chunk_size=200" in wrong.output
    assert not (tmp_path / "b").exists()


def test_run_refuses_a_checkpoint_of_other_options_and_keeps_it(tmp_path, monkeypatch):
    # Issue 32 item 7 through the CLI: an interrupted --k 2 run, then --k 3 under the same
    # --name, used to replace the checkpoint; now it is exit 2, one line, file untouched.
    from ragaudit.pipeline.generators import ExtractiveReader

    generate, calls = ExtractiveReader.generate, [0]

    def stop_at_the_fourth(self, question, context):
        calls[0] += 1
        if calls[0] == 4:
            raise KeyboardInterrupt
        return generate(self, question, context)

    options = ["--chunk-size", "200", "--chunk-overlap", "40", "--no-timing", "--quiet"]
    run = [*BASE, *options, "--name", "mine", "--out", str(tmp_path)]
    with monkeypatch.context() as patched:
        patched.setattr(ExtractiveReader, "generate", stop_at_the_fourth)
        stopped = CliRunner().invoke(main, [*run, "--k", "2"])
    assert stopped.exit_code == 1  # click turns Ctrl-C into Abort
    sidecar = tmp_path / "mine.partial.jsonl"
    before = sidecar.read_bytes()
    result = CliRunner().invoke(main, [*run, "--k", "3"])
    assert result.exit_code == 2
    assert result.output == (
        f"ragaudit: error: {sidecar}: a checkpoint of another configuration (3 finished "
        "questions) is in the way: k is 2 there, 3 now; to keep it, give this run another name "
        f"or output directory; to resume it, rerun with its configuration; to discard it, "
        f"delete {sidecar} yourself\n"
    )
    assert sidecar.read_bytes() == before and not (tmp_path / "mine.json").exists()
    assert invoke([*run, "--k", "2"]).exit_code == 0 and not sidecar.exists()
