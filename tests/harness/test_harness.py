import json
import math
import os
import shutil
from pathlib import Path

import pytest

from ragaudit.data.golden import load_golden
from ragaudit.data.qrels import Qrels
from ragaudit.data.records import load_saved_run
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.pipeline.build import build_retriever
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.generators import REFUSAL, ExtractiveReader, Generation
from ragaudit.pipeline.harness import evaluate_configuration, run_pipeline
from ragaudit.pipeline.retrievers import CallableRetriever
from ragaudit.pipeline.summary import retrieval_metrics

DATA = Path(__file__).parent.parent / "data" / "harness"
CORPUS, GOLDEN = DATA / "corpus", DATA / "golden.yaml"
SMALL = dict(k=2, chunk_size=200, chunk_overlap=40, record_latency=False)


def test_end_to_end_rows_and_doc_metrics_by_hand(tmp_path):
    saved = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path, **SMALL))
    assert saved.path == str(tmp_path / "k2_cs200.json")
    assert load_saved_run(saved.path).rows == saved.rows
    assert [r["id"] for r in saved.rows] == [f"q{i}" for i in range(1, 9)]
    for row in saved.rows:
        assert len(row["retrieved"]) <= 20 and row["context_ids"] == [
            r["chunk_id"] for r in row["retrieved"][:2]
        ]
        assert [r["rank"] for r in row["retrieved"]] == list(range(1, len(row["retrieved"]) + 1))
        m = row["metrics"]
        if not row["answerable"]:
            assert all(
                m[f"{f}@k"] is None for f in ("hit", "recall", "precision", "mrr", "ndcg", "map")
            )
            continue
        # Oracle: every fixture question has one gold document, so with the top-2 chunks lifted
        # to documents the metrics follow from the rank r of the gold document.
        lifted = list(dict.fromkeys(r["doc_id"] for r in row["retrieved"][:2]))
        (gold,) = row["gold_docs"]
        rank = lifted.index(gold) + 1 if gold in lifted else None
        found = rank is not None
        assert m["hit@k"] == m["recall@k"] == float(found)
        assert m["precision@k"] == pytest.approx(found / 2)
        assert m["mrr@k"] == pytest.approx(1 / rank if found else 0.0)
        assert m["map@k"] == pytest.approx(1 / rank if found else 0.0)
        assert m["ndcg@k"] == pytest.approx(1 / math.log2(rank + 1) if found else 0.0)


def test_the_fixture_shows_a_right_document_wrong_chunk_case(tmp_path):
    saved = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path, **SMALL))
    q6 = {r["id"]: r for r in saved.rows}["q6"]
    # Both facts are in travel-policy, but at chunk size 200 they sit in different chunks.
    assert q6["metrics"]["hit@k"] == 1.0
    assert q6["metrics"]["evidence_in_context"] == 0.0
    assert q6["metrics"]["correct"] == 0.0
    unanswerable = [r for r in saved.rows if not r["answerable"]]
    assert all(r["answer"] == REFUSAL and r["metrics"]["correct"] == 1.0 for r in unanswerable)
    assert saved.summary["n"] == 8 and saved.summary["n_answerable"] == 6
    assert saved.summary["metrics"]["hit@k"] == pytest.approx(
        sum(r["metrics"]["hit@k"] for r in saved.rows[:6]) / 6
    )


def test_lifting_truncates_chunks_at_k_before_scoring():
    rows = [{"id": "q", "retrieved": [{"chunk_id": c} for c in ("b1", "b2", "a1", "a2")]}]
    lift = {"b1": "B", "b2": "B", "a1": "A", "a2": "A"}
    qrels = Qrels({"q": {"A": 1}})
    at3 = retrieval_metrics(rows, 3, lift, qrels=qrels)["q"]
    assert at3 == pytest.approx(
        {
            "hit@k": 1.0,
            "recall@k": 1.0,
            "precision@k": 1 / 3,
            "mrr@k": 1 / 2,
            "ndcg@k": 1 / math.log2(3),
            "map@k": 1 / 2,
        }
    )
    at2 = retrieval_metrics(rows, 2, lift, qrels=qrels)["q"]
    assert at2 == dict.fromkeys(at3, 0.0)  # A's first chunk is 3rd: not in the top 2 chunks


