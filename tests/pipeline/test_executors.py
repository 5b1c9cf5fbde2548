"""The executors of the harness loop: threads and Ray give the same rows in the same order, a
run interrupted on one resumes on the other without calling a finished unit again, a pipeline
that cannot travel to Ray workers is a one-line error, and the workers never import from the
directory the run started in.

The Ray tests run on a local Ray instance this module starts (2 CPUs, no dashboard) with
ragaudit's own isolation (:func:`ragaudit.pipeline.ray_executor.start_ray`), shut down after;
they take seconds each (worker start-up), so they are marked slow.
"""

import importlib.util
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.golden import load_golden
from ragaudit.exceptions import InputError, MissingExtraError
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.executors import EXECUTORS, check_executor, unit_seed, units_of
from ragaudit.pipeline.generators import ExtractiveReader
from ragaudit.pipeline.live import PipelineOutput, evaluate_pipeline
from ragaudit.pipeline.retrievers import BM25Retriever

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "harness"
SMALL = dict(k=2, chunk_size=200, chunk_overlap=40, record_latency=False)
IDS = [f"q{i}" for i in range(1, 9)]  # the golden set's order


class Logged:
    """BM25 + the extractive reader, logging every call to a file (one line per call, appended
    with O_APPEND so calls from threads and from Ray worker processes all count), and raising
    on question ``fail_on``.  The lock is per process: dropped when pickled, made anew.  It
    also fails when the module planted in the directory Ray was started from (the
    ``ray_instance`` fixture) can be imported where it runs."""

    def __init__(self, log, fail_on=None):
        self.log, self.fail_on = str(log), fail_on
        chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
        self.by_id = {c.chunk_id: c for c in chunks}
        self.retriever = BM25Retriever(chunks)
        self.reader = ExtractiveReader.fit(chunks)
        self.lock = threading.Lock()  # bm25s's index is not documented thread-safe

    def __getstate__(self):
        return {key: value for key, value in self.__dict__.items() if key != "lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lock = threading.Lock()

    def __call__(self, question):
        if importlib.util.find_spec("ragaudit_planted") is not None:
            raise RuntimeError("the module planted where Ray started is importable here")
        if question == self.fail_on:
            self._write(f"failed {question}")
            raise RuntimeError("endpoint down")
        with self.lock:
            hits = self.retriever.retrieve(question, 20)
        context = [self.by_id[cid] for cid, _ in hits[:2]]
        answer = self.reader.generate(question, context).answer
        self._write(f"answered {question}")
        return PipelineOutput(answer, chunk_ids=[c for c, _ in hits], scores=[s for _, s in hits])

    def _write(self, line):
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{line}\n".encode())
        finally:
            os.close(fd)


def calls(log):
    return Path(log).read_text(encoding="utf-8").splitlines() if Path(log).exists() else []


def question_text(qid):
    return next(q.question for q in load_golden(DATA / "golden.yaml") if q.id == qid)


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory):
    """A local Ray instance for this module, started from a directory holding a planted
    module, as ragaudit starts one; shut down after the module."""
    pytest.importorskip("ray")
    from ragaudit.pipeline.ray_executor import start_ray

    planted = tmp_path_factory.mktemp("cwd")
    (planted / "ragaudit_planted.py").write_text("raise SystemExit('planted code ran')\n")
    here = os.getcwd()
    os.chdir(planted)
    try:
        stop = start_ray(num_cpus=2)
    finally:
        os.chdir(here)
    yield planted
    stop()


WITH_RAY = [pytest.param(e, marks=pytest.mark.ray) if e == "ray" else e for e in EXECUTORS]
# Ray to Ray is left out (issue 32, CPU time): it is threads -> ray (Ray resumes a checkpoint
# another executor wrote) and ray -> threads (Ray's checkpoint resumes) put together, and the
# checkpoint does not record its executor.
PAIRS = [
    pytest.param(a, b, marks=pytest.mark.ray) if "ray" in (a, b) else (a, b)
    for a in EXECUTORS
    for b in EXECUTORS
    if (a, b) != ("ray", "ray")
]


