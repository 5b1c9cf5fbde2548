"""`ragaudit run --generator openai --judges llm` end to end against the scripted local server.

Every test drives the real CLI on the small fixture corpus (tests/data/harness: 8 questions,
6 answerable, 2 unanswerable) with the fake OpenAI-compatible server on 127.0.0.1: cache
(a rerun sends nothing), injected faults (invalid JSON, 429 + Retry-After, 500, slow replies)
ending in a retry or a counted judge_error, concurrency with resumable checkpoints, dry runs,
the funnel reading the sufficiency judge, missing-endpoint errors, and the API key never
being written or printed.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ragaudit.cli import main
from ragaudit.judges.prompts import PROMPTS
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest
from ragaudit.pipeline.executors import unit_seed
from ragaudit.pipeline.generators import REFUSAL

from .conftest import SENTINEL_KEY

DATA = Path(__file__).resolve().parents[1] / "data" / "harness"
CORPUS, GOLDEN = DATA / "corpus", DATA / "golden.yaml"

# Distinctive words of each fixture question (tests/data/harness/golden.yaml).
QUESTION_WORDS = {
    "q1": "annual leave",
    "q2": "hotel cap",
    "q3": "laptops replaced",
    "q4": "passwords be",
    "q5": "canteen",
    "q6": "expense claims",
    "q7": "dogs",
    "q8": "annual bonus",
}
ANSWERABLE = ["q1", "q2", "q3", "q4", "q5", "q6"]
UNANSWERABLE = ["q7", "q8"]
N_QUESTIONS = len(ANSWERABLE) + len(UNANSWERABLE)
# The scripted model answers each answerable question with one cited sentence and refuses the
# two unanswerable ones.  Judge calls then are, by the judges' rules: 5 per answered question
# (sufficiency, correctness, faithfulness, citations, relevance) and none for a refusal of an
# unanswerable question (correct = abstained; faithfulness 1.0; citations and relevance n/a;
# sufficiency n/a).
N_JUDGE_CALLS = 5 * len(ANSWERABLE)
N_CALLS = N_QUESTIONS + N_JUDGE_CALLS
INSUFFICIENT = "q2"  # the sufficiency judge says its context lacks the fact


def prompt_of(request: RecordedRequest) -> str:
    system = request.messages[0]["content"]
    return next(p.name for p in PROMPTS.values() if p.system == system)


def question_of(request: RecordedRequest) -> str | None:
    """The fixture question a request is about (read from its <question> block only: the
    context chunks may mention other questions' words)."""
    text = request.messages[1]["content"] if len(request.messages) > 1 else ""
    if "<question>" not in text:
        return None
    asked = text.split("<question>", 1)[1].split("</question>", 1)[0].lower()
    found = [qid for qid, words in QUESTION_WORDS.items() if words in asked]
    return found[0] if len(found) == 1 else None


def honest_reply(request: RecordedRequest) -> FakeReply:
    """A deterministic stand-in model."""
    name, qid = prompt_of(request), question_of(request)
    if name == "generator":
        if qid in UNANSWERABLE:
            return FakeReply(REFUSAL, usage=(100, 12))
        # The question id makes every later judge prompt distinct (no accidental cache hit).
        return FakeReply(f"The handbook answers {qid} [1].", usage=(150, 8))
    if name == "sufficiency":
        verdict = qid != INSUFFICIENT
        return FakeReply(json.dumps({"facts": [{"fact": "the fact", "in_context": verdict}]}))
    if name == "correctness":
        return FakeReply(
            json.dumps({"verdict": "correct", "completeness": 1.0, "numbers_match": True})
        )
    if name == "faithfulness":
        return FakeReply(json.dumps({"claims": [{"claim": "c", "supported": True}]}))
    if name == "citations":
        return FakeReply(json.dumps({"verdicts": [{"sentence": 1, "chunk": 1, "supported": True}]}))
    if name == "relevance":
        return FakeReply(json.dumps({"score": 4}))
    if name == "labeller":
        return FakeReply(json.dumps({"answer_chunks": [1], "supporting_chunks": []}))
    raise AssertionError(name)


class FaultyModel:
    """``honest_reply`` except for scripted faults: ``(prompt, question id) -> [replies]``,
    each consumed by the next matching request."""

    def __init__(self, faults: dict[tuple[str, str], list[FakeReply]] | None = None) -> None:
        self.faults = {key: list(replies) for key, replies in (faults or {}).items()}
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay = 0.0

    def __call__(self, request: RecordedRequest) -> FakeReply:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            pending = self.faults.get((prompt_of(request), question_of(request) or ""))
            fault = pending.pop(0) if pending else None
        try:
            if self.delay:
                time.sleep(self.delay)
            return fault if fault is not None else honest_reply(request)
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def model(server: FakeChatServer) -> Iterator[FaultyModel]:
    faulty = FaultyModel()
    server._responder = faulty
    yield faulty


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, server: FakeChatServer, tmp_path: Path) -> Path:
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(cache_dir))
    return cache_dir


