"""``judge --only-undecided`` sends only the answers the offline judges left undecided.

Three questions answered offline by the extractive reader: two references the offline judge
decides (numbers), and one it cannot ("Ask HR." for "Do I ask HR?": no claim beyond the
question, no keywords), whose row carries ``judges.reasons``.  A scripted judge on 127.0.0.1
must receive exactly that one answer; the decided rows keep their offline verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

from .conftest import SENTINEL_KEY

DOCS = {
    "leave": "# Leave\nStaff get 25 days of paid leave per year. Questions go to HR.",
    "travel": "# Travel\nFlights are booked at least 14 days before departure.",
}
GOLDEN = """
- {id: q1, question: How many days of leave do staff get, answer: 25 days of paid leave,
   sources: [leave]}
- {id: q2, question: How early are flights booked, answer: At least 14 days before departure,
   sources: [travel]}
- {id: q3, question: Do I ask HR about leave, answer: Ask HR., sources: [leave]}
"""


RUN = "k2_cs800.json"


def wrong_judge(request: RecordedRequest) -> FakeReply:
    return FakeReply(json.dumps({"verdict": "wrong", "completeness": 0.0, "numbers_match": False}))


@pytest.mark.slow
def test_only_the_undecided_answers_are_sent(
    tmp_path: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (tmp_path / "docs" / f"{doc_id}.md").write_text(text)
    (tmp_path / "golden.yaml").write_text(GOLDEN)
    server.respond_with(wrong_judge)
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    made = runner.invoke(main, ["run", "--corpus", str(tmp_path / "docs"), "--golden",
                                str(tmp_path / "golden.yaml"), "--k", "2", "--out",
                                str(tmp_path / "runs"), "--no-timing"])  # fmt: skip
    assert made.exit_code == 0, made.output
    offline = {r["id"]: r for r in json.loads((tmp_path / "runs" / RUN).read_text())["rows"]}
    undecided = sorted(
        q for q, r in offline.items() if r["judges"].get("reasons", {}).get("correct")
    )
    assert undecided == ["q3"]
    judged = tmp_path / "judged.json"
    result = runner.invoke(main, ["judge", str(tmp_path / "runs" / RUN), "--corpus",
                                  str(tmp_path / "docs"), "--judges", "correctness",
                                  "--only-undecided", "--out", str(judged)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 1
    assert "Do I ask HR" in server.requests[0].messages[-1]["content"]
    rows = {r["id"]: r for r in json.loads(judged.read_text())["rows"]}
    assert rows["q3"]["judges"]["correct"] is False  # the scripted judge's verdict
    for qid in ("q1", "q2"):  # decided offline: untouched
        assert rows[qid]["judges"] == offline[qid]["judges"]
        assert rows[qid]["metrics"] == offline[qid]["metrics"]
