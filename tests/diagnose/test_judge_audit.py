"""``judges audit`` (issue 36): planted judges prove the paired bias tests work.

The synthetic run (60 questions, written here as templates) is built so each planted bias has
answers to act on; the expected verdicts follow from how the stubs are written, and the
p-values are checked against scipy's binomial test (McNemar exact = a sign test on the
discordant questions).  The offline judges are audited on the bundled benchmark (extractive
run, k=3) for three seeds.  LLM paths use the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy.stats import binomtest

import ragaudit
from ragaudit.cli import main
from ragaudit.data.chunks import Chunk
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.judge_audit import (
    TESTS,
    OfflineAuditJudge,
    audit_judge,
    variants,
)
from ragaudit.llm.testing import FakeChatServer, FakeReply
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import run_chunks
from ragaudit.pipeline.harness import run_pipeline

BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"
N = 60


def _synthetic(n: int = N, model: str | None = None) -> tuple[SavedRun, list[Chunk]]:
    """n questions, each fact in its own chunk; every third answer states a wrong price."""
    chunks = [
        Chunk(f"c{i}", f"doc{i % 12}", i, f"The model R{i} meter costs {100 + i} EUR per unit.")
        for i in range(n)
    ]
    rows = []
    for i in range(n):
        price = 100 + i + (7 if i % 3 == 0 else 0)
        rows.append({
            "id": f"q{i:02d}", "question": f"How much does the R{i} meter cost?",
            "answerable": True, "reference_answer": f"{100 + i} EUR per unit.",
            "keywords": [], "gold_docs": [f"doc{i % 12}"], "tags": [], "retrieved": [],
            "context_ids": [f"c{i}", f"c{(i + 1) % n}", f"c{(i + 2) % n}"],
            "answer": f"The R{i} meter costs {price} EUR per unit [1].", "abstained": False,
            "citations": [1], "judges": {}, "generation_error": None,
        })  # fmt: skip
    config: dict = {"k": 3}
    if model:
        config["llm_generator"] = {"model": model}
    return SavedRun.from_dict({"name": "synthetic", "config": config, "rows": rows}), chunks


class LongAnswerJudge(OfflineAuditJudge):
    """Planted verbosity bias: any answer of 14 words or more is judged correct."""

    name = "prefers-long"

    def verdicts(self, items, repeat=0):
        out = super().verdicts(items, repeat)
        for item, verdict in zip(items, out, strict=True):
            if len(item.answer.split()) >= 14:
                verdict["correct"] = 1.0
        return out


class FirstChunkJudge(OfflineAuditJudge):
    """Planted order bias: evidence counts only when the first chunk holds the reference."""

    name = "first-chunk"

    def verdicts(self, items, repeat=0):
        out = super().verdicts(items, repeat)
        for item, verdict in zip(items, out, strict=True):
            number = item.reference_answer.split()[0]
            verdict["evidence_in_context"] = float(number in item.context[0])
        return out


def _rows(audit):
    return {(r.test, r.metric): r for r in audit.rows}


def test_a_judge_preferring_long_answers_is_caught_at_n_60():
    run, chunks = _synthetic()
    rows = _rows(audit_judge(run, chunks, LongAnswerJudge(), seed=0))
    row = rows[("verbosity", "correct")].comparison
    # every third answer is wrong (20) and 10 words long; padded it reaches 14+: 20 B-only
    assert (row.n, row.mcnemar.a_only, row.mcnemar.b_only) == (N, 0, 20)
    assert row.pvalue == pytest.approx(binomtest(20, 20).pvalue)
    assert row.verdict == "SIGNIFICANT" and row.pvalue < 0.01
    assert row.confidence_interval.low > 0
    # the other tests see no bias in this judge
    assert rows[("context order", "evidence_in_context")].comparison.n_differing == 0
    assert rows[("repeat noise", "correct")].comparison.n_differing == 0


def test_a_judge_reading_only_the_first_chunk_is_caught_by_the_order_test():
    run, chunks = _synthetic()
    rows = _rows(audit_judge(run, chunks, FirstChunkJudge(), seed=0))
    row = rows[("context order", "evidence_in_context")].comparison
    assert (row.n, row.mcnemar.a_only, row.mcnemar.b_only) == (N, N, 0)
    assert row.verdict == "SIGNIFICANT" and row.confidence_interval.high < 0
    assert rows[("verbosity", "correct")].comparison.n_differing == 0


def test_the_offline_judges_show_no_bias_on_the_synthetic_run():
    run, chunks = _synthetic()
    audit = audit_judge(run, chunks, OfflineAuditJudge(), seed=0)
    assert [r.test for r in audit.rows] == [
        "verbosity", "context order", "context order", "refusal phrasing", "position",
        "self-preference", "repeat noise",
    ]  # fmt: skip
    for row in audit.rows:
        if row.comparison is not None:
            assert row.comparison.verdict != "SIGNIFICANT", row
    assert audit.rows[4].comparison is None and audit.rows[4].reason == "no pairwise judge given"
    assert audit.rows[5].comparison is None and "no model" in audit.rows[5].reason


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundled")
    config = RunConfig(BENCHMARK / "corpus", BENCHMARK / "golden.yaml", out_dir=out, k=3,
                       record_latency=False)  # fmt: skip
    saved = run_pipeline(config)
    return saved, run_chunks(BENCHMARK / "corpus", saved.config)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_offline_judges_show_no_bias_on_the_bundled_run(bundled_run, seed):
    """The 200-dataset table is benchmarks/judge_audit_null.py's; here two seeds, exactly."""
    saved, chunks = bundled_run
    audit = audit_judge(saved, chunks, OfflineAuditJudge(), seed=seed)
    verdicts = {(r.test, r.metric): r.comparison.verdict for r in audit.rows if r.comparison}
    assert "SIGNIFICANT" not in verdicts.values(), verdicts
    assert audit.seed == seed and audit.n_items == 60
    noise = _rows(audit)[("repeat noise", "correct")].comparison
    assert noise.n_differing == 0  # rules are deterministic