def run_args(out: Path, *extra: str) -> list[str]:
    return ["run", "--corpus", str(CORPUS), "--golden", str(GOLDEN), "--k", "2",
            "--chunk-size", "300", "--chunk-overlap", "0", "--generator", "openai",
            "--judges", "llm", "--no-timing", "--name", "llm", "--out", str(out),
            "--llm-timeout", "5", *extra]  # fmt: skip


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in data["rows"]}


# ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_run_with_llm_generator_and_judges_then_a_rerun_sends_nothing(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    first = invoke(run_args(tmp_path / "out"))
    assert first.exit_code == 0, first.output
    assert len(server.requests) == N_CALLS
    run_file = tmp_path / "out" / "llm.json"
    data = load(run_file)
    rows = by_id(data)
    assert [r["id"] for r in data["rows"]] == ANSWERABLE + UNANSWERABLE  # golden order kept
    assert not (tmp_path / "out" / "llm.partial.jsonl").exists()
    assert data["config"]["judges"] == "offline+llm"
    assert data["config"]["llm_generator"]["model"] == "gpt-4o-mini"
    assert data["config"]["llm_generator"]["seed"] == 0  # --seed 0 drives the request seed
    # the generator sends each (question, repeat) unit's seed, the judges the run's seed
    for req in server.requests:
        qid = question_of(req)
        unit = prompt_of(req) == "generator" and qid is not None
        assert req.body.get("seed") == (unit_seed(0, qid, 0) if unit else 0)
    assert [rows[q]["abstained"] for q in UNANSWERABLE] == [True, True]
    assert rows["q1"]["judges"]["sufficiency"] is True
    assert rows[INSUFFICIENT]["metrics"]["sufficiency"] == 0.0
    assert rows["q1"]["metrics"]["answer_relevance"] == pytest.approx((4 - 1) / 4)
    assert rows["q1"]["metrics"]["keyword_hit"] is not None  # offline verdicts kept
    # Tokens and cost: each reply's usage block, summed by hand from the script.
    llm = data["summary"]["llm"]
    gen_in = 150 * len(ANSWERABLE) + 100 * len(UNANSWERABLE)
    gen_out = 8 * len(ANSWERABLE) + 12 * len(UNANSWERABLE)
    assert llm["by_stage"]["generator"]["calls"] == N_QUESTIONS
    assert llm["by_stage"]["generator"]["input_tokens"] == gen_in
    assert llm["by_stage"]["generator"]["output_tokens"] == gen_out
    assert llm["by_stage"]["judges"]["calls"] == N_JUDGE_CALLS
    assert llm["input_tokens"] == gen_in + 10 * N_JUDGE_CALLS  # FakeReply default usage (10, 5)
    assert llm["output_tokens"] == gen_out + 5 * N_JUDGE_CALLS
    # gpt-4o-mini in the shipped table: 0.15 / 0.60 USD per 1M input / output tokens
    assert llm["cost_usd"] == pytest.approx(
        (llm["input_tokens"] * 0.15 + llm["output_tokens"] * 0.60) / 1e6
    )
    assert data["summary"]["judge_errors"] == {} and data["summary"]["n_judge_errors"] == 0
    assert data["summary"]["metrics"]["sufficiency"] == pytest.approx(5 / 6)
    assert data["summary"]["n_scored"]["sufficiency"] == len(ANSWERABLE)
    assert "END TO END (LLM judges" in first.output
    assert re.search(r"judge errors +none\n", first.output)
    assert f"LLM gpt-4o-mini: {N_CALLS} calls" in first.output
    assert f"({N_CALLS} cached" not in first.output
    assert f"{N_CALLS} LLM calls (0 cached, {N_CALLS} HTTP requests)" in first.output

    before = run_file.read_bytes()
    second = invoke(run_args(tmp_path / "out"))
    assert second.exit_code == 0, second.output
    assert len(server.requests) == N_CALLS  # zero requests: everything from the cache
    assert f"{N_CALLS} LLM calls ({N_CALLS} cached, 0 HTTP requests)" in second.output
    assert run_file.read_bytes() == before  # same inputs, byte-identical run