@pytest.fixture(params=WITH_RAY)
def executor(request):
    if request.param == "ray":
        request.getfixturevalue("ray_instance")
    return request.param


def test_unit_seeds_depend_on_run_seed_question_and_repeat_only():
    seeds = {unit_seed(s, q, r) for s in (0, 1) for q in ("q1", "q2") for r in (0, 1, 2)}
    assert len(seeds) == 12
    assert all(0 <= s < 2**32 for s in seeds)
    # a fixed value: the same on every machine and in every process (SHA-256, not hash())
    import hashlib

    key = b'[0, "q1", 0]'
    assert unit_seed(0, "q1", 0) == int.from_bytes(hashlib.sha256(key).digest()[:4], "little")


def test_units_come_in_row_order_with_their_seeds():
    golden = list(load_golden(DATA / "golden.yaml"))
    units = units_of(golden, seed=7, repeats=2)
    assert [(u.index, u.question.id, u.repeat) for u in units] == [
        (i, q.id, r) for i, q in enumerate(golden) for r in range(2)
    ]
    assert [u.seed for u in units] == [unit_seed(7, u.question.id, u.repeat) for u in units]


@pytest.mark.parametrize(
    ("executor", "address", "message"),
    [
        ("processes", None, "executor: expected one of threads, ray, found 'processes'"),
        ("threads", "127.0.0.1:6379", "ray_address: only applies with executor 'ray'"),
        ("ray", "", "ray_address: expected an address such as HOST:6379, found ''"),
    ],
)
def test_bad_executor_arguments(executor, address, message):
    with pytest.raises(InputError, match=f"^{message}$"):
        check_executor(executor, address)


def test_a_missing_ray_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(MissingExtraError, match=r"^executor 'ray' needs the optional package "
                       r"'ray'; install it with: pip install 'ragaudit\[ray\]'"):  # fmt: skip
        evaluate_pipeline(Logged(tmp_path / "log"), DATA / "golden.yaml", corpus=DATA / "corpus",
                          out_dir=tmp_path, executor="ray", **SMALL)  # fmt: skip
    result = CliRunner().invoke(main, ["run", "--corpus", str(DATA / "corpus"), "--golden",
                                       str(DATA / "golden.yaml"), "--out", str(tmp_path),
                                       "--executor", "ray"])  # fmt: skip
    assert result.exit_code == 2
    assert "install it with: pip install 'ragaudit[ray]'" in result.output.strip().splitlines()[-1]


def test_the_cli_refuses_an_address_without_ray(tmp_path):
    result = CliRunner().invoke(main, ["run", "--corpus", str(DATA / "corpus"), "--golden",
                                       str(DATA / "golden.yaml"), "--out", str(tmp_path),
                                       "--ray-address", "127.0.0.1:6379"])  # fmt: skip
    assert result.exit_code == 2
    assert "--ray-address: only applies with --executor ray" in result.output


@pytest.mark.slow
def test_every_executor_writes_the_rows_of_a_sequential_run(tmp_path, executor):
    sequential = evaluate_pipeline(Logged(tmp_path / "a.log"), DATA / "golden.yaml",
                                   corpus=DATA / "corpus", out_dir=tmp_path / "a", max_workers=1,
                                   name="run", **SMALL)  # fmt: skip
    fanned = evaluate_pipeline(Logged(tmp_path / "b.log"), DATA / "golden.yaml",
                               corpus=DATA / "corpus", out_dir=tmp_path / "b", max_workers=2,
                               name="run", executor=executor, **SMALL)  # fmt: skip
    assert [r["id"] for r in fanned.rows] == IDS  # the golden order, not completion order
    assert Path(fanned.path).read_bytes() == Path(sequential.path).read_bytes()
    assert sorted(calls(tmp_path / "b.log")) == sorted(calls(tmp_path / "a.log"))
    assert len(calls(tmp_path / "b.log")) == 8


