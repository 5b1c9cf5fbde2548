"""``ragaudit judge`` on a repeated run judges every (question, repeat) generation.

Fixture (written for this test): three questions answered offline by the extractive reader
(``ragaudit run``, R = 1), then made a repeated run of R = 2 by hand as docs/saved-run-format.md
describes it: repeat 1 of each question answers "<repeat 0's answer> Indeed." so every
generation sends its own judge prompt.  A scripted judge on 127.0.0.1 calls an answer right
exactly when it says "Indeed", so the verdict stored in each place shows which generation it
came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

from .conftest import SENTINEL_KEY
from .test_only_undecided import DOCS, GOLDEN, RUN


def judge_by_marker(request: RecordedRequest) -> FakeReply:
    right = "Indeed." in request.messages[-1]["content"]
    return FakeReply(json.dumps({"verdict": "correct" if right else "wrong",
                                 "completeness": 1.0 if right else 0.0,
                                 "numbers_match": right}))  # fmt: skip


def _repeated_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeChatServer) -> Path:
    (tmp_path / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (tmp_path / "docs" / f"{doc_id}.md").write_text(text)
    (tmp_path / "golden.yaml").write_text(GOLDEN)
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    made = CliRunner().invoke(main, ["run", "--corpus", str(tmp_path / "docs"), "--golden",
                                     str(tmp_path / "golden.yaml"), "--k", "2", "--out",
                                     str(tmp_path / "runs"), "--no-timing"])  # fmt: skip
    assert made.exit_code == 0, made.output
    document = json.loads((tmp_path / "runs" / RUN).read_text())
    document["config"].update(repeats=2, repeat_seeds=[0, 0])
    for i, row in enumerate(document["rows"]):
        entry = {"seed": 100 + i, "answer": f"{row['answer']} Indeed.", "abstained": False,
                 "citations": row.get("citations"), "judges": dict(row["judges"]),
                 "metrics": dict(row["metrics"])}  # fmt: skip
        row["repeats"] = [entry]
    path = tmp_path / "repeated.json"
    path.write_text(json.dumps(document))
    return path


def _judge(path: Path, tmp_path: Path, *extra: str) -> str:
    result = CliRunner().invoke(main, ["judge", str(path), "--corpus", str(tmp_path / "docs"),
                                       "--judges", "correctness", *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_every_repeat_is_judged_once_and_stored_in_its_entry(
    tmp_path: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.respond_with(judge_by_marker)
    path = _repeated_run(tmp_path, monkeypatch, server)
    plan = json.loads(_judge(path, tmp_path, "--dry-run", "--format", "json"))
    assert plan["calls"] == 6 and plan["cached_calls"] == 0  # 3 questions x 2 repeats
    assert not server.requests  # a dry run sends nothing

    judged = tmp_path / "judged.json"
    _judge(path, tmp_path, "--out", str(judged))
    assert len(server.requests) == 6
    rows = json.loads(judged.read_text())["rows"]
    for row in rows:
        assert row["judges"]["correct"] is False  # repeat 0: no marker
        (entry,) = row["repeats"]
        assert entry["judges"]["correct"] is True  # repeat 1: its own verdict, in its entry
        assert entry["seed"] is not None and entry["answer"].endswith("Indeed.")
        assert row["metrics"]["correct"] in (False, 0) and entry["metrics"]["correct"] in (True, 1)

    # resume: the same judging again sends nothing (every generation is in the cache)
    plan = json.loads(_judge(path, tmp_path, "--dry-run", "--format", "json"))
    assert plan["calls"] == 6 and plan["cached_calls"] == 6
    _judge(path, tmp_path, "--out", str(tmp_path / "again.json"))
    assert len(server.requests) == 6
    assert (tmp_path / "again.json").read_text() == judged.read_text()


@pytest.mark.slow
def test_run_with_repeats_and_llm_judges_judges_every_repeat(
    tmp_path: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run --repeats 2 --judges llm`` (refused before): every repeat entry carries the LLM
    judges' verdicts; a second identical run sends nothing (the cache)."""
    from .test_run_integration import honest_reply

    server.respond_with(honest_reply)
    path = _repeated_run(tmp_path, monkeypatch, server)  # sets up docs, golden and env
    assert path.exists()
    args = ["run", "--corpus", str(tmp_path / "docs"), "--golden", str(tmp_path / "golden.yaml"),
            "--k", "2", "--repeats", "2", "--reader-temperature", "1.0", "--judges", "llm",
            "--no-timing", "--name", "llm"]  # fmt: skip
    made = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a")])
    assert made.exit_code == 0, made.output
    sent = len(server.requests)
    assert sent > 0
    data = json.loads((tmp_path / "a" / "llm.json").read_text())
    assert data["config"]["judges"] == "offline+llm" and data["config"]["repeats"] == 2
    for row in data["rows"]:
        (entry,) = row["repeats"]
        # keys only the LLM judges write (judges.llm._KEYS), in repeat 1's own entry too
        for key in ("n_claims", "answer_relevance", "sufficiency", "completeness"):
            assert key in row["judges"] and key in entry["judges"], key
        assert "answer_relevance" in entry["metrics"]
    answered = [e for row in data["rows"] for e in row["repeats"] if not e["judges"]["abstained"]]
    assert answered  # and their relevance is the scripted score (4 of 5), not a gap
    assert all(e["judges"]["answer_relevance"] is not None for e in answered)
    again = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    assert len(server.requests) == sent  # resume through the cache: nothing called twice
    assert (tmp_path / "b" / "llm.json").read_text() == (tmp_path / "a" / "llm.json").read_text()