def test_chunk_level_metrics_with_chunk_labels(tmp_path):
    documents = load_corpus(CORPUS)
    chunks = chunk_documents(documents, 200, 40)
    golden = load_golden(GOLDEN)
    retriever = build_retriever("bm25", chunks)
    first_q1 = retriever.retrieve(golden[0].question, 20)
    labels = Qrels({"q1": {first_q1[1][0]: 2}}, unit="chunk")  # the 2nd-ranked chunk holds it
    saved = evaluate_configuration(
        golden,
        chunks,
        retriever,
        ExtractiveReader.fit(chunks),
        config={"k": 2},
        name="x",
        out_dir=tmp_path,
        chunk_labels=labels,
        record_latency=False,
    )
    m = saved.rows[0]["metrics"]
    assert (m["chunk_hit@k"], m["chunk_mrr@k"], m["chunk_precision@k"]) == (1.0, 0.5, 0.5)
    assert saved.rows[0]["judges"]["answer_chunk_in_context"] is True
    assert saved.rows[1]["metrics"]["chunk_hit@k"] is None  # q2 has no chunk labels


class Interrupting:
    """A generator that 'crashes' (Ctrl-C) on its n-th call and counts calls."""

    def __init__(self, inner, fail_at=None):
        self.inner, self.fail_at, self.questions = inner, fail_at, []

    def generate(self, question, context):
        if self.fail_at is not None and len(self.questions) + 1 == self.fail_at:
            raise KeyboardInterrupt
        self.questions.append(question)
        return self.inner.generate(question, context)


def _pieces():
    chunks = chunk_documents(load_corpus(CORPUS), 200, 40)
    return (
        load_golden(GOLDEN),
        chunks,
        build_retriever("bm25", chunks),
        ExtractiveReader.fit(chunks),
    )


def test_interrupted_run_resumes_without_redoing_finished_questions(tmp_path):
    golden, chunks, retriever, reader = _pieces()
    config = {"k": 2, "seed": 0}
    evaluate_configuration(
        golden,
        chunks,
        retriever,
        reader,
        config=config,
        name="ref",
        out_dir=tmp_path / "ref",
        record_latency=False,
    )
    crashing = Interrupting(reader, fail_at=4)
    with pytest.raises(KeyboardInterrupt):
        evaluate_configuration(
            golden,
            chunks,
            retriever,
            crashing,
            config=config,
            name="run",
            out_dir=tmp_path,
            record_latency=False,
        )
    sidecar = tmp_path / "run.partial.jsonl"
    assert not (tmp_path / "run.json").exists()
    assert len(sidecar.read_text(encoding="utf-8").splitlines()) == 1 + 3  # header + 3 rows
    resumed = Interrupting(reader)
    evaluate_configuration(
        golden,
        chunks,
        retriever,
        resumed,
        config=config,
        name="run",
        out_dir=tmp_path,
        record_latency=False,
    )
    assert resumed.questions == [q.question for q in golden][3:]  # only the unfinished ones
    assert not sidecar.exists()
    produced = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    expected = json.loads((tmp_path / "ref" / "ref.json").read_text(encoding="utf-8"))
    assert produced["rows"] == expected["rows"] and produced["summary"] == expected["summary"]


def test_changed_configuration_does_not_reuse_or_replace_the_checkpoint(tmp_path):
    golden, chunks, retriever, reader = _pieces()
    with pytest.raises(KeyboardInterrupt):
        evaluate_configuration(
            golden,
            chunks,
            retriever,
            Interrupting(reader, fail_at=3),
            config={"k": 2},
            name="run",
            out_dir=tmp_path,
        )
    sidecar = tmp_path / "run.partial.jsonl"
    before = sidecar.read_bytes()
    counting = Interrupting(reader)
    with pytest.raises(InputError, match=r"run.partial.jsonl: a checkpoint of another "
                       r"configuration \(2 finished questions\) is in the way: k is 2 there, "
                       r"3 now; to keep it, give this run another name"):  # fmt: skip
        evaluate_configuration(
            golden, chunks, retriever, counting, config={"k": 3}, name="run", out_dir=tmp_path
        )
    assert counting.questions == [] and sidecar.read_bytes() == before
    evaluate_configuration(
        golden, chunks, retriever, counting, config={"k": 3}, name="run3", out_dir=tmp_path
    )
    assert len(counting.questions) == len(golden)
    assert sidecar.read_bytes() == before  # another name: both kept


