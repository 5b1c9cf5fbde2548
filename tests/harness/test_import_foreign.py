"""`ragaudit import --from ragas|deepeval|jsonl`: other tools' results as saved runs.

The bundled benchmark's k=3 run is written out in each tool's layout (by the writers below,
from the run's own rows and the corpus text), imported back, and must give the same funnel
and the same per-question metrics and verdicts as the run ragaudit made itself.
"""

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "src" / "ragaudit" / "benchmark"
CORPUS = BENCH / "corpus"
GOLDEN = BENCH / "golden.yaml"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    out = tmp_path_factory.mktemp("native")
    result = invoke("run", "--corpus", CORPUS, "--golden", GOLDEN, "--k", 3, "--no-timing",
                    "--quiet", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / "k3_cs800.json"


def texts():
    return {c.chunk_id: c.text for c in chunk_documents(load_corpus(CORPUS), 800, 100)}


def rows_of(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))["rows"]


def contexts(row, chunk_text):
    return [chunk_text[cid] for cid in row["context_ids"]]


def write_ragas_jsonl(native, path):
    chunk_text = texts()
    lines = [
        json.dumps(
            {
                "user_input": r["question"],
                "retrieved_contexts": contexts(r, chunk_text),
                "response": r["answer"],
                "reference": r["reference_answer"],
            }
        )
        for r in rows_of(native)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_ragas_csv(native, path):
    # as pandas' DataFrame.to_csv writes a RAGAS EvaluationDataset: lists as Python literals
    chunk_text = texts()
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["user_input", "retrieved_contexts", "response", "reference"])
        for r in rows_of(native):
            writer.writerow(
                [r["question"], repr(contexts(r, chunk_text)), r["answer"], r["reference_answer"]]
            )
    return path


def write_ragas_result_csv(native, path):
    # as RAGAS users save results: EvaluationResult.to_pandas() (the samples plus one column per
    # metric score, NaN where a score failed) written with DataFrame.to_csv, whose default
    # index=True adds a first column with an empty name
    pd = pytest.importorskip("pandas")
    chunk_text = texts()
    rows = rows_of(native)
    frame = pd.DataFrame(
        {
            "user_input": [r["question"] for r in rows],
            "retrieved_contexts": [contexts(r, chunk_text) for r in rows],
            "response": [r["answer"] for r in rows],
            "reference": [r["reference_answer"] for r in rows],
            "faithfulness": [float("nan") if i % 7 == 0 else 0.5 for i in range(len(rows))],
            "context_recall": [1.0] * len(rows),
        }
    )
    frame.to_csv(path)
    assert path.read_text(encoding="utf-8").startswith(",user_input,")
    return path


def write_deepeval_json(native, path):
    chunk_text = texts()
    cases = [
        {
            "input": r["question"],
            "actual_output": r["answer"],
            "expected_output": r["reference_answer"],
            "retrieval_context": contexts(r, chunk_text),
        }
        for r in rows_of(native)
    ]
    path.write_text(json.dumps({"test_cases": cases}), encoding="utf-8")
    return path


DEEPEVAL_CSV = ROOT / "tests" / "fixtures" / "deepeval" / "k3_cs800.csv"


def deepeval_saved_csv(native, path):
    # written by DeepEval 4.3.1's own EvaluationDataset.save_as(file_type="csv") from this run
    # (tests/fixtures/deepeval/make_deepeval_csv.py says how): list cells joined with "|",
    # and 44 of the 180 contexts are markdown tables full of "|"
    text = DEEPEVAL_CSV.read_text(encoding="utf-8")
    assert text.startswith("input,actual_output,expected_output,retrieval_context,context,")
    path.write_text(text, encoding="utf-8")
    return path


