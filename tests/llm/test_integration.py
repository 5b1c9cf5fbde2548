"""End to end against the scripted server: harness with the LLM generator, LLM judges feeding
the funnel's stage 2, ``labels build --labeller llm``, ``cache stats|clear``, and the promise
that the API key is never written anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.diagnose.funnel import compute_funnel
from ragaudit.judges.llm import LLMJudges, judge_rows, summarize_judges
from ragaudit.judges.prompts import PROMPTS
from ragaudit.llm import LLMClient, LLMConfig
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import load_corpus
from ragaudit.pipeline.generators import REFUSAL
from ragaudit.pipeline.harness import run_pipeline

from .conftest import SENTINEL_KEY

DOCS = {
    "leave": "# Leave\nStaff get 25 days of paid leave per year. Up to 5 days carry over.",
    "travel": "# Travel\nFlights are booked at least 14 days before departure.",
}
GOLDEN = """
- {id: q1, question: How many days of leave do staff get, answer: 25 days of paid leave,
   sources: [leave], keywords: [25 days]}
- {id: q2, question: How early are flights booked, answer: At least 14 days before departure,
   sources: [travel], keywords: [14 days]}
- {id: q3, question: How much carry-over is allowed, answer: Up to 5 days carry over,
   sources: [leave], keywords: [5 days]}
