"""evaluate_pipeline: a plain Python function evaluated in-process writes the saved run
``ragaudit run`` writes for the same retrieval and answers; interrupted runs resume without
calling the function again for a finished question; the output contract is validated."""

import json
import re
import threading
from pathlib import Path

import pytest

import ragaudit
from ragaudit.data.records import load_saved_run
from ragaudit.exceptions import InputError, RagauditWarning
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.generators import ExtractiveReader
from ragaudit.pipeline.harness import run_pipeline
from ragaudit.pipeline.live import PipelineOutput, evaluate_pipeline
from ragaudit.pipeline.retrievers import BM25Retriever

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "src" / "ragaudit" / "benchmark"
DATA = ROOT / "tests" / "data" / "harness"
SMALL = dict(k=2, chunk_size=200, chunk_overlap=40, record_latency=False)
# The config keys that name how the run was made, not what it measured.
HOW = {"retriever", "generator", "pipeline", "context_match", "run_file", "seed"}


class RagauditsOwnPipeline:
    """ragaudit's own BM25 + extractive reader as a user function (what ``run`` does)."""

    def __init__(self, corpus, chunk_size=800, chunk_overlap=100, k=3, texts=False):
        self.chunks = chunk_documents(load_corpus(corpus), chunk_size, chunk_overlap)
        self.by_id = {c.chunk_id: c for c in self.chunks}
        self.retriever = BM25Retriever(self.chunks)
        self.reader = ExtractiveReader.fit(self.chunks)
        self.k, self.texts = k, texts
        self.lock = threading.Lock()  # bm25s's index is not documented thread-safe
        self.calls: list[str] = []

    def __call__(self, question):
        with self.lock:
            self.calls.append(question)
            hits = self.retriever.retrieve(question, 20)
        context = [self.by_id[cid] for cid, _ in hits[: self.k]]
        answer = self.reader.generate(question, context).answer
        ids = [cid for cid, _ in hits]
        scores = [score for _, score in hits]
        if self.texts:
            return {"answer": answer, "contexts": [self.by_id[c].text for c in ids],
                    "scores": scores}  # fmt: skip
        return PipelineOutput(answer, chunk_ids=ids, scores=scores)


def without(row, *keys):
    return {key: value for key, value in row.items() if key not in keys}


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    config = RunConfig(BENCH / "corpus", BENCH / "golden.yaml", k=3, out_dir=out,
                       record_latency=False)  # fmt: skip
    return run_pipeline(config)


@pytest.mark.parametrize("texts", [False, True], ids=["chunk_ids", "contexts"])
def test_a_plain_function_writes_the_run_that_ragaudit_run_writes(tmp_path, bench_run, texts):
    pipeline = RagauditsOwnPipeline(BENCH / "corpus", texts=texts)
    live = evaluate_pipeline(pipeline, BENCH / "golden.yaml", corpus=BENCH / "corpus", k=3,
                             out_dir=tmp_path, record_latency=False, max_workers=4)  # fmt: skip
    assert len(pipeline.calls) == len(bench_run.rows) == 60
    assert [r["id"] for r in live.rows] == [r["id"] for r in bench_run.rows]
    for mine, theirs in zip(live.rows, bench_run.rows, strict=True):
        if texts:  # every context is a chunk's own text: all matched exactly
            n = len(theirs["retrieved"])
            assert mine["context_match"] == {"exact": n, "overlap": 0, "unmatched": 0,
                                             "repeated": 0}  # fmt: skip
        # Field by field (rows, metrics, judges, answers, retrieval and scores); no latency
        # on either side.
        assert without(mine, "context_match") == theirs
    assert live.summary == bench_run.summary
    same = {k: v for k, v in bench_run.config.items() if k not in HOW}
    assert {k: v for k, v in live.config.items() if k not in HOW} == same
    assert live.config["retriever"] == live.config["generator"] == "pipeline"
    # and the file on disk reads back as the same run
    assert load_saved_run(live.path).rows == live.rows


