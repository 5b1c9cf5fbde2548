"""``ragaudit judges stress --judge llm`` against the scripted chat server on 127.0.0.1.

The fake model follows a rule the test can predict: an answer stating "14" or "210" is
correct, any other answer wrong, and an answer with "weeks" in it gets HTTP 400 (so the judge
fails and the verdict is undecided).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

GOLDEN = """\
- id: q1
  question: "How early must flights be booked?"
  answer: "Flights are booked at least 14 days before departure."
  sources: [travel]
  keywords: ["14 days"]
- id: q2
  question: "What is the nightly hotel cap?"
  answer: "The cap is 210 EUR per night."
  sources: [travel]
  keywords: ["210 EUR"]
"""
TRAVEL = """# Travel

Flights are booked in Waypoint at least 14 days before departure.
Hotels cost at most 210 EUR per night in a standard city.
Rental cars are booked in Waypoint in the smallest category that fits.
"""


def answer_of(request: RecordedRequest) -> str:
    content = request.messages[-1]["content"]
    found = re.search(r"<answer>\n(.*?)\n</answer>", content, re.DOTALL)
    assert found, content
    return found.group(1)


def model_says(answer: str) -> str | None:
    if "weeks" in answer:
        return None
    return "correct" if re.search(r"\b(14|210)\b", answer) else "wrong"


def respond(request: RecordedRequest) -> FakeReply:
    verdict = model_says(answer_of(request))
    if verdict is None:
        return FakeReply("bad request", status=400)  # the judge fails: no verdict
    return FakeReply(json.dumps({"verdict": verdict, "completeness": 1.0,
                                 "numbers_match": verdict == "correct", "reason": "rule"}))


def run(server: FakeChatServer, tmp_path: Path) -> dict:
    (tmp_path / "corpus").mkdir(exist_ok=True)
    (tmp_path / "corpus" / "travel.md").write_text(TRAVEL, encoding="utf-8")
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    result = CliRunner().invoke(main, [
        "judges", "stress", str(tmp_path / "golden.yaml"), "--corpus", str(tmp_path / "corpus"),
        "--judge", "offline", "--judge", "llm", "--llm-base-url", server.base_url,
        "--llm-model", "fake-judge", "--cache-dir", str(tmp_path / "cache"),
        "--llm-max-retries", "0", "--seed", "2", "--format", "json", "--quiet",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_llm_judge_verdicts_rows_and_cache(server: FakeChatServer, tmp_path: Path) -> None:
    server.respond_with(respond)
    data = run(server, tmp_path)
    assert data["judges"] == ["offline", "llm (fake-judge)"]
    asked = {answer_of(r) for r in server.requests}
    for variant in data["variants"]:
        got = variant["verdicts"]["llm (fake-judge)"]
        if variant["text"] not in asked:
            # a refusal the abstention detector recognises is wrong without a call, as in
            # `ragaudit judge`
            assert variant["family"] == "refusal" and got == "wrong"
            continue
        expected = model_says(variant["text"])
        assert got == ("undecided" if expected is None else expected), variant
    rows = {r["family"]: r for r in data["rows"] if r["judge"] == "llm (fake-judge)"}
    mine = data["variants"]
    undecided = [v for v in mine if v["verdicts"]["llm (fake-judge)"] == "undecided"]
    assert rows["all"]["n"] == len(mine)
    assert rows["all"]["decided"] == len(mine) - len(undecided)
    assert undecided, "the fixture should leave at least one variant undecided"
    # a rerun reads every verdict from the cache: only the failed calls are sent again
    first = len(server.requests)
    assert run(server, tmp_path) == data
    again = {answer_of(r) for r in server.requests[first:]}
    assert again == {v["text"] for v in undecided}


def test_dry_run_sends_nothing(server: FakeChatServer, tmp_path: Path) -> None:
    server.respond_with(respond)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "travel.md").write_text(TRAVEL, encoding="utf-8")
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    args = [
        "judges", "stress", str(tmp_path / "golden.yaml"), "--corpus", str(tmp_path / "corpus"),
        "--judge", "llm", "--llm-base-url", server.base_url, "--llm-model", "fake-judge",
        "--cache-dir", str(tmp_path / "cache"), "--seed", "2", "--format", "json",
    ]  # fmt: skip
    dry = CliRunner().invoke(main, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    estimate = json.loads(dry.stdout)
    assert server.requests == [] and estimate["cached_calls"] == 0
    real = json.loads(CliRunner().invoke(main, args).stdout)
    asked = {answer_of(r) for r in server.requests}
    # one call per variant the abstention detector does not decide
    assert estimate["calls"] == len([v for v in real["variants"] if v["text"] in asked])
    no_llm = CliRunner().invoke(main, ["judges", "stress", "--dry-run"])
    assert no_llm.exit_code == 2
    assert no_llm.stderr.startswith("ragaudit: error: --dry-run: estimates the LLM judge's")


def test_targets_exit_1_naming_the_families_that_miss(
    server: FakeChatServer, tmp_path: Path
) -> None:
    server.respond_with(respond)
    data = run(server, tmp_path)  # fills the cache
    judge = "llm (fake-judge)"
    missed = [
        r["family"] for r in data["rows"]
        if r["judge"] == judge and r["decided"] and r["right"] < r["decided"]
        and not r["family"].startswith("all")
    ]  # fmt: skip
    assert missed, "the fake model should miss some family"
    result = CliRunner().invoke(main, [
        "judges", "stress", str(tmp_path / "golden.yaml"), "--corpus", str(tmp_path / "corpus"),
        "--judge", "llm", "--llm-base-url", server.base_url, "--llm-model", "fake-judge",
        "--cache-dir", str(tmp_path / "cache"), "--llm-max-retries", "0", "--seed", "2",
        "--min-accuracy", "1", "--quiet",
    ])  # fmt: skip
    assert result.exit_code == 1, result.output
    failed = result.stderr.splitlines()
    assert [line.split(": ")[3].split(" decided")[0] for line in failed] == missed
    assert all(line.startswith(f"ragaudit: gate failed: {judge}: ") for line in failed)