"""


def scripted(request: RecordedRequest) -> FakeReply:
    """A deterministic stand-in model: answers, refuses q3, and judges by prompt."""
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    name = next(p.name for p in PROMPTS.values() if p.system == system)
    if name == "generator":
        if "carry-over" in user:
            return FakeReply(REFUSAL)
        return FakeReply("It is stated in the handbook [1].", usage=(120, 9))
    if name == "sufficiency":  # q2's context "lacks" its fact: a stage-2 death
        present = "flights" not in user.lower()
        return FakeReply(json.dumps({"facts": [{"fact": "the fact", "in_context": present}]}))
    if name == "correctness":
        return FakeReply(
            json.dumps({"verdict": "correct", "completeness": 1.0, "numbers_match": True})
        )
    if name == "faithfulness":
        return FakeReply(json.dumps({"claims": [{"claim": "c", "supported": True}]}))
    if name == "citations":
        return FakeReply(json.dumps({"verdicts": [{"sentence": 1, "chunk": 1, "supported": True}]}))
    if name == "relevance":
        return FakeReply(json.dumps({"score": 5}))
    if name == "labeller":
        return FakeReply(json.dumps({"answer_chunks": [1], "supporting_chunks": []}))
    raise AssertionError(name)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (tmp_path / "docs" / f"{doc_id}.md").write_text(text)
    (tmp_path / "golden.yaml").write_text(GOLDEN)
    return tmp_path


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, server: FakeChatServer, tmp_path: Path) -> Path:
    server._responder = scripted
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cache_dir = tmp_path / "llm-cache"
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(cache_dir))
    return cache_dir


@pytest.mark.slow
def test_harness_llm_judges_funnel_and_cache(
    project: Path, server: FakeChatServer, llm_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(out: str) -> Any:
        return run_pipeline(
            RunConfig(
                project / "docs",
                project / "golden.yaml",
                k=1,
                chunk_size=200,
                chunk_overlap=0,
                generator="openai",
                out_dir=project / out,
                record_latency=False,
            )
        )

    saved = run("out1")
    rows = saved.rows
    assert [r["answer"] for r in rows] == ["It is stated in the handbook [1]."] * 2 + [REFUSAL]
    assert [r["abstained"] for r in rows] == [False, False, True]
    assert rows[0]["usage"]["input_tokens"] == 120
    generator_requests = len(server.requests)
    assert generator_requests == 3

    # A rerun costs nothing and writes the same answers.
    again = run("out2")
    assert len(server.requests) == generator_requests
    assert [r["answer"] for r in again.rows] == [r["answer"] for r in rows]

    # LLM judges over the saved rows; stage 2 of the funnel comes from `sufficiency`.
    chunks = chunk_documents(load_corpus(project / "docs"), 200, 0, "fixed")
    texts = {c.chunk_id: c.text for c in chunks}
    cfg = LLMConfig.from_env_and_flags(cache_path=str(llm_env / "llm.sqlite"))
    with LLMClient(cfg) as client:
        judged = judge_rows(rows, texts, LLMJudges(client))
        totals = client.usage_summary()
    assert [r["judges"]["sufficiency"] for r in judged] == [True, False, True]
    assert judged[0]["judges"]["keyword_hit"] is not None  # offline verdicts kept
    assert totals["http_requests"] == len(server.requests) - generator_requests
    funnel = compute_funnel({"config": saved.config, "rows": judged}, n_resamples=50)
    assert funnel.died["2-evidence"] == ("q2",)
    assert funnel.died["3-refusal"] == ("q3",)
    summary = summarize_judges([r["judges"] for r in judged])
    assert summary["n_judge_errors"] == 0

    # The key never reaches the cache, the saved runs or anything printed.
    captured = capsys.readouterr()
    assert SENTINEL_KEY not in captured.out + captured.err
    files = [
        llm_env / "llm.sqlite",
        *llm_env.glob("llm.sqlite-*"),
        *(project / "out1").rglob("*"),
        *(project / "out2").rglob("*"),
    ]
    assert any(f.name == "llm.sqlite" for f in files)
    for path in files:
        if path.is_file():
            assert SENTINEL_KEY.encode() not in path.read_bytes(), path
    assert SENTINEL_KEY not in json.dumps([judged, totals])


def test_labels_build_llm_and_cache_cli(
    project: Path, server: FakeChatServer, llm_env: Path
) -> None:
    runner = CliRunner()
    args = [
        "labels",
        "build",
        "--corpus",
        str(project / "docs"),
        "--golden",
        str(project / "golden.yaml"),
        "--chunk-size",
        "40",
        "--chunk-overlap",
        "0",
        "--labeller",
        "llm",
        "--out",
        str(project / "labels.yaml"),
    ]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    n_requests = len(server.requests)
    assert n_requests == 3  # one call per answerable question
    labels_text = (project / "labels.yaml").read_text()
    assert SENTINEL_KEY not in labels_text + result.output

    rebuilt = runner.invoke(main, [*args, "--rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert len(server.requests) == n_requests  # all from the cache
    assert (project / "labels.yaml").read_text() == labels_text

    stats = runner.invoke(main, ["cache", "stats", "--format", "json"])
    assert stats.exit_code == 0, stats.output
    info = json.loads(stats.output)
    assert info["entries"] == 3
    assert info["by_prompt_version"] == {"labeller-v1": 3}
    assert info["by_model"] == {"gpt-4o-mini": 3}
    table = runner.invoke(main, ["cache", "stats", "--cache-dir", str(llm_env)])
    assert "entries        3" in table.output and "labeller-v1" in table.output

    cleared = runner.invoke(main, ["cache", "clear", "--yes"])
    assert cleared.exit_code == 0 and "removed 3 entries" in cleared.output
    assert (
        json.loads(runner.invoke(main, ["cache", "stats", "--format", "json"]).output)["entries"]
        == 0
    )
    refused = runner.invoke(main, ["cache", "clear"], input="n\n")
    assert refused.exit_code == 1  # aborted at the confirmation prompt


def test_missing_endpoint_is_one_line_exit_2(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CliRunner().invoke(
        main,
        ["labels", "build", "--corpus", str(project / "docs"), "--golden",
         str(project / "golden.yaml"), "--labeller", "llm", "--out", str(project / "l.yaml")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "pass --llm-base-url or set RAGAUDIT_LLM_BASE_URL" in result.output
    assert "Traceback" not in result.output


def test_unreachable_endpoint_in_the_harness_is_one_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "m")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    result = CliRunner().invoke(
        main,
        ["run", "--corpus", str(project / "docs"), "--golden", str(project / "golden.yaml"),
         "--generator", "openai", "--out", str(tmp_path / "out"), "--k", "1"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "cannot reach the LLM endpoint http://127.0.0.1:9/v1" in result.output
    assert SENTINEL_KEY not in result.output


@pytest.mark.slow
def test_judge_cli_updates_a_saved_run(
    project: Path, server: FakeChatServer, llm_env: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    out = tmp_path / "runs"
    result = runner.invoke(main, ["run", "--corpus", str(project / "docs"), "--golden",
                                  str(project / "golden.yaml"), "--k", "1", "--chunk-size", "200",
                                  "--chunk-overlap", "0", "--generator", "openai", "--out",
                                  str(out), "--no-timing", "--name", "llm"])  # fmt: skip
    assert result.exit_code == 0, result.output
    run_file = out / "llm.json"
    generated = len(server.requests)

    dry = runner.invoke(main, ["judge", str(run_file), "--corpus", str(project / "docs"),
                               "--dry-run", "--judges", "sufficiency,faithfulness"])  # fmt: skip
    assert dry.exit_code == 0, dry.output
    # sufficiency for 3 answerable questions; faithfulness for the 2 that did not abstain
    assert dry.output.startswith("dry run: 5 calls (0 cached)")
    assert len(server.requests) == generated

    judged_file = tmp_path / "judged.json"
    args = ["judge", str(run_file), "--corpus", str(project / "docs"), "--out", str(judged_file)]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert re.search(r"judge errors +none\n", first.output)
    data = json.loads(judged_file.read_text())
    assert [r["metrics"]["sufficiency"] for r in data["rows"]] == [1.0, 0.0, 1.0]
    assert [r["judges"]["judge_versions"]["faithfulness"] for r in data["rows"]] == [
        "faithfulness-v1"] * 3  # fmt: skip
    assert data["config"]["judges"] == "offline+llm"
    assert data["summary"]["metrics"]["sufficiency"] == pytest.approx(2 / 3)
    # the run's LLM cost keeps the generator's calls next to the judges'
    assert data["summary"]["llm"]["by_stage"]["judges"]["calls"] == len(server.requests) - generated
    assert data["summary"]["llm"]["by_stage"]["generator"]["calls"] == generated
    assert data["summary"]["llm"]["calls"] == len(server.requests)
    n_after_first = len(server.requests)

    second = runner.invoke(main, [*args[:-1], str(tmp_path / "judged2.json")])
    assert second.exit_code == 0, second.output
    assert len(server.requests) == n_after_first  # everything from the cache
    # same inputs, byte-identical output, however warm the cache
    assert (tmp_path / "judged2.json").read_text() == judged_file.read_text()
    for path in (judged_file, tmp_path / "judged2.json", run_file):
        assert SENTINEL_KEY not in path.read_text()
    assert SENTINEL_KEY not in first.output + second.output + dry.output

    bad = runner.invoke(main, ["judge", str(run_file), "--corpus", str(project / "docs"),
                               "--judges", "truth"])  # fmt: skip
    assert bad.exit_code == 2 and "judges: expected names among" in bad.output
