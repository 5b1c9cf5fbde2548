"""The LLM path end to end against a real model served on 127.0.0.1 (opt-in: ``-m llm_real``).

SmolLM2-135M checks the plumbing: ``ragaudit run --generator openai --judges llm`` completes,
every reply is either parsed or counted as invalid, nothing crashes and the key never reaches
a file.  Qwen2.5-Coder-1.5B checks that the judges' verdicts mean something on answers whose
correctness is not in doubt.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.judges.llm import JUDGE_NAMES, JudgeItem, LLMJudges
from ragaudit.llm import LLMClient, LLMConfig

from .conftest import LocalServer

pytestmark = pytest.mark.llm_real

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "data" / "harness"
KEY = "sk-LOCAL-SENTINEL-never-write-me-0123456789"
#: Verdict keys of each judge: a judge either wrote them or recorded why it could not.
PRIMARY = {
    "sufficiency": "sufficiency",
    "correctness": "correct",
    "faithfulness": "faithfulness",
    "citations": "citation_accuracy",
    "relevance": "answer_relevance",
}


def _files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()]


def test_smollm2_runs_the_llm_path_end_to_end(
    local_server: Callable[[str], LocalServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = local_server("smollm2")
    monkeypatch.setenv("RAGAUDIT_LLM_API_KEY", KEY)  # a local server ignores it; we must too
    cache = tmp_path / "cache"
    args = [
        "run",
        "--corpus", str(HARNESS / "corpus"),
        "--golden", str(HARNESS / "golden.yaml"),
        "--k", "3",
        "--name", "smol",
        "--generator", "openai",
        "--judges", "llm",
        "--limit", "2",
        "--out", str(tmp_path / "runs"),
        "--no-timing",
        "--quiet",
        "--llm-base-url", server.base_url,
        "--llm-model", server.model,
        "--llm-timeout", "900",
        "--llm-concurrency", "1",
        "--cache-dir", str(cache),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    (saved_path,) = (tmp_path / "runs").glob("smol*.json")
    saved = json.loads(saved_path.read_text())
    assert len(saved["rows"]) == 2
    judged = 0
    for row in saved["rows"]:
        assert row.get("answer") or row.get("generation_error")
        judges = row.get("judges") or {}
        errors = judges.get("judge_errors") or {}
        for name in JUDGE_NAMES:
            # a verdict, a documented "not applicable" (None without error), or a counted error
            if name in errors:
                assert errors[name]
            elif judges.get(PRIMARY[name]) is not None:
                judged += 1
    assert judged >= 1  # at least one judge's reply parsed: the path is really exercised
    stage = saved["summary"]["llm"]["by_stage"]["judges"]
    structured = stage["structured"]
    assert structured["formats"] == {"json_schema": sum(structured["formats"].values())}
    assert structured["repaired"] <= structured["repair_requests"] <= structured["invalid_replies"]
    # The key never reaches a result, the cache or anything else written.
    for path in _files_under(tmp_path):
        assert KEY.encode() not in path.read_bytes(), path


def test_qwen_judges_answers_whose_correctness_is_not_in_doubt(
    local_server: Callable[[str], LocalServer], tmp_path: Path
) -> None:
    server = local_server("qwen2.5-coder-1.5b")
    context = ["Full-time employees receive 25 days of annual leave per calendar year."]
    question = "How many days of annual leave does a full-time employee receive?"
    reference = "25 days per calendar year."
    answers = {
        "right": ("Full-time employees receive 25 days of annual leave per year [1].", True),
        "right-paraphrase": ("They get twenty-five (25) days each calendar year [1].", True),
        "wrong-number": ("Full-time employees get 30 days of annual leave per year [1].", False),
        "wrong-topic": ("Laptops are replaced every 3 years [1].", False),
    }
    items = [
        JudgeItem(qid, question, answer, context, reference_answer=reference)
        for qid, (answer, _) in answers.items()
    ]
    config = LLMConfig(
        base_url=server.base_url,
        model=server.model,
        timeout=900,
        max_concurrency=1,
        cache_path=str(tmp_path / "llm.sqlite"),
    )
    with LLMClient(config) as client:
        rows = LLMJudges(client, ["correctness"]).judge(items)
        structured = client.usage_summary()["structured"]
    verdicts = {item.question_id: row.get("correct") for item, row in zip(items, rows, strict=True)}
    assert all(v is not None for v in verdicts.values()), rows  # every reply parsed
    agree = sum(verdicts[qid] == truth for qid, (_, truth) in answers.items())
    assert agree >= 3, (verdicts, structured)  # a 1.5B judge: most, not necessarily all
