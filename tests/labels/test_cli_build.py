"""``ragaudit labels build`` end to end, including the resumable human session."""

from __future__ import annotations

import sys

from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.labels.format import load_chunk_labels
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus


def args(corpus, out, labeller, *extra):
    folder, golden = corpus
    return [
        "labels", "build", "--corpus", str(folder), "--golden", str(golden),
        "--chunk-size", "500", "--chunk-overlap", "0", "--chunker", "markdown",
        "--labeller", labeller, "--out", str(out), *extra,
    ]  # fmt: skip


def chunk_ids(corpus):
    chunks = chunk_documents(load_corpus(corpus[0]), 500, 0, "markdown")
    return {(c.doc_id, c.index): c.chunk_id for c in chunks}


def test_heuristic_build_writes_the_file_with_its_chunking(corpus, tmp_path):
    out = tmp_path / "labels.yaml"
    result = CliRunner().invoke(main, args(corpus, out, "heuristic"))
    assert result.exit_code == 0, result.output
    assert "labelled 4 question(s), reused 0; 4 complete" in result.stdout
    assert "no chunk got grade 2 (the answer may be split across chunks) for: q3" in result.stderr
    labels = load_chunk_labels(out)
    assert labels.chunking.to_dict() == {
        "chunker": "markdown",
        "chunk_size": 500,
        "chunk_overlap": 0,
        "corpus_sha256": corpus_sha256(load_corpus(corpus[0])),
    }
    assert labels.questions["q1"].answer_chunks == [chunk_ids(corpus)["leave", 0]]
    again = CliRunner().invoke(main, args(corpus, out, "heuristic"))
    assert "labelled 0 question(s), reused 4" in again.stdout


def test_human_session_saves_every_answer_and_resumes(corpus, tmp_path):
    out = tmp_path / "labels.yaml"
    ids = chunk_ids(corpus)
    # q1 has three candidate chunks; the person grades two of them and the input ends
    first = CliRunner().invoke(main, args(corpus, out, "human", "--limit", "2"), input="2\n0\n")
    assert first.exit_code == 0, first.output
    assert "QUESTION: How many days of paid leave do employees get?" in first.output
    assert "REFERENCE ANSWER: Twenty days per year." in first.output
    assert "Employees receive twenty days of paid leave per year." in first.output
    assert "stopped: progress saved" in first.stdout
    partial = load_chunk_labels(out).questions["q1"]
    assert partial.complete is False
    assert partial.graded == {ids["leave", 0]: 2, ids["leave", 1]: 0}
    assert load_chunk_labels(out).to_qrels().to_dict() == {}

    # the second session asks only for q1's third chunk, then q2's three chunks
    second = CliRunner().invoke(
        main, args(corpus, out, "human", "--limit", "2"), input="1\n0\n2\nq\n"
    )
    assert second.exit_code == 0, second.output
    assert second.output.count("--- chunk") == 4
    # q1's first two chunks were graded before: only its third is shown again
    assert second.output.count("--- chunk 1/3") == 1  # q2's
    assert second.output.count("--- chunk 3/3") == 2  # q1's, then q2's
    labels = load_chunk_labels(out)
    q1 = labels.questions["q1"]
    assert (q1.complete, q1.answer_chunks, q1.supporting_chunks) == (
        True, [ids["leave", 0]], [ids["leave", 2]],
    )  # fmt: skip
    assert labels.questions["q2"].graded == {ids["leave", 0]: 0, ids["leave", 1]: 2}

    third = CliRunner().invoke(main, args(corpus, out, "human", "--limit", "2"), input="0\n")
    assert third.exit_code == 0, third.output
    labels = load_chunk_labels(out)
    assert labels.questions["q2"].answer_chunks == [ids["leave", 1]]
    assert labels.to_qrels().to_dict() == {
        "q1": {ids["leave", 2]: 1, ids["leave", 0]: 2},
        "q2": {ids["leave", 1]: 2},
    }
    assert labels.labeller == "human"


def test_invalid_human_grade_is_asked_again(corpus, tmp_path):
    out = tmp_path / "labels.yaml"
    result = CliRunner().invoke(
        main, args(corpus, out, "human", "--limit", "1"), input="7\n2\n0\n0\n"
    )
    assert result.exit_code == 0, result.output
    assert "Error: '7' is not one of '0', '1', '2', 'q'." in result.output
    assert load_chunk_labels(out).questions["q1"].complete


def test_llm_labeller_missing_is_a_one_line_error(corpus, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ragaudit.labels.llm", None)  # import fails
    result = CliRunner().invoke(main, args(corpus, tmp_path / "l.yaml", "llm"))
    assert result.exit_code == 2
    assert result.stderr.startswith("ragaudit: error: labeller 'llm': ")
    assert "use --labeller heuristic or human" in result.stderr
    assert "Traceback" not in result.stderr


def test_mismatched_existing_file_is_kept_and_a_new_file_suggested(corpus, tmp_path):
    out = tmp_path / "labels.yaml"
    CliRunner().invoke(main, args(corpus, out, "heuristic"))
    before = out.read_bytes()
    other = [a if a != "500" else "400" for a in args(corpus, out, "heuristic")]
    result = CliRunner().invoke(main, other)
    assert result.exit_code == 2 and out.read_bytes() == before
    fresh = tmp_path / "labels.chunk_labels.yaml"
    assert result.stderr.endswith(f"label this chunking into a new file with --out {fresh}\n")
    assert "--rebuild" not in result.stderr
    moved = CliRunner().invoke(main, [a if a != str(out) else str(fresh) for a in other])
    assert moved.exit_code == 0 and load_chunk_labels(fresh).chunking.chunk_size == 400
    rebuilt = CliRunner().invoke(main, [*other, "--rebuild"])
    assert rebuilt.exit_code == 0
    assert load_chunk_labels(out).chunking.chunk_size == 400