def test_variants_are_seeded_and_pad_from_another_document():
    run, chunks = _synthetic()
    from ragaudit.diagnose.judge_audit import audit_items

    items = audit_items(run, chunks)
    first, again = variants(items, chunks, 5), variants(items, chunks, 5)
    assert first == again
    for a, b in first["verbosity"]:
        pad = b.answer[len(a.answer) + 1 :]
        doc = next(c.doc_id for c in chunks if pad in c.text)
        assert doc not in a.sources and doc not in a.context_docs
    assert set(first) == set(TESTS)


# ------------------------------------------------------------------ LLM judges


def _scripted(request):
    """A scripted LLM judge: correct when the answer states the reference's number, and, a
    planted verbosity bias, whenever the answer is longer than 12 words; sufficient when the
    first chunk holds the number (a planted order bias); the pairwise judge prefers the
    first-shown answer (a planted position bias)."""
    text = request.messages[-1]["content"]
    if 'label="A"' in text:
        return FakeReply(json.dumps({"winner": "A", "reason": "first"}))
    reference = re.search(r"<reference>\s*(\d+)", text)
    number = reference.group(1) if reference else ""
    if "<answer>" in text:
        answer = text.split("<answer>")[1].split("</answer>")[0]
        good = number in answer or len(answer.split()) > 12
        body = {"verdict": "correct" if good else "wrong", "completeness": float(good),
                "numbers_match": good}  # fmt: skip
    else:
        first = text.split('<chunk n="1">')[1].split("</chunk>")[0]
        body = {"facts": [{"fact": number, "in_context": number in first}]}
    return FakeReply(json.dumps(body))