def test_rows_keep_the_golden_order_whatever_order_the_calls_finish_in(tmp_path):
    inner = RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2)
    another_finished = threading.Event()
    lock = threading.Lock()
    first: list[str] = []
    returned: list[str] = []

    def pipeline(question):
        with lock:
            is_first = not first
            first.append(question)
        if is_first:  # the first question asked finishes only after another one is saved
            assert another_finished.wait(60)
        output = inner(question)
        with lock:
            returned.append(question)
        return output

    def progress(done, total):
        another_finished.set()

    concurrent = evaluate_pipeline(pipeline, DATA / "golden.yaml", corpus=DATA / "corpus",
                                   out_dir=tmp_path / "a", max_workers=3, progress=progress,
                                   **SMALL)  # fmt: skip
    sequential = evaluate_pipeline(
        RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), DATA / "golden.yaml",
        corpus=DATA / "corpus", out_dir=tmp_path / "b", max_workers=1, **SMALL,
    )  # fmt: skip
    assert returned.index(first[0]) > 0  # the calls did finish out of order
    assert [r["id"] for r in concurrent.rows] == [f"q{i}" for i in range(1, 9)]
    assert concurrent.rows == sequential.rows


class Interrupting:
    """Counts calls; raises ``error`` on call number ``after + 1``."""

    def __init__(self, inner, after, error):
        self.inner, self.after, self.error, self.calls = inner, after, error, 0
        self.lock = threading.Lock()

    def __call__(self, question):
        with self.lock:
            self.calls += 1
            fail = self.calls == self.after + 1
        if fail:
            raise self.error
        return self.inner(question)


@pytest.mark.parametrize(
    ("error", "workers"),
    [
        (KeyboardInterrupt(), 1),
        (RuntimeError("endpoint down"), 1),
        (RuntimeError("x"), 3),
        (KeyboardInterrupt(), 3),
    ],
    ids=["ctrl-c", "exception", "exception-3-workers", "ctrl-c-3-workers"],
)
def test_an_interrupted_run_resumes_without_repeating_calls(tmp_path, error, workers):
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, max_workers=workers, **SMALL)
    first = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 3, error)
    with pytest.raises(type(error)):
        evaluate_pipeline(first, DATA / "golden.yaml", name="live", **options)
    partial = tmp_path / "live.partial.jsonl"
    checkpointed = partial.read_text(encoding="utf-8").splitlines()[1:]
    # every call that returned is checkpointed (with 3 workers, the calls running when one
    # failed finish and are kept); the failed call left no row
    assert len(checkpointed) == first.calls - 1
    assert not (tmp_path / "live.json").exists()
    second = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 99, error)
    resumed = evaluate_pipeline(second, DATA / "golden.yaml", name="live", **options)
    assert first.calls - 1 + second.calls == 8  # no finished question was asked again
    assert not partial.exists()
    whole = evaluate_pipeline(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2),
                              DATA / "golden.yaml", name="whole", **options)  # fmt: skip
    assert resumed.rows == whole.rows
    assert resumed.summary == whole.summary


def test_progress_counts_resumed_questions_at_once(tmp_path):
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, max_workers=1, **SMALL)
    first = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 5,
                         RuntimeError("stop"))  # fmt: skip
    with pytest.raises(RuntimeError):
        evaluate_pipeline(first, DATA / "golden.yaml", name="p", **options)
    ticks = []
    second = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 99, None)
    evaluate_pipeline(second, DATA / "golden.yaml",
                      name="p", progress=lambda d, t: ticks.append((d, t)), **options)  # fmt: skip
    assert ticks == [(i, 8) for i in range(1, 9)] and second.calls == 3


def test_changed_pipeline_config_is_refused_and_the_checkpoint_kept(tmp_path):
    # Issue 32 item 7: k=5 stopped part-way, then k=3 under the same default name replaced
    # the checkpoint with its one row.
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, max_workers=1, chunk_size=200,
                   chunk_overlap=40, record_latency=False)  # fmt: skip
    first = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 5,
                         RuntimeError("stop"))  # fmt: skip
    with pytest.raises(RuntimeError):
        evaluate_pipeline(first, DATA / "golden.yaml", k=5, config={"model": "a"}, **options)
    partial = tmp_path / "pipeline.partial.jsonl"  # the default name of a callable object
    before = partial.read_bytes()
    again = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 99, None)
    with pytest.raises(InputError, match=r"a checkpoint of another configuration \(5 finished "
                       r"questions\) is in the way: k is 5 there, 3 now; pipeline_config.model "
                       r'is "a" there, "b" now'):  # fmt: skip
        evaluate_pipeline(again, DATA / "golden.yaml", k=3, config={"model": "b"}, **options)
    assert again.calls == 0 and partial.read_bytes() == before
    saved = evaluate_pipeline(again, DATA / "golden.yaml", k=3, config={"model": "b"},
                              name="other", **options)  # fmt: skip
    assert again.calls == 8 and saved.config["pipeline_config"] == {"model": "b"}
    resumed = Interrupting(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), 99, None)
    evaluate_pipeline(resumed, DATA / "golden.yaml", k=5, config={"model": "a"}, **options)
    assert resumed.calls == 3 and not partial.exists()