def write_plain_jsonl(native, path):
    chunk_text = texts()
    lines = [
        json.dumps(
            {
                "id": r["id"],
                "question": r["question"],
                "contexts": contexts(r, chunk_text),
                "answer": r["answer"],
            }
        )
        for r in rows_of(native)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def funnel_json(path):
    result = invoke("funnel", path, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    data.pop("run")
    # judged@k's numbers must agree; its run name and the warning naming it differ
    data["judged"] = {
        level: None if c is None else {k: v for k, v in c.items() if k not in ("run", "warning")}
        for level, c in data["judged"].items()
    }
    return data


@pytest.mark.parametrize(
    ("layout", "writer", "name"),
    [
        ("ragas", write_ragas_jsonl, "ragas.jsonl"),
        ("ragas", write_ragas_csv, "ragas.csv"),
        ("ragas", write_ragas_result_csv, "ragas-result.csv"),
        ("deepeval", write_deepeval_json, "deepeval.json"),
        ("deepeval", deepeval_saved_csv, "deepeval.csv"),
        ("jsonl", write_plain_jsonl, "plain.jsonl"),
    ],
)
def test_benchmark_k3_run_round_trips_with_identical_funnel(native, tmp_path, layout, writer, name):
    source = writer(native, tmp_path / name)
    out = tmp_path / "imported"
    result = invoke("import", "--from", layout, source, "--corpus", CORPUS, "--golden", GOLDEN,
                    "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    n_contexts = sum(len(r["context_ids"]) for r in rows_of(native))
    assert (
        f"contexts: {n_contexts}; matched to a chunk by exact text {n_contexts}," in result.output
    )
    imported = out / f"{Path(name).stem}.json"
    assert funnel_json(imported) == funnel_json(native)
    mine, theirs = rows_of(imported), rows_of(native)
    assert [r["id"] for r in mine] == [r["id"] for r in theirs]
    for a, b in zip(mine, theirs, strict=True):
        assert a["metrics"] == b["metrics"], a["id"]
        assert a["judges"] == b["judges"], a["id"]
        assert a["context_ids"] == b["context_ids"], a["id"]
        assert (a["answer"], a["abstained"], a["citations"]) == (
            b["answer"], b["abstained"], b["citations"],
        )  # fmt: skip


def test_deepeval_csv_cell_that_is_not_our_chunks_is_split_at_every_bar(tmp_path):
    # a context that is not one of our chunks cannot be cut at chunk boundaries: the cell is
    # split at every "|" as DeepEval's own reader splits it, and the pieces are matched alone
    chunk_text = texts()
    first = next(iter(chunk_text.values()))
    path = tmp_path / "de.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["input", "actual_output", "retrieval_context"])
        writer.writerow(["What?", "I don't know.", f"{first}|Zorblax quintessa vimbrel."])
    out = tmp_path / "imported"
    result = invoke("import", "--from", "deepeval", path, "--corpus", CORPUS, "--out", out)
    assert result.exit_code == 0, result.output
    assert "contexts: 2; matched to a chunk by exact text 1," in result.output
    assert "unmatched (dropped) 1" in result.output


def test_imported_run_is_accepted_by_compare_report_and_labels_bias(native, tmp_path):
    source = write_ragas_jsonl(native, tmp_path / "ragas.jsonl")
    out = tmp_path / "imported"
    assert invoke("import", "--from", "ragas", source, "--corpus", CORPUS, "--golden", GOLDEN,
                  "--out", out).exit_code == 0  # fmt: skip
    imported = out / "ragas.json"
    compared = invoke("compare", native, imported, "-m", "hit@k", "-m", "correct")
    assert compared.exit_code == 0, compared.output
    report = invoke("report", native, imported, "--format", "markdown", "--out", tmp_path / "r.md")
    assert report.exit_code == 0, report.output
    labels = tmp_path / "labels.yaml"
    built = invoke("labels", "build", "--corpus", CORPUS, "--golden", GOLDEN, "--out", labels,
                   "--quiet")  # fmt: skip
    assert built.exit_code == 0, built.output
    bias_native = invoke("labels", "bias", native, "--labels", labels, "--format", "json")
    bias_imported = invoke("labels", "bias", imported, "--labels", labels, "--format", "json")
    assert bias_native.exit_code == 0 and bias_imported.exit_code == 0, bias_imported.output
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k not in ("run", "judged")}  # noqa: E731
    assert strip(bias_imported.stdout) == strip(bias_native.stdout)
    # judged@k beside the bias names each run; its numbers are the same
    means = lambda text: [  # noqa: E731
        (level["mean"], level["below"])
        for run in json.loads(text)["judged"]["runs"]
        for level in (run["doc"], run["chunk"])
    ]
    assert means(bias_imported.stdout) == means(bias_native.stdout)


def test_reference_answer_is_optional(native, tmp_path):
    # Regression: a file without `reference` (optional in RAGAS, DeepEval and jsonl) was
    # refused with "answer: missing required field".  Gold documents come from
    # reference_context_ids; correctness is left undecided (no reference to check against).
    chunk_text = texts()
    theirs = [r for r in rows_of(native) if r["answerable"]]
    lines = [
        json.dumps(
            {
                "user_input": r["question"],
                "retrieved_contexts": contexts(r, chunk_text),
                "response": r["answer"],
                "reference_context_ids": r["gold_docs"],
            }
        )
        for r in theirs
    ]
    source = write(tmp_path, "noref.jsonl", "\n".join(lines) + "\n")
    result = invoke("import", "--from", "ragas", source, "--corpus", CORPUS, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    mine = rows_of(tmp_path / "noref.json")
    assert len(mine) == len(theirs)
    retrieval = ("hit@k", "recall@k", "precision@k", "mrr@k", "ndcg@k", "map@k", "answered")
    for a, b in zip(mine, theirs, strict=True):
        assert a["reference_answer"] == ""
        # an abstention on an answerable question is wrong whatever the reference says
        assert a["judges"]["correct"] is (False if b["abstained"] else None), a["id"]
        assert {m: a["metrics"][m] for m in retrieval} == {m: b["metrics"][m] for m in retrieval}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


SMALL = Path(__file__).parent.parent / "data" / "harness" / "corpus"


def test_contexts_matched_by_overlap_and_unmatched_are_counted(tmp_path):
    leave = (SMALL / "leave-policy.md").read_text(encoding="utf-8")
    chunks = chunk_documents(load_corpus(SMALL), 800, 100)
    first = next(c for c in chunks if c.doc_id == "leave-policy")
    # a shorter cut of the same chunk (another tool's chunker): all its tokens are in it
    cut = " ".join(first.text.split()[2:30])
    record = {
        "user_input": "How many days of annual leave does a full-time employee receive?",
        "retrieved_contexts": [cut, "Quarterly sales of umbrellas rose in Lisbon.", first.text],
        "response": "25 days per calendar year [1].",
        "reference": "25 days per calendar year.",
        "reference_contexts": [first.text],
    }
    source = write(tmp_path, "r.jsonl", json.dumps(record) + "\n")
    result = invoke("import", "--from", "ragas", source, "--corpus", SMALL, "--out", tmp_path,
                    "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)["imports"][0]
    assert data["contexts"] == {
        "total": 3, "exact": 0, "overlap": 1, "unmatched": 1, "repeated": 1, "min_overlap": 0.5,
        "questions_with_unmatched": ["q1"],
    }  # fmt: skip
    assert "leave" in leave
    row = rows_of(tmp_path / "r.json")[0]
    assert row["context_ids"] == [first.chunk_id]
    assert row["gold_docs"] == ["leave-policy"]  # from the reference context
    assert row["metrics"]["hit@k"] == 1.0
    saved = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert saved["config"]["k"] == 3 and saved["config"]["retrieval_depth"] == 3
    assert saved["config"]["context_match"]["unmatched"] == 1


@pytest.mark.parametrize(
    ("layout", "name", "text", "message"),
    [
        (
            "ragas",
            "a.jsonl",
            '{"input": "Q?", "actual_output": "A", "retrieval_context": ["x"]}\n',
            r"a\.jsonl:1: question: not a ragas layout: expected columns question: "
            r"user_input/question; contexts: retrieved_contexts/contexts; answer: response/answer;"
            r" found columns input, actual_output, retrieval_context \(another --from\? "
            r"deepeval, jsonl\)",
        ),
        (
            "ragas",
            "b.jsonl",
            '{"user_input": "Q?", "response": "A", "retrieved_contexts": ["x"]}\n'
            '{"user_input": "R?", "response": "A", "retrieved_contexts": [3]}\n',
            r"b\.jsonl:2: retrieved_contexts: expected a list of strings, found \[3\]",
        ),
        (
            "deepeval",
            "c.jsonl",
            '{"input": "Q?", "actual_output": "A", "retrieval_context": ["x"]}\n{"input": \n',
            r"c\.jsonl:2: invalid JSON",
        ),
        (
            "jsonl",
            "d.jsonl",
            '{"question": "", "answer": "A", "contexts": ["x"]}\n',
            r"d\.jsonl:1: question: expected a non-empty question, found none",
        ),
        (
            "ragas",
            "e.csv",
            "user_input,retrieved_contexts,response\nQ?,\"['x']\",A,extra\n",
            r"e\.csv:2: expected 3 cells \(one per header column\), found 4",
        ),
        (
            "jsonl",
            "f.jsonl",
            '{"question": "Q?", "answer": 7, "contexts": ["x"]}\n',
            r"f\.jsonl:1: answer: expected a string, found an integer 7",
        ),
    ],
)
def test_malformed_files_give_one_line_errors(tmp_path, monkeypatch, layout, name, text, message):
    import re

    monkeypatch.chdir(tmp_path)
    write(tmp_path, name, text)
    result = invoke("import", "--from", layout, name, "--corpus", SMALL, "--out", tmp_path)
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1, result.output
    assert re.match(r"ragaudit: error: " + message, result.output), result.output


def test_question_not_in_golden_set_and_missing_corpus(tmp_path):
    line = '{"question": "Who runs Mars?", "answer": "A", "contexts": ["x"]}\n'
    source = write(tmp_path, "r.jsonl", line)
    golden = SMALL.parent / "golden.yaml"
    result = invoke("import", "--from", "jsonl", source, "--corpus", SMALL, "--golden", golden,
                    "--out", tmp_path)  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        f"ragaudit: error: {source}:1: question: question 'Who runs Mars?' is not in the golden "
        f"set {golden} (matched by id, then by question text)\n"
    )
    no_corpus = invoke("import", "--from", "jsonl", source)
    assert no_corpus.exit_code == 2
    assert no_corpus.output == (
        "ragaudit: error: --corpus: required with --from jsonl (the contexts' documents)\n"
    )


def test_without_golden_the_funnel_says_what_is_missing_instead_of_zeros(native, tmp_path):
    # Issue 32 item 16: an import without --golden has no gold documents; the funnel drew
    # "4 answer correct 0" and P(correct) = 0 while import showed correct 0.8.
    ragas = write_ragas_jsonl(native, tmp_path / "ragas.jsonl")
    out = tmp_path / "out"
    imported = invoke("import", ragas, "--from", "ragas", "--corpus", CORPUS, "--out", out)
    assert imported.exit_code == 0, imported.output
    missing = "no gold documents: none of the 60 answerable questions lists its gold documents"
    assert missing in imported.output and "pass --golden FILE" in imported.output
    runner = CliRunner()
    funnel = runner.invoke(main, ["funnel", str(out / "ragas.json")])
    assert funnel.exit_code == 0, funnel.output
    table = funnel.stdout.splitlines()
    first = next(line for line in table if line.startswith("  1 gold doc retrieved"))
    last = next(line for line in table if line.startswith("  4 correct through the funnel"))
    assert first.split()[4:7] == last.split()[5:8] == ["-", "-", "-"]  # kept, of n, conditional
    assert f"P(correct) = undefined: {missing}" in funnel.stdout
    assert "end-to-end correct:             43/60 = 0.717" in funnel.stdout
    warnings = [line for line in funnel.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and missing in warnings[0]  # one line, not 60 unjudged ids
    data = json.loads(runner.invoke(main, ["funnel", str(out / "ragas.json"), "--format",
                                           "json"]).stdout)  # fmt: skip
    assert [s["rate"] for s in data["stages"]] == [None] * 4
    assert data["p_correct"] is None and data["gap"] is None


@pytest.mark.parametrize(
    ("writer", "suffix", "layout"),
    [(write_ragas_jsonl, "jsonl", "ragas"), (write_ragas_csv, "csv", "ragas"),
     (write_deepeval_json, "json", "deepeval")],
    ids=["ragas-jsonl", "ragas-csv", "deepeval"],
)  # fmt: skip
def test_another_tools_file_without_from_names_the_layout(native, tmp_path, writer, suffix, layout):
    path = writer(native, tmp_path / f"results.{suffix}")
    before = path.read_bytes()
    result = CliRunner().invoke(main, ["import", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        f"ragaudit: error: {path}: expected a ragaudit saved run, found a {layout} export"
    )
    assert f"import it with ragaudit import {path} --from {layout} --corpus DIR" in result.stderr
    assert path.read_bytes() == before