def test_generation_runs_concurrently_and_an_abort_keeps_finished_rows(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    model.delay = 0.05
    args = run_args(tmp_path / "out", "--judges", "offline", "--llm-concurrency", "4")
    assert invoke(args).exit_code == 0
    assert model.max_in_flight > 1
    assert len(server.requests) == N_QUESTIONS

    # A 401 on q4 aborts the run (one line, exit 2); rows finished before it are checkpointed
    # and a rerun sends only the requests of the rows that are not.
    model.delay = 0.0
    model.faults[("generator", "q4")] = [FakeReply("bad key", status=401)]
    out = tmp_path / "out2"
    args = run_args(out, "--judges", "offline", "--llm-concurrency", "1", "--no-cache")
    failed = invoke(args)
    assert failed.exit_code == 2, failed.output
    assert "refused the request (HTTP 401)" in failed.output
    assert SENTINEL_KEY not in failed.output
    lines = (out / "llm.partial.jsonl").read_text().splitlines()
    done = [json.loads(line)["id"] for line in lines[1:]]
    assert {"q1", "q2", "q3"} <= set(done) and "q4" not in done
    assert not (out / "llm.json").exists()
    n_before = len(server.requests)
    resumed = invoke(args)
    assert resumed.exit_code == 0, resumed.output
    assert len(server.requests) - n_before == N_QUESTIONS - len(done)
    assert [r["id"] for r in load(out / "llm.json")["rows"]] == ANSWERABLE + UNANSWERABLE


@pytest.mark.parametrize(
    ("fault", "extra"),
    [
        ([FakeReply("this is not JSON")], []),
        ([FakeReply("slow down", status=429, headers={"retry-after": "0"})], []),
        ([FakeReply("boom", status=500)], ["--llm-max-retries", "1"]),
        ([FakeReply("{}", delay=1.5)], ["--llm-timeout", "0.5"]),
    ],
    ids=["invalid-json", "429-retry-after", "500", "slow"],
)
def test_a_transient_fault_is_retried_and_nothing_is_lost(
    server: FakeChatServer,
    model: FaultyModel,
    env: Path,
    tmp_path: Path,
    fault: list[FakeReply],
    extra: list[str],
) -> None:
    model.faults[("sufficiency", "q1")] = list(fault)
    result = invoke(run_args(tmp_path / "out", *extra))
    assert result.exit_code == 0, result.output
    assert len(server.requests) == N_CALLS + 1  # exactly one extra request: the retry
    retried = [r for r in server.requests if prompt_of(r) == "sufficiency" and
               question_of(r) == "q1"]  # fmt: skip
    assert len(retried) == 2
    if fault[0].status == 200 and not fault[0].delay:  # schema retry quotes the error
        assert "not valid JSON" in retried[1].messages[-1]["content"]
    data = load(tmp_path / "out" / "llm.json")
    assert len(data["rows"]) == N_QUESTIONS
    assert data["summary"]["judge_errors"] == {}
    assert by_id(data)["q1"]["judges"]["sufficiency"] is True
    assert re.search(r"judge errors +none\n", result.output)


@pytest.mark.parametrize(
    ("fault", "extra", "reason"),
    [
        ([FakeReply("not JSON")] * 3, [], "invalid reply after 3 attempts"),
        ([FakeReply("boom", status=500)] * 2, ["--llm-max-retries", "1"], "HTTP 500"),
    ],
    ids=["invalid-json-every-time", "500-every-time"],
)
def test_a_lasting_fault_is_a_counted_judge_error_and_only_that_judge_is_null(
    server: FakeChatServer,
    model: FaultyModel,
    env: Path,
    tmp_path: Path,
    fault: list[FakeReply],
    extra: list[str],
    reason: str,
) -> None:
    model.faults[("sufficiency", "q1")] = list(fault)
    result = invoke(run_args(tmp_path / "out", *extra))
    assert result.exit_code == 0, result.output
    data = load(tmp_path / "out" / "llm.json")
    assert len(data["rows"]) == N_QUESTIONS
    q1 = by_id(data)["q1"]
    assert list(q1["judges"]["judge_errors"]) == ["sufficiency"]
    assert reason in q1["judges"]["judge_error"]
    assert q1["metrics"]["sufficiency"] is None  # not counted as right or wrong
    for metric in ("correct", "faithfulness", "citation_accuracy", "answer_relevance",
                   "keyword_hit", "answered", "hit@k"):  # fmt: skip
        assert q1["metrics"][metric] is not None, metric
    assert data["summary"]["judge_errors"] == {"sufficiency": 1}
    assert data["summary"]["n_judge_errors"] == 1
    # the mean covers the 5 decided questions, of which one (q2) is insufficient
    assert data["summary"]["n_scored"]["sufficiency"] == len(ANSWERABLE) - 1
    assert data["summary"]["metrics"]["sufficiency"] == pytest.approx(4 / 5)
    assert re.search(r"judge errors +sufficiency 1 \(excluded from the means", result.output)


def test_a_failed_generation_is_kept_unjudged(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    model.faults[("generator", "q3")] = [FakeReply("boom", status=500)] * 2
    result = invoke(run_args(tmp_path / "out", "--llm-max-retries", "1"))
    assert result.exit_code == 0, result.output
    data = load(tmp_path / "out" / "llm.json")
    q3 = by_id(data)["q3"]
    assert (
        "HTTP 500" in q3["generation_error"]
        and q3.get("answer") is None
        and q3.get("abstained") is None
    )
    assert q3["metrics"]["correct"] is None and q3["metrics"].get("sufficiency") is None
    assert "sufficiency" not in q3["judges"]
    assert q3["metrics"]["hit@k"] is not None  # retrieval is still scored
    assert data["summary"]["n_generation_errors"] == 1
    # 2 generator attempts for q3, no judge calls for it
    assert len(server.requests) == N_CALLS + 1 - 5
    assert re.search(
        r"generation errors +1 \(see each row's 'generation_error'; their answer metrics "
        r"are null\)",
        result.output,
    )


def test_dry_run_sends_and_writes_nothing(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    dry = invoke([*run_args(out), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert server.requests == [] and not out.exists()
    # Before any answer exists every question is assumed answered with a citation:
    # 5 judge calls for each answerable question, 3 for each unanswerable one (correctness and
    # sufficiency need no call when the question is unanswerable).
    assert f"generator {N_QUESTIONS} calls (0 cached)" in dry.output
    bound = 5 * len(ANSWERABLE) + 3 * len(UNANSWERABLE)
    assert f"judges    {bound} calls (0 cached)" in dry.output
    assert f"total     {N_QUESTIONS + bound} calls" in dry.output

    assert invoke(run_args(out)).exit_code == 0
    n_sent = len(server.requests)
    again = invoke([*run_args(out), "--dry-run"])
    assert again.exit_code == 0, again.output
    assert len(server.requests) == n_sent
    # The cached answers are used: refusals need no judge call, everything else is cached.
    assert f"generator {N_QUESTIONS} calls ({N_QUESTIONS} cached)" in again.output
    assert f"judges    {N_JUDGE_CALLS} calls ({N_JUDGE_CALLS} cached)" in again.output
    assert "0 input + 0 output tokens, cost $0.0000" in again.output


def test_funnel_reads_stage_2_from_the_llm_sufficiency_judge(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    assert invoke(run_args(tmp_path / "out")).exit_code == 0
    funnel = invoke(["funnel", str(tmp_path / "out" / "llm.json")])
    assert funnel.exit_code == 0, funnel.output
    assert "stage 2 decided by: the LLM sufficiency judge" in funnel.output
    as_json = invoke(["funnel", str(tmp_path / "out" / "llm.json"), "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    result = json.loads(as_json.output)
    assert result["stage2_source"] == "sufficiency"
    # the 6 answerable questions are decided by the judge; the refusals have no stage-2 verdict
    assert result["stage2_source_counts"] == {"sufficiency": len(ANSWERABLE)}
    assert result["died"]["2-evidence"] == [INSUFFICIENT]


@pytest.mark.slow
def test_the_api_key_is_never_written_or_printed(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    model.faults[("sufficiency", "q1")] = [FakeReply("not JSON")] * 3  # an error path too
    outputs = [invoke(run_args(tmp_path / "out")), invoke([*run_args(tmp_path / "out"),
               "--dry-run"]), invoke(run_args(tmp_path / "out"))]  # fmt: skip
    labels = invoke(["labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN),
                     "--chunk-size", "300", "--chunk-overlap", "0", "--labeller", "llm",
                     "--out", str(tmp_path / "labels.yaml")])  # fmt: skip
    outputs.append(labels)
    assert all(r.exit_code == 0 for r in outputs), [r.output for r in outputs]
    # The key was really in use (so its absence below means something) ...
    assert server.requests[0].headers["authorization"] == f"Bearer {SENTINEL_KEY}"
    # ... and appears in no output and no file written (runs, labels, cache and its WAL).
    for result in outputs:
        assert SENTINEL_KEY not in result.output
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "llm.sqlite" for p in files) and any(p.suffix == ".json" for p in files)
    for path in files:
        assert SENTINEL_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("command", "env_vars", "message"),
    [
        (["run", "--generator", "openai"], {},
         "the LLM generator needs an endpoint: pass --llm-base-url or set RAGAUDIT_LLM_BASE_URL "
         "(or OPENAI_BASE_URL)"),
        (["run", "--judges", "llm"], {},
         "the LLM judge stage needs an endpoint: pass --llm-base-url or set RAGAUDIT_LLM_BASE_URL "
         "(or OPENAI_BASE_URL)"),
        (["run", "--judges", "llm", "--llm-base-url", "http://127.0.0.1:9/v1"], {},
         "the LLM judge stage needs a model name: pass --llm-model or set RAGAUDIT_LLM_MODEL"),
        (["run", "--generator", "openai"], {"RAGAUDIT_LLM_BASE_URL": "http://127.0.0.1:9/v1"},
         "the LLM generator needs a model name: pass --llm-model or set RAGAUDIT_LLM_MODEL"),
        (["labels", "build", "--labeller", "llm", "--llm-model", "m"], {},
         "the LLM labeller needs an endpoint: pass --llm-base-url or set RAGAUDIT_LLM_BASE_URL "
         "(or OPENAI_BASE_URL)"),
        (["labels", "build", "--labeller", "llm", "--llm-base-url", "http://127.0.0.1:9/v1"], {},
         "the LLM labeller needs a model name: pass --llm-model or set RAGAUDIT_LLM_MODEL"),
    ],
)  # fmt: skip
def test_missing_endpoint_or_model_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
    env_vars: dict[str, str],
    message: str,
) -> None:
    for name, value in env_vars.items():
        monkeypatch.setenv(name, value)
    out = ["--out", str(tmp_path / ("labels.yaml" if command[0] == "labels" else "out"))]
    result = invoke([*command, "--corpus", str(CORPUS), "--golden", str(GOLDEN), *out])
    assert result.exit_code == 2, result.output
    assert result.output == f"ragaudit: error: {message}\n"
    assert not (tmp_path / "out").exists() and not (tmp_path / "labels.yaml").exists()


def test_labels_build_leaves_a_question_without_valid_labels_incomplete(
    server: FakeChatServer, model: FaultyModel, env: Path, tmp_path: Path
) -> None:
    model.faults[("labeller", "q3")] = [FakeReply(json.dumps({"answer_chunks": [99]}))] * 3
    out = tmp_path / "labels.yaml"
    args = ["labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN),
            "--chunk-size", "300", "--chunk-overlap", "0", "--labeller", "llm",
            "--out", str(out)]  # fmt: skip
    first = invoke(args)
    assert first.exit_code == 0, first.output
    assert "1 question(s) got no valid labels" in first.output and "q3 (" in first.output
    from ragaudit.labels.format import load_chunk_labels

    labels = load_chunk_labels(out)
    assert labels.questions["q3"].complete is False
    assert sorted(labels.complete_questions()) == [q for q in ANSWERABLE if q != "q3"]
    assert "q3" not in labels.to_qrels()
    # The next build (bypassing the cached bad replies) retries q3 alone.
    n_before = len(server.requests)
    second = invoke([*args, "--no-cache"])
    assert second.exit_code == 0, second.output
    assert len(server.requests) == n_before + 1
    assert load_chunk_labels(out).questions["q3"].complete is True
    assert "calls (0 cached, 1 HTTP requests)" in second.output