def _invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def synthetic_files(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("RAGAUDIT_LLM_BASE_URL", "OPENAI_BASE_URL", "RAGAUDIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    run, _ = _synthetic(n=20, model="scripted-1")
    return run, tmp_path


def test_an_llm_judge_is_audited_through_the_cached_client(synthetic_files, monkeypatch):
    from ragaudit.diagnose.judge_audit_llm import LLMAuditJudge, audit_cost
    from ragaudit.judges.llm import LLMJudges
    from ragaudit.llm import LLMClient, LLMConfig

    run, tmp_path = synthetic_files
    _, chunks = _synthetic(n=20)
    with FakeChatServer(responder=_scripted) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted-2",
                           cache_path=str(tmp_path / "llm.sqlite"))  # fmt: skip
        with LLMClient(config) as client:
            judge = LLMAuditJudge(LLMJudges(client, ["correctness", "sufficiency"]))
            before = audit_cost(run, chunks, judge, seed=0)
            audit = audit_judge(run, chunks, judge, seed=0)
            sent = len(server.requests)
            after = audit_cost(run, chunks, judge, seed=0)
    # by hand: originals 20 x 2 judges; verbosity 20 correctness (sufficiency does not read
    # the answer: the same request); order 20 sufficiency (correctness does not read the
    # context); refusal: both wordings are refusals, judged without a call; repeat 20 x 2
    assert before.calls == sent == 40 + 20 + 20 + 40 and before.cached_calls == 0
    assert after.cached_calls == after.calls == 120
    rows = _rows(audit)
    assert audit.self_preference_flag  # scripted-2 and scripted-1: one family
    verbose = rows[("verbosity", "correct")].comparison
    assert (verbose.mcnemar.a_only, verbose.mcnemar.b_only) == (0, 7)  # every third of 20 wrong
    assert verbose.verdict == "SIGNIFICANT"
    order = rows[("context order", "sufficiency")].comparison
    assert (order.mcnemar.a_only, order.mcnemar.b_only) == (20, 0)
    assert order.verdict == "SIGNIFICANT"
    assert rows[("repeat noise", "correct")].comparison.n_differing == 0
    assert rows[("self-preference", "correct")].comparison is not None


def test_the_cli_prints_cost_first_and_refuses_dry_run_offline(bundled_run, tmp_path):
    saved, _ = bundled_run
    with FakeChatServer(responder=_scripted) as server:
        dry = _invoke(["judges", "audit", saved.path, "--corpus", BENCHMARK / "corpus",
                       "--judge", "llm", "--dry-run", "--llm-base-url", server.base_url,
                       "--llm-model", "m", "--cache-dir", tmp_path / "c"])  # fmt: skip
        assert server.requests == []
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.startswith("dry run: ") and "(0 cached)" in dry.stdout
    offline = CliRunner().invoke(main, ["judges", "audit", saved.path, "--corpus",
                                        str(BENCHMARK / "corpus"), "--dry-run"])  # fmt: skip
    assert offline.exit_code == 2 and "--dry-run needs --judge llm" in offline.output


def test_the_cli_json_has_every_row_with_its_interval(bundled_run):
    saved, _ = bundled_run
    result = _invoke(["judges", "audit", saved.path, "--corpus", BENCHMARK / "corpus",
                      "--seed", "3", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["seed"] == 3 and data["judge"] == "offline"
    ran = [r for r in data["rows"] if r["verdict"] != "not run"]
    assert len(ran) == 6  # all but self-preference (offline judge: no model)
    assert data["pairwise_judge"] == "offline" and data["repeats"] == 2
    position = next(r for r in ran if r["test"] == "position")
    assert position["n_differing"] == 0  # the offline pairwise judge never reads the order
    noise = next(r for r in ran if r["test"] == "repeat noise")
    assert noise["agreement"]["value"] == 1.0 and noise["agreement"]["n"] == 60
    for r in ran:
        assert r["ci_low"] <= r["diff"] <= r["ci_high"] and r["n"] > 0 and r["ci_method"]
    assert load_saved_run(saved.path).rows == saved.rows  # the run is never written


def test_report_shows_the_audit_the_run_carries(bundled_run, tmp_path):
    saved, _ = bundled_run
    out = tmp_path / "audited.json"
    audit = _invoke(["judges", "audit", saved.path, "--corpus", BENCHMARK / "corpus",
                     "--format", "json", "--save", out])  # fmt: skip
    assert audit.exit_code == 0, audit.output
    assert load_saved_run(out).judge_audit == json.loads(audit.stdout)
    page = _invoke(["report", out, "--format", "json", "--out", tmp_path / "r.json"])
    assert page.exit_code == 0, page.output
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["runs"][0]["judge_audit"] == json.loads(audit.stdout)
    html = _invoke(["report", out, "--out", tmp_path / "r.html"])
    assert html.exit_code == 0 and "judge audit" in (tmp_path / "r.html").read_text("utf-8")
    plain = _invoke(["report", saved.path, "--format", "json", "--out", tmp_path / "p.json"])
    assert plain.exit_code == 0, plain.output
    assert json.loads((tmp_path / "p.json").read_text("utf-8"))["runs"][0]["judge_audit"] is None


class UndecidedJudge(OfflineAuditJudge):
    """Undecided (None) on the first five questions."""

    def verdicts(self, items, repeat=0):
        out = super().verdicts(items, repeat)
        for item, verdict in zip(items, out, strict=True):
            if item.question_id < "q05":
                verdict["correct"] = None
        return out


def test_undecided_verdicts_and_unanswered_rows_are_counted_not_dropped():
    run, chunks = _synthetic()
    doc = run.to_dict()
    doc["rows"][10] = {**doc["rows"][10], "answer": None, "generation_error": "timeout"}
    audit = audit_judge(SavedRun.from_dict(doc), chunks, UndecidedJudge(), seed=0)
    assert (audit.n_items, audit.n_unanswered) == (N - 1, 1)
    row = _rows(audit)[("verbosity", "correct")]
    assert (row.comparison.n, row.comparison.excluded) == (N - 6, 5)
    from ragaudit.reports.judge_audit import judge_audit_report
    from ragaudit.reports.renderer import render

    text = render(judge_audit_report(audit), "table")
    assert "(1 questions without an answer left out)" in text
    assert "5 without a verdict (not applicable, undecided, failed) left out" in text


def test_report_with_the_corpus_shows_the_golden_checks_of_the_run(bundled_run, tmp_path):
    """The report checks the questions the run carries; `golden check` reads the golden file
    itself (an independent path): the same checks, n, intervals, methods and coverage."""
    saved, _ = bundled_run
    page = _invoke(["report", saved.path, "--corpus", BENCHMARK / "corpus", "--format", "json",
                    "--out", tmp_path / "r.json"])  # fmt: skip
    assert page.exit_code == 0, page.output
    shown = json.loads((tmp_path / "r.json").read_text("utf-8"))["golden_check"]
    direct = _invoke(["golden", "check", "--golden", BENCHMARK / "golden.yaml", "--corpus",
                      BENCHMARK / "corpus", "--format", "json"])  # fmt: skip
    checked = json.loads(direct.stdout)
    assert shown["checks"] == checked["checks"] and shown["coverage"] == checked["coverage"]
    assert [c["check"] for c in shown["checks"]] == [
        "answer not in corpus", "answer in question", "paraphrase duplicate", "conflict",
    ]  # fmt: skip
    for c in shown["checks"]:
        assert c["n"] > 0 and c["ci_low"] <= c["share"] <= c["ci_high"] and c["method"]
    key = lambda f: (f["check"], f["id"], f["detail"])  # noqa: E731
    assert sorted(map(key, shown["findings"])) == sorted(map(key, checked["findings"]))
    html = _invoke(["report", saved.path, "--corpus", BENCHMARK / "corpus",
                    "--out", tmp_path / "r.html"])  # fmt: skip
    text = (tmp_path / "r.html").read_text("utf-8")
    assert html.exit_code == 0 and "golden set: validity checks" in text
    assert "golden set: coverage skew" in text


@pytest.mark.slow  # about 500 requests to the scripted server: the CLI path end to end
def test_the_cli_honours_judge_repeats_and_its_dry_run_counts_every_request(bundled_run, tmp_path):
    saved, _ = bundled_run
    base = ["judges", "audit", saved.path, "--corpus", BENCHMARK / "corpus", "--judge", "llm",
            "--judge-repeats", "3", "--llm-model", "m", "--cache-dir", tmp_path / "c"]  # fmt: skip
    with FakeChatServer(responder=_scripted) as server:
        url = ["--llm-base-url", server.base_url]
        dry = _invoke([*base, *url, "--dry-run", "--format", "json"])
        assert dry.exit_code == 0, dry.output
        assert server.requests == []
        out = tmp_path / "audited.parquet"
        result = _invoke([*base, *url, "--format", "json", "--save", out])
        assert result.exit_code == 0, result.output
        sent = len(server.requests)
    assert json.loads(dry.stdout)["calls"] == sent  # every row's requests counted first
    data = json.loads(result.stdout)
    assert data["repeats"] == 3 and data["pairwise_judge"] == "llm pairwise (m)"
    rows = {r["test"]: r for r in data["rows"]}
    assert rows["repeat noise"]["agreement"]["repeats"] == 3
    assert rows["position"]["verdict"] == "SIGNIFICANT"  # the scripted judge picks A
    assert load_saved_run(out).judge_audit == data
    refused = CliRunner().invoke(main, [str(a) for a in base[:-6]] + ["--judge-repeats", "0"])
    assert refused.exit_code == 2 and "--judge-repeats" in refused.output
