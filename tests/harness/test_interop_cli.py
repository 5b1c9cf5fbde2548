"""`ragaudit chunks`, `ragaudit export` and the document-level rule of `run --run-file`."""

import hashlib
import json
import uuid
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.exceptions import RagauditWarning

DATA = Path(__file__).parent.parent / "data" / "harness"
CORPUS, GOLDEN = DATA / "corpus", DATA / "golden.yaml"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def expected_id(doc_id, index, text):
    # the documented rule, computed here from its definition (docs: data/chunks.py)
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "https://ragaudit.invalid/chunk")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return str(uuid.uuid5(namespace, f"{doc_id}\x1f{index}\x1f{digest}"))


def test_chunks_lists_ids_offsets_and_first_words(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("one two three four", encoding="utf-8")
    (corpus / "b.txt").write_text("five six", encoding="utf-8")
    # windows of 10 characters sharing 4, pulled back to word ends (worked out by hand)
    pieces = [("a", 0, "one two", 0, 7), ("a", 1, "two three", 4, 13),
              ("a", 2, "three four", 8, 18), ("b", 0, "five six", 0, 8)]  # fmt: skip
    args = ("chunks", "--corpus", corpus, "--chunk-size", 10, "--chunk-overlap", 4, "--words", 1)
    tsv = invoke(*args, "--format", "tsv")
    assert tsv.exit_code == 0, tsv.output
    assert tsv.output.splitlines() == ["chunk_id\tdoc_id\tindex\tstart\tend\tfirst words"] + [
        f"{expected_id(d, i, t)}\t{d}\t{i}\t{a}\t{b}\t{t.split()[0]}" + (" ..." if " " in t else "")
        for d, i, t, a, b in pieces
    ]
    data = json.loads(invoke(*args, "--format", "json").output)
    assert (data["chunker"], data["chunk_size"], data["chunk_overlap"]) == ("fixed", 10, 4)
    assert [(c["doc_id"], c["start"], c["end"]) for c in data["chunks"]] == [
        (d, a, b) for d, _, _, a, b in pieces
    ]
    table = invoke(*args)
    assert table.output.splitlines()[0] == (
        f"4 chunks of 2 documents (chunker fixed, chunk_size 10, chunk_overlap 4, corpus "
        f"{data['corpus_sha256'][:12]})"
    )
    bad = invoke("chunks", "--corpus", corpus, "--chunk-size", 4, "--chunk-overlap", 10)
    assert bad.exit_code == 2 and bad.output.startswith("ragaudit: error: chunk_size: expected")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = invoke("run", "--corpus", CORPUS, "--golden", GOLDEN, "--k", 2, "--no-timing",
                    "--quiet", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / "k2_cs800.json"


def test_chunk_ids_of_a_run_are_the_listed_ones(saved):
    listed = json.loads(invoke("chunks", "--corpus", CORPUS, "--format", "json").output)
    ids = {c["chunk_id"] for c in listed["chunks"]}
    rows = json.loads(saved.read_text(encoding="utf-8"))["rows"]
    assert {r["chunk_id"] for row in rows for r in row["retrieved"]} <= ids


def test_export_trec_run_and_qrels_agree_with_trec_eval(saved, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rows = json.loads(saved.read_text(encoding="utf-8"))["rows"]
    chunk_run = invoke("export", saved, "--to", "trec-run")
    assert chunk_run.exit_code == 0, chunk_run.output
    expected = [
        f"{row['id']} Q0 {r['chunk_id']} {r['rank']} {r['score']:g} k2_cs800"
        for row in rows
        for r in row["retrieved"]
    ]
    assert [" ".join(f"{float(x):g}" if i == 4 else x for i, x in enumerate(line.split()))
            for line in chunk_run.output.splitlines()] == expected  # fmt: skip
    written = invoke("export", saved, "--to", "trec-run", "--unit", "doc", "--k", 2,
                     "--out", tmp_path / "run.trec")  # fmt: skip
    assert written.exit_code == 0, written.output
    qrels = invoke("export", GOLDEN, "--to", "trec-qrels")
    assert qrels.output.splitlines() == [
        "q1 0 leave-policy 1", "q2 0 travel-policy 1", "q3 0 it-handbook 1",
        "q4 0 it-handbook 1", "q5 0 office-guide 1", "q6 0 travel-policy 1",
    ]  # fmt: skip
    run: dict[str, dict[str, float]] = {}
    for line in (tmp_path / "run.trec").read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    labels: dict[str, dict[str, int]] = {}
    for line in qrels.output.splitlines():
        qid, _, doc, grade = line.split()
        labels.setdefault(qid, {})[doc] = int(grade)
    scores = pytrec_eval.RelevanceEvaluator(labels, {"recall.2", "recip_rank"}).evaluate(run)
    for row in rows:
        if row["id"] in scores:
            assert scores[row["id"]]["recall_2"] == pytest.approx(row["metrics"]["recall@k"])
            assert scores[row["id"]]["recip_rank"] == pytest.approx(row["metrics"]["mrr@k"])


def test_export_errors_are_one_line(saved, tmp_path):
    not_a_run = invoke("export", GOLDEN, "--to", "trec-run")
    assert not_a_run.exit_code == 2 and len(not_a_run.output.splitlines()) == 1
    assert not_a_run.output.startswith(f"ragaudit: error: {GOLDEN}")
    misplaced = invoke("export", GOLDEN, "--to", "trec-qrels", "--k", 3)
    assert misplaced.output == "ragaudit: error: --k: only applies with --to trec-run\n"


def test_run_file_with_document_ids_states_the_expansion(tmp_path):
    doc_run = tmp_path / "docs.trec"
    # one document per answerable question, the right one (6 document ids)
    doc_run.write_text(
        "q1 Q0 leave-policy 1 3.0 x\nq2 Q0 travel-policy 1 3.0 x\nq3 Q0 it-handbook 1 3.0 x\n"
        "q4 Q0 it-handbook 1 3.0 x\nq5 Q0 office-guide 1 3.0 x\nq6 Q0 travel-policy 1 3.0 x\n",
        encoding="utf-8",
    )
    # the two unanswerable questions are not in the run: named, not averaged in silently
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagauditWarning)  # the CLI prints it on stderr
        result = invoke("run", "--corpus", CORPUS, "--golden", GOLDEN, "--run-file", doc_run,
                        "--k", 2, "--no-timing", "--quiet", "--out", tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        f"ragaudit: warning: {doc_run}: 2 of 8 golden-set question(s) are missing from the run: "
        "nothing is retrieved for them and they score 0: q7, q8\n"
    ) in result.output
    rule = (
        "run file: document-level run (6 document ids, 0 chunk ids): each document id was "
        "expanded into all its chunks, in document order, each with the document's score; the "
        "top k are chunks, so document metrics count the documents of the top-k chunks "
        "(evaluate on the same file ranks documents, and can differ)"
    )
    assert rule in result.output.splitlines()
    config = json.loads(next(tmp_path.glob("k2_*.json")).read_text(encoding="utf-8"))["config"]
    assert "run file: " + config["run_file_expansion"] == rule
    listed = json.loads(invoke("chunks", "--corpus", CORPUS, "--format", "json").output)
    first = next(c["chunk_id"] for c in listed["chunks"] if c["doc_id"] == "leave-policy")
    chunk_run = tmp_path / "chunks.trec"
    chunk_run.write_text(f"q1 Q0 {first} 1 1.0 x\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagauditWarning)
        plain = invoke("run", "--corpus", CORPUS, "--golden", GOLDEN, "--run-file", chunk_run,
                       "--k", 2, "--no-timing", "--quiet", "--out", tmp_path / "c")  # fmt: skip
    assert plain.exit_code == 0, plain.output
    assert "7 of 8 golden-set question(s) are missing from the run" in plain.output
    assert "run file:" not in plain.output