@pytest.mark.slow
@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_a_run_interrupted_on_one_executor_resumes_on_the_other(tmp_path, request, first, second):
    if "ray" in (first, second):
        request.getfixturevalue("ray_instance")
    log = tmp_path / "calls.log"
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, max_workers=2, name="live", **SMALL)
    with pytest.raises(RuntimeError, match="endpoint down"):
        evaluate_pipeline(Logged(log, fail_on=question_text("q5")), DATA / "golden.yaml",
                          executor=first, **options)  # fmt: skip
    partial = tmp_path / "live.partial.jsonl"
    checkpointed = partial.read_text(encoding="utf-8").splitlines()[1:]
    first = calls(log)
    # every call that returned is in the checkpoint (those running when q5 failed included);
    # the failed call left no row
    assert len(checkpointed) == len([c for c in first if c.startswith("answered")])
    assert first.count(f"failed {question_text('q5')}") == 1
    resumed = evaluate_pipeline(Logged(log), DATA / "golden.yaml", executor=second, **options)
    answered = [c for c in calls(log) if c.startswith("answered")]
    # each question answered exactly once over both runs: no finished unit was called again
    assert sorted(answered) == sorted(f"answered {question_text(q)}" for q in IDS)
    assert not partial.exists()
    whole = evaluate_pipeline(Logged(tmp_path / "whole.log"), DATA / "golden.yaml",
                              corpus=DATA / "corpus", out_dir=tmp_path / "whole", max_workers=1,
                              name="live", **SMALL)  # fmt: skip
    assert Path(resumed.path).read_bytes() == Path(whole.path).read_bytes()


def test_a_pipeline_that_cannot_be_pickled_says_how_to_make_it_shippable(tmp_path):
    pytest.importorskip("ray")  # the check pickles with Ray's cloudpickle, before Ray starts
    lock = threading.Lock()

    def closes_over_a_lock(question):
        with lock:
            return {"answer": "x", "contexts": []}

    class HoldsASocket:
        def __init__(self):
            self.connection = socket.socket()

        def __call__(self, question):
            return {"answer": "x", "contexts": []}

    holds = HoldsASocket()
    try:
        for pipeline, found in [(closes_over_a_lock, "_thread.lock"), (holds, "socket")]:
            with pytest.raises(InputError) as caught:
                evaluate_pipeline(pipeline, DATA / "golden.yaml", corpus=DATA / "corpus",
                                  out_dir=tmp_path, executor="ray", **SMALL)  # fmt: skip
            message = str(caught.value)
            assert "\n" not in message
            assert message.startswith("pipeline: cannot be sent to Ray workers (")
            assert found in message
            assert "make it shippable: a module-level function, or a callable class" in message
    finally:
        holds.connection.close()
    assert not list(tmp_path.glob("*.partial.jsonl"))  # refused before anything was written


def breaks_the_contract(question):
    return {"answer": "x"}  # neither contexts nor chunk_ids


@pytest.mark.slow
@pytest.mark.ray
def test_an_input_error_in_a_worker_is_the_same_one_line_error(tmp_path, ray_instance):
    with pytest.raises(InputError, match=r"^pipeline output of question 'q\d': contexts, "
                       r"chunk_ids: expected exactly one of them"):  # fmt: skip
        # one actor (max_workers=1): one Ray worker to start, the same error (issue 32, CPU)
        evaluate_pipeline(breaks_the_contract, DATA / "golden.yaml", corpus=DATA / "corpus",
                          out_dir=tmp_path, executor="ray", max_workers=1, **SMALL)  # fmt: skip


@pytest.mark.slow
@pytest.mark.ray
def test_ragaudit_run_on_ray_writes_the_file_the_threads_write(tmp_path, ray_instance):
    """With the reader's temperature on, so the rows depend on each unit's seed: the seeds
    reach the Ray workers and are the same there."""
    base = ["run", "--corpus", str(DATA / "corpus"), "--golden", str(DATA / "golden.yaml"),
            "--k", "3", "--chunk-size", "200", "--chunk-overlap", "40", "--no-timing", "-q",
            "--reader-temperature", "0.3"]  # fmt: skip
    files = []
    for executor in EXECUTORS:
        out = tmp_path / executor
        result = CliRunner().invoke(main, [*base, "--out", str(out), "--executor", executor])
        assert result.exit_code == 0, result.output
        files.append((out / "k3_cs200.json").read_bytes())
    assert files[0] == files[1]
    assert json.loads(files[0])["config"]["reader_temperature"] == 0.3


