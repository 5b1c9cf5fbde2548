"""judge --judge-repeats R stores every repeat; compare --judge-repeats decomposes the noise.

A scripted judge that says "correct" or "wrong" depending on the request seed (repeat r is
sent with seed + r) stands in for a sampling model: its verdicts vary between repeats, so the
decomposition has a judge component, computed by hand here from the stored verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.judges.prompts import PROMPTS
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

from .conftest import SENTINEL_KEY
from .test_integration import DOCS
from .test_integration import GOLDEN as BASE_GOLDEN

# The corpus and golden set of the LLM integration tests, plus a second travel question.
GOLDEN = BASE_GOLDEN + (
    "- {id: q4, question: When are flights booked, answer: 14 days before departure,\n"
    "   sources: [travel], keywords: [14 days]}\n"
)


def sampling_judge(request: RecordedRequest) -> FakeReply:
    system = request.messages[0]["content"]
    assert next(p.name for p in PROMPTS.values() if p.system == system) == "correctness"
    seed = int(request.body.get("seed", 0))
    text = request.messages[-1]["content"]
    # q1/q3 (leave) are judged correct on seeds 0 and 2, the travel questions on seed 1 only.
    correct = (seed % 2 == 0) if "leave" in text.lower() else (seed == 1)
    verdict = "correct" if correct else "wrong"
    return FakeReply(json.dumps({"verdict": verdict, "completeness": 1.0, "numbers_match": True}))


@pytest.mark.slow
def test_repeats_are_stored_and_decomposed(
    tmp_path: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (tmp_path / "docs" / f"{doc_id}.md").write_text(text)
    (tmp_path / "golden.yaml").write_text(GOLDEN)
    server._responder = sampling_judge
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    made = runner.invoke(main, ["run", "--corpus", str(tmp_path / "docs"), "--golden",
                                str(tmp_path / "golden.yaml"), "--k", "1", "--chunk-size", "200",
                                "--chunk-overlap", "0", "--out", str(tmp_path / "runs"),
                                "--no-timing", "--name", "base"])  # fmt: skip
    assert made.exit_code == 0, made.output
    judged = tmp_path / "judged.json"
    result = runner.invoke(main, ["judge", str(tmp_path / "runs" / "base.json"), "--corpus",
                                  str(tmp_path / "docs"), "--judges", "correctness",
                                  "--judge-repeats", "3", "--out", str(judged)])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(judged.read_text())["rows"]
    answered = [r for r in rows if r["judges"].get("judge_repeat_verdicts")]
    sent = len(server.requests)
    assert sent == 3 * len(answered)  # R distinct requests per judged answer
    scores = np.array(
        [[float(v) for v in r["judges"]["judge_repeat_verdicts"]["correct"]] for r in answered]
    )
    assert scores.shape[1] == 3 and scores.std() > 0

    out = runner.invoke(main, ["compare", str(judged), str(judged), "--metric", "correct",
                               "--judge-repeats", "--format", "json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert len(server.requests) == sent  # compare reads the stored repeats, asks nothing
    noise = json.loads(out.output)["judge_noise"]["a"]
    n, r = scores.shape
    msw = ((scores - scores.mean(1, keepdims=True)) ** 2).sum() / (n * (r - 1))
    assert noise["within_variance"] == pytest.approx(msw, rel=1e-12)
    assert noise["n_repeats"] == 3 and noise["n_questions"] == n
    assert noise["judge_share"] > 0