def fixed(output):
    def pipeline(question):
        return output

    return pipeline


def test_latency_and_cost_are_recorded_per_row(tmp_path):
    chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
    costs = iter([0.5, 0.25, 0.125, 1.0, 2.0, 0.0, 0.5, 0.25])
    lock = threading.Lock()

    def pipeline(question):
        with lock:
            cost = next(costs)
        return {"answer": "I don't know.", "chunk_ids": [chunks[0].chunk_id],
                "latency_ms": 12.5, "cost_usd": cost}  # fmt: skip

    options = dict(corpus=DATA / "corpus", k=2, chunk_size=200, chunk_overlap=40, max_workers=1)
    saved = evaluate_pipeline(pipeline, DATA / "golden.yaml", out_dir=tmp_path, **options)
    assert [r["latency_ms"] for r in saved.rows] == [{"total": 12.5}] * 8
    assert sorted(r["usage"]["cost_usd"] for r in saved.rows) == sorted(
        [0.5, 0.25, 0.125, 1.0, 2.0, 0.0, 0.5, 0.25]
    )
    assert saved.summary["llm"]["cost_usd"] == 0.5 + 0.25 + 0.125 + 1.0 + 2.0 + 0.0 + 0.5 + 0.25
    measured = evaluate_pipeline(fixed({"answer": "x", "contexts": []}), DATA / "golden.yaml",
                                 out_dir=tmp_path, name="m", **options)  # fmt: skip
    for row in measured.rows:  # timed around the call when the pipeline gives no latency
        assert set(row["latency_ms"]) == {"total"} and row["latency_ms"]["total"] >= 0
        assert "usage" not in row
    assert "llm" not in measured.summary


def test_unknown_cost_of_one_question_makes_the_total_unknown(tmp_path):
    chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
    seen = []

    def pipeline(question):
        seen.append(question)
        cost = None if len(seen) == 2 else 0.5
        return {"answer": "x", "chunk_ids": [chunks[0].chunk_id], "cost_usd": cost}

    saved = evaluate_pipeline(pipeline, DATA / "golden.yaml", corpus=DATA / "corpus",
                              out_dir=tmp_path, max_workers=1, **SMALL)  # fmt: skip
    assert saved.summary["llm"]["cost_usd"] is None


def test_unmatched_and_repeated_contexts_are_dropped_and_counted(tmp_path):
    chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
    text = chunks[3].text
    output = {"answer": "x", "contexts": [text, "zebras juggle xylophones", text],
              "scores": [3.0, 2.0, 1.0]}  # fmt: skip
    warning = r"8 of 24 context texts match no chunk .* in 8 question\(s\): q1, q2, q3, q4, q5"
    # Issue 32 item 17: the repeated text was merged into the first one without a word.
    merged = (
        r"8 of 24 context texts matched a chunk that an earlier context of the same "
        r"question already matched, and were merged into it \(counted once\), in 8 "
        r"question\(s\): q1, q2, q3, q4, q5.*; the metrics and k count chunks, not texts"
    )
    with pytest.warns(RagauditWarning) as caught:
        saved = evaluate_pipeline(fixed(output), DATA / "golden.yaml", corpus=DATA / "corpus",
                                  out_dir=tmp_path, max_workers=1, **SMALL)  # fmt: skip
    said = [str(w.message) for w in caught]
    assert len(said) == 2 and re.match(warning, said[0]) and re.match(merged, said[1]), said
    row = saved.rows[0]
    assert row["context_match"] == {"exact": 1, "overlap": 0, "unmatched": 1, "repeated": 1}
    assert row["retrieved"] == [
        {"chunk_id": chunks[3].chunk_id, "doc_id": chunks[3].doc_id, "score": 3.0, "rank": 1}
    ]