def test_the_reader_temperature_draws_from_each_units_seed(tmp_path):
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.harness import run_pipeline

    def run(name, **options):
        config = RunConfig(DATA / "corpus", DATA / "golden.yaml", k=3, chunk_size=200,
                           chunk_overlap=40, out_dir=tmp_path, record_latency=False, name=name,
                           **options)  # fmt: skip
        return run_pipeline(config)

    plain = run("plain")
    assert "reader_temperature" not in plain.config.to_dict()  # the default file is unchanged
    hot = [run(f"hot{seed}", reader_temperature=0.3, seed=seed) for seed in (0, 0, 1)]
    assert [r["answer"] for r in hot[0].rows] == [r["answer"] for r in hot[1].rows]
    answers = {tuple(r["answer"] for r in run.rows) for run in (plain, hot[0], hot[2])}
    assert len(answers) == 3  # the draw changed some answers, and with the seed
    with pytest.raises(InputError, match="reader_temperature: only applies with the extractive"):
        RunConfig(DATA / "corpus", DATA / "golden.yaml", generator="openai",
                  reader_temperature=0.5)  # fmt: skip


class FailsToArrive:
    """Pickles, but cannot be unpickled in a worker (as a client that reconnects on arrival
    to a server only the driver can reach)."""

    def __init__(self):
        self.server = "127.0.0.1:8000"

    def __call__(self, question):
        return {"answer": "x", "contexts": []}

    def __setstate__(self, state):
        raise ConnectionRefusedError("the model server is not reachable from the worker")


@pytest.mark.slow
@pytest.mark.ray
def test_a_worker_that_dies_is_a_one_line_error(tmp_path, ray_instance):
    from ragaudit.exceptions import RagauditError

    with pytest.raises(RagauditError, match=r"^executor 'ray': a worker failed: ") as caught:
        # one actor (max_workers=1): one worker process to start and lose, not two
        evaluate_pipeline(FailsToArrive(), DATA / "golden.yaml", corpus=DATA / "corpus",
                          out_dir=tmp_path, name="dies", executor="ray", max_workers=1,
                          **SMALL)  # fmt: skip
    assert "\n" not in str(caught.value)
    assert "not reachable from the worker" in str(caught.value)
    # nothing finished, nothing lost: the checkpoint holds its header only
    assert len((tmp_path / "dies.partial.jsonl").read_text().splitlines()) == 1


# Repeated runs (issue 34): R generations per question, each (question, repeat) a unit.


@pytest.mark.slow
@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_a_repeated_run_resumes_without_calling_a_finished_repeat(tmp_path, request, first,
                                                                  second):  # fmt: skip
    if "ray" in (first, second):
        request.getfixturevalue("ray_instance")
    log = tmp_path / "calls.log"
    options = dict(corpus=DATA / "corpus", out_dir=tmp_path, max_workers=2, name="live",
                   repeats=3, **SMALL)  # fmt: skip
    with pytest.raises(RuntimeError, match="endpoint down"):
        evaluate_pipeline(Logged(log, fail_on=question_text("q5")), DATA / "golden.yaml",
                          executor=first, **options)  # fmt: skip
    partial = tmp_path / "live.partial.jsonl"
    lines = [json.loads(line) for line in partial.read_text(encoding="utf-8").splitlines()[1:]]
    assert len(lines) == len([c for c in calls(log) if c.startswith("answered")])
    # a repeat after the first says which one it is, and its seed, in the checkpoint
    assert all(("repeat" in row) == (row.get("repeat", 0) > 0) for row in lines)
    for row in lines:
        if "repeat" in row:
            assert row["seed"] == unit_seed(0, row["id"], row["repeat"])
    resumed = evaluate_pipeline(Logged(log), DATA / "golden.yaml", executor=second, **options)
    answered = sorted(c for c in calls(log) if c.startswith("answered"))
    # each question answered exactly 3 times over both runs: no finished unit called again
    assert answered == sorted(f"answered {question_text(q)}" for q in IDS for _ in range(3))
    assert not partial.exists()
    whole = evaluate_pipeline(Logged(tmp_path / "whole.log"), DATA / "golden.yaml",
                              corpus=DATA / "corpus", out_dir=tmp_path / "whole", max_workers=1,
                              name="live", repeats=3, **SMALL)  # fmt: skip
    assert Path(resumed.path).read_bytes() == Path(whole.path).read_bytes()
    assert resumed.repeats == 3 and resumed.ids == IDS