def test_limit_writes_its_own_file_and_never_touches_the_full_run(tmp_path):
    full = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path, **SMALL))
    before = Path(full.path).read_bytes()
    limited = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path, limit=3, **SMALL))
    assert Path(limited.path).name == "k2_cs200.limit3.json"
    assert [r["id"] for r in limited.rows] == ["q1", "q2", "q3"]
    assert Path(full.path).read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["k2_cs200.json", "k2_cs200.limit3.json"]


def test_same_inputs_give_byte_identical_files(tmp_path):
    a = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path / "a", **SMALL))
    b = run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path / "b", **SMALL))
    assert Path(a.path).read_bytes() == Path(b.path).read_bytes()


def test_generation_errors_are_kept_flagged_and_not_judged(tmp_path):
    golden, chunks, retriever, _ = _pieces()

    class Failing:
        def generate(self, question, context):
            return Generation("", False, [], None, "rate limited")

    saved = evaluate_configuration(
        golden, chunks, retriever, Failing(), config={"k": 2}, name="x", out_dir=tmp_path
    )
    row = saved.rows[0]
    assert row["generation_error"] == "rate limited" and row["judges"] == {}
    assert row["metrics"]["correct"] is None and row["metrics"]["hit@k"] == 1.0
    assert saved.summary["n_generation_errors"] == len(golden)


def test_a_retriever_returning_foreign_chunk_ids_is_an_error(tmp_path):
    golden, chunks, _, reader = _pieces()
    with pytest.raises(InputError, match="question 'q1': the retriever returned chunk id 'nope'"):
        evaluate_configuration(
            golden,
            chunks,
            CallableRetriever(lambda q: [("nope", 1.0)]),
            reader,
            config={"k": 2},
            name="x",
            out_dir=tmp_path,
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(k=0), "k: expected an integer >= 1, found 0"),
        (
            dict(chunk_size=100, chunk_overlap=100),
            "chunk_size: expected a value larger than chunk_overlap",
        ),
        (dict(limit=0), "limit: expected an integer >= 1, found 0"),
        (dict(chunker="semantic"), "chunker: expected one of fixed, markdown"),
        (dict(retriever="dense"), "retriever: 'dense' needs an embedding model"),
    ],
)
def test_bad_arguments_fail_before_anything_is_written(tmp_path, kwargs, message):
    with pytest.raises(InputError, match=message):
        run_pipeline(RunConfig(CORPUS, GOLDEN, out_dir=tmp_path / "out", **kwargs))
    assert not (tmp_path / "out").exists()


def test_bad_golden_source_and_empty_corpus_fail_before_anything_is_written(tmp_path):
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        "- {id: q1, question: Why, answer: x, sources: [payroll]}\n", encoding="utf-8"
    )
    with pytest.raises(
        InputError,
        match=r"golden\.yaml:1: sources\[0\]: question 'q1': 'payroll' names no document",
    ):
        run_pipeline(RunConfig(CORPUS, golden, out_dir=tmp_path / "out"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="empty corpus"):
        run_pipeline(RunConfig(tmp_path / "empty", GOLDEN, out_dir=tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_precomputed_run_file_replaces_the_retriever(tmp_path):
    run_file = tmp_path / "run.trec"
    # A doc-level run that puts the wrong document first for q1.
    run_file.write_text(
        "q1 Q0 travel-policy 1 2.0 x\nq1 Q0 leave-policy 2 1.0 x\n", encoding="utf-8"
    )
    shutil.copy(GOLDEN, tmp_path / "g.yaml")
    # q2 is asked (limit 2) but not in the run: it retrieves nothing, scores 0, and is named
    with pytest.warns(
        RagauditWarning,
        match=r"run\.trec: 1 of 2 golden-set question\(s\) are missing from the run: nothing "
        r"is retrieved for them and they score 0: q2$",
    ):
        saved = run_pipeline(
            RunConfig(
                CORPUS,
                tmp_path / "g.yaml",
                out_dir=tmp_path,
                run_file=run_file,
                k=1,
                limit=2,
                record_latency=False,
            )
        )
    assert saved.config["retriever"] == "run-file" and saved.name == "k1_cs800_run-file"
    q1, q2 = saved.rows
    assert [r["doc_id"] for r in q1["retrieved"]] == ["travel-policy", "leave-policy"]
    assert q1["metrics"]["hit@k"] == 0.0 and q2["retrieved"] == []