def test_the_top_level_api_exports_it():
    assert ragaudit.evaluate_pipeline is evaluate_pipeline
    assert ragaudit.PipelineOutput is PipelineOutput
    assert "evaluate_pipeline" in ragaudit.__all__


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("an answer", r"question 'q1': expected a PipelineOutput or a mapping with keys answer"),
        ({"answer": "x"}, r"'q1': contexts, chunk_ids: expected exactly one .* found neither"),
        ({"answer": "x", "contexts": [], "chunk_ids": []}, r"found both"),
        ({"contexts": []}, r"'q1': answer: missing"),
        ({"answer": None, "contexts": []}, r"answer: expected a string, found NoneType"),
        ({"answer": "x", "context": []}, r"'q1': context: unknown key; expected some of"),
        ({"answer": "x", "contexts": "one text"}, r"contexts: expected a list of strings"),
        ({"answer": "x", "contexts": ["a", 3]}, r"contexts\[1\]: expected a string, found int"),
        ({"answer": "x", "chunk_ids": ["nope"]}, r"chunk_ids\[0\]: 'nope' is not a chunk of the "
         r"corpus chunked with chunk_size=200, chunk_overlap=40"),
        ({"answer": "x", "contexts": ["a"], "scores": [1, 2]},
         r"scores: expected one per context \(1\), found 2"),
        ({"answer": "x", "contexts": ["a"], "scores": [float("nan")]}, r"scores\[0\]: expected a"),
        ({"answer": "x", "contexts": [], "latency_ms": -1}, r"latency_ms: expected a number"),
        ({"answer": "x", "contexts": [], "latency_ms": {"llm": "1"}}, r"latency_ms.llm: expected"),
        ({"answer": "x", "contexts": [], "cost_usd": "0.1"}, r"cost_usd: expected a number"),
    ],
)  # fmt: skip
def test_a_broken_output_is_a_one_line_error_naming_question_and_field(tmp_path, output, message):
    with pytest.raises(InputError, match=message) as caught:
        # one worker: with two, which question's error surfaces first is a race
        evaluate_pipeline(fixed(output), DATA / "golden.yaml", corpus=DATA / "corpus",
                          out_dir=tmp_path, max_workers=1, **SMALL)  # fmt: skip
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "pipeline.json").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, r"k: expected an integer >= 1, found 0"),
        ({"max_workers": 0}, r"max_workers: expected an integer >= 1, found 0"),
        ({"config": {"model": object()}}, r"config: expected JSON values"),
        ({"min_overlap": 1.5}, r"min_overlap: expected a number in \(0, 1\]"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, message):
    options = {**dict(corpus=DATA / "corpus", out_dir=tmp_path), **kwargs}
    with pytest.raises(InputError, match=message):
        evaluate_pipeline(fixed({}), DATA / "golden.yaml", **options)


def test_not_a_function():
    with pytest.raises(InputError, match="pipeline: expected a function"):
        evaluate_pipeline("my_rag", DATA / "golden.yaml", corpus=DATA / "corpus")


def test_the_checkpoint_header_is_json(tmp_path):
    # The pipeline's qualified name and config are the checkpoint's key.
    first = Interrupting(fixed({"answer": "x", "contexts": []}), 0, RuntimeError("stop"))
    with pytest.raises(RuntimeError):
        evaluate_pipeline(first, DATA / "golden.yaml", corpus=DATA / "corpus", out_dir=tmp_path,
                          name="h", config={"prompt": "v2"}, **SMALL)  # fmt: skip
    header = json.loads((tmp_path / "h.partial.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["config"]["pipeline"].endswith("Interrupting")
    assert header["config"]["pipeline_config"] == {"prompt": "v2"}


def test_the_file_is_a_valid_saved_run_with_the_new_keys(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from ragaudit.data.records import find_problems, saved_run_schema

    chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
    output = {"answer": "x [1].", "contexts": [chunks[2].text], "scores": [0.5],
              "latency_ms": {"retrieve": 3.0, "llm": 40.5}, "cost_usd": 0.001}  # fmt: skip
    saved = evaluate_pipeline(fixed(output), DATA / "golden.yaml", corpus=DATA / "corpus",
                              out_dir=tmp_path, **{**SMALL, "record_latency": True})  # fmt: skip
    document = json.loads(Path(saved.path).read_text(encoding="utf-8"))
    assert find_problems(document) == []
    jsonschema.validate(document, saved_run_schema())
    row = document["rows"][0]
    assert row["latency_ms"] == {"retrieve": 3.0, "llm": 40.5}
    assert row["usage"] == {"cost_usd": 0.001} and row["citations"] == [1]
    assert document["summary"]["llm"]["cost_usd"] == pytest.approx(8 * 0.001)


class Hanging:
    """Answers as ``inner`` does, but the call for question number ``at`` blocks until
    ``release`` is set (an endpoint that never answers)."""

    def __init__(self, inner, at):
        self.inner, self.at, self.calls = inner, at, 0
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, question):
        with self.lock:
            self.calls += 1
            hang = self.calls == self.at
        if hang:
            self.release.wait(30)
        return self.inner(question)


@pytest.mark.parametrize("workers", [1, 3])
def test_a_call_that_never_returns_stops_the_run_after_the_timeout(tmp_path, workers):
    # Issue 32 item 12: evaluate_pipeline had no per-call timeout; a hung call stalled the
    # run (and with workers, the pool's shutdown) forever.
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, name="slow", max_workers=workers,
                   **SMALL)  # fmt: skip
    hanging = Hanging(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), at=3)
    try:
        with pytest.raises(TimeoutError, match=r"pipeline call for question 'q\d' did not return "
                           r"within 0.3 s \(timeout=0.3\); finished questions are in the "
                           r"checkpoint and a rerun resumes after them; pass a larger "
                           r"timeout="):  # fmt: skip
            evaluate_pipeline(hanging, DATA / "golden.yaml", timeout=0.3, **options)
    finally:
        hanging.release.set()
    rows = (tmp_path / "slow.partial.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    # the two before it; with 3 workers also those that finished while it hung (never it)
    assert len(rows) == 2 if workers == 1 else 2 <= len(rows) <= 7
    again = Hanging(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2), at=0)
    saved = evaluate_pipeline(again, DATA / "golden.yaml", timeout=0.3, **options)
    assert again.calls == 8 - len(rows) and saved.summary["n"] == 8