@pytest.mark.slow
def test_run_repeats_stores_every_generation_with_its_seed(tmp_path, executor):
    """``run --repeats 3`` with the reader's temperature on: repeat 0 is the run with one
    generation (same seed rule), every other repeat is the reader's draw from the (question,
    repeat) unit's seed (the reader called here by hand), threads and Ray write the same
    bytes."""
    base = ["run", "--corpus", str(DATA / "corpus"), "--golden", str(DATA / "golden.yaml"),
            "--k", "3", "--chunk-size", "200", "--chunk-overlap", "40", "--no-timing", "-q",
            "--reader-temperature", "1.0", "--seed", "4"]  # fmt: skip
    out = tmp_path / executor
    result = CliRunner().invoke(main, [*base, "--out", str(out), "--executor", executor,
                                       "--repeats", "3", "--name", "rep"])  # fmt: skip
    assert result.exit_code == 0, result.output
    one = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "one"), "--name", "one"])
    assert one.exit_code == 0, one.output
    from ragaudit.data.records import load_saved_run

    rep, single = load_saved_run(out / "rep.json"), load_saved_run(tmp_path / "one" / "one.json")
    assert (rep.repeats, rep.repeat_seeds, rep.ids) == (3, [4, 4, 4], IDS)
    assert rep.repeat(0).rows == single.rows  # repeat 0 is the run of one generation
    assert "repeats" not in json.loads((tmp_path / "one" / "one.json").read_text())["config"]
    chunks = chunk_documents(load_corpus(DATA / "corpus"), 200, 40)
    reader = ExtractiveReader.fit(chunks, temperature=1.0)
    by_id = {c.chunk_id: c for c in chunks}
    golden = {q.id: q.question for q in load_golden(DATA / "golden.yaml")}
    for r in (1, 2):
        view = rep.repeat(r)
        for row, entry in zip(view.rows, rep.column_values("repeats"), strict=True):
            seed = unit_seed(4, row["id"], r)
            assert entry[r - 1]["seed"] == seed
            context = [by_id[c] for c in (row.get("context_ids")
                       or [e["chunk_id"] for e in row["retrieved"][:3]])]  # fmt: skip
            assert row["answer"] == reader.generate(golden[row["id"]], context, seed=seed).answer
    correct = rep.repeat_outcomes("correct")
    assert correct.shape == (8, 3)
    answered = rep.repeat_outcomes("answered")
    differ = {(tuple(correct[:, r]), tuple(answered[:, r])) for r in range(3)}
    assert len(differ) > 1  # the draws differ between repeats
    if executor == "ray":
        threads = tmp_path / "threads"
        again = CliRunner().invoke(main, [*base, "--out", str(threads), "--repeats", "3",
                                          "--name", "rep"])  # fmt: skip
        assert again.exit_code == 0, again.output
        assert (threads / "rep.json").read_bytes() == (out / "rep.json").read_bytes()


def test_repeats_must_be_a_positive_integer(tmp_path):
    from ragaudit.pipeline.config import RunConfig

    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="repeats: expected an integer >= 1"):
            RunConfig(DATA / "corpus", DATA / "golden.yaml", repeats=bad)
    # LLM judges judge every repeat (tests/llm/test_judge_all_repeats.py): accepted
    RunConfig(DATA / "corpus", DATA / "golden.yaml", repeats=2, judges="llm")
    result = CliRunner().invoke(main, ["run", "--corpus", str(DATA / "corpus"), "--golden",
                                       str(DATA / "golden.yaml"), "--repeats", "0",
                                       "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith("ragaudit: error: repeats:")