def test_the_timeout_defaults_to_five_minutes_and_is_checked(tmp_path):
    import inspect

    from ragaudit.pipeline.timeout import CALL_TIMEOUT

    assert inspect.signature(evaluate_pipeline).parameters["timeout"].default == CALL_TIMEOUT
    assert CALL_TIMEOUT == 300.0
    for bad in (0, -1, float("nan"), "60", True):
        with pytest.raises(InputError, match=r"timeout: expected a number of seconds > 0 or None"):
            evaluate_pipeline(fixed({}), DATA / "golden.yaml", corpus=DATA / "corpus",
                              out_dir=tmp_path, timeout=bad)  # fmt: skip
    saved = evaluate_pipeline(RagauditsOwnPipeline(DATA / "corpus", 200, 40, k=2),
                              DATA / "golden.yaml", corpus=DATA / "corpus", out_dir=tmp_path,
                              timeout=None, max_workers=1, **SMALL)  # fmt: skip
    assert saved.summary["n"] == 8


def test_the_guide_names_out_dir_timeout_and_every_refusal_wording():
    # Issue 32 item 17: the guide did not name out_dir nor list what counts as a refusal.
    from ragaudit.judges.refusals import is_abstention

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "pipeline.md").read_text(
        encoding="utf-8"
    )
    assert (
        '`out_dir` (default `"ragaudit-results"`' in guide and "`timeout` (default 300 s)" in guide
    )
    section = guide[guide.index("**What counts as a refusal.**") : guide.index("**Merged contexts")]
    assert "src/ragaudit/judges/refusals.py" in section
    # Every wording the guide quotes is what the detector does: its refusals abstain, its
    # negative facts do not (so the list cannot drift from the rules).
    quoted = re.findall(r'"([^"]+)"', " ".join(section.split()))
    refusals, facts = quoted[:quoted.index("The travel policy does not cover contractors.")], \
        quoted[quoted.index("The travel policy does not cover contractors."):]  # fmt: skip
    refusals = [q for q in refusals if q not in ("answered with the evidence",)]
    assert len(refusals) >= 10 and len(facts) == 3
    for phrase in refusals:
        assert is_abstention(phrase), phrase
    for phrase in facts:
        assert not is_abstention(phrase), phrase


def test_a_bad_output_for_a_repeated_question_text_names_its_own_question(tmp_path):
    """Two golden questions may share their text (adversarial pass 3, item 11): the error of
    the second call names the second question, never the first."""
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        "questions:\n"
        "  - id: first\n    question: How often are laptops replaced?\n"
        "    answer: Every 3 years.\n    sources: [it-handbook]\n"
        "  - id: second\n    question: How often are laptops replaced?\n"
        "    answer: Every 3 years.\n    sources: [it-handbook]\n",
        encoding="utf-8",
    )
    calls: list[str] = []

    def pipeline(question):
        calls.append(question)
        if len(calls) == 1:
            return {"answer": "Every 3 years.", "contexts": []}
        return {"answer": "Every 3 years.", "contexts": "not a list"}

    with pytest.raises(InputError, match=r"question 'second': contexts: expected a list"):
        evaluate_pipeline(pipeline, golden, corpus=DATA / "corpus", out_dir=tmp_path,
                          max_workers=1, **SMALL)  # fmt: skip
