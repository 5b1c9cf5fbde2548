"""`ragaudit run --repeats R --generator openai`: every (question, repeat) is its own request.

Against the scripted OpenAI-compatible server on 127.0.0.1, whose stand-in model answers with
the request's seed in the text (so a repeat served another repeat's reply shows in the run
file): R repeats of n questions send n*R distinct requests, each with its unit's seed
(:func:`ragaudit.pipeline.executors.unit_seed`); a second identical run is served from the
cache and writes the same file; a resumed run never asks a finished (question, repeat) again.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest
from ragaudit.pipeline.executors import unit_seed

from .test_run_integration import (
    ANSWERABLE,
    N_QUESTIONS,
    UNANSWERABLE,
    env,  # noqa: F401  (fixture)
    invoke,
    load,
    question_of,
    run_args,
)

R = 3


class SeededModel:
    """Answers ``"<qid> drew <seed> [1]."``; ``fail`` maps a (qid, seed) to an HTTP status."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fail: dict[tuple[str, int], int] = {}
        self.ok: list[tuple[str, int]] = []

    def __call__(self, request: RecordedRequest) -> FakeReply:
        qid, seed = question_of(request) or "", int(request.body["seed"])
        with self.lock:
            status = self.fail.pop((qid, seed), None)
            if status is None:
                self.ok.append((qid, seed))
        if status is not None:
            return FakeReply("refused", status=status)
        return FakeReply(f"{qid} drew {seed} [1].", usage=(100, 6))


@pytest.fixture
def seeded(server: FakeChatServer) -> SeededModel:
    model = SeededModel()
    server._responder = model
    return model


def repeat_args(out: Path, *extra: str) -> list[str]:
    return [*run_args(out, "--judges", "offline", "--repeats", str(R)), *extra]


def sent(server: FakeChatServer) -> list[tuple[str, int]]:
    return [(question_of(r) or "", int(r.body["seed"])) for r in server.requests]


def expected_units() -> set[tuple[str, int]]:
    return {(q, unit_seed(0, q, r)) for q in ANSWERABLE + UNANSWERABLE for r in range(R)}


def answers_by_repeat(path: Path) -> dict[tuple[str, int], str | None]:
    """(question id, repeat) -> the answer the run file holds."""
    found: dict[tuple[str, int], str | None] = {}
    for row in load(path)["rows"]:
        found[row["id"], 0] = row["answer"]
        for r, entry in enumerate(row.get("repeats", []), start=1):
            found[row["id"], r] = entry["answer"]
    return found


@pytest.mark.slow
def test_repeats_are_distinct_requests_with_the_units_seed_then_all_cached(
    server: FakeChatServer, seeded: SeededModel, env: Path, tmp_path: Path  # noqa: F811
) -> None:
    first = invoke(repeat_args(tmp_path / "a", "--llm-concurrency", "4"))
    assert first.exit_code == 0, first.output
    requests = sent(server)
    assert len(requests) == N_QUESTIONS * R
    assert set(requests) == expected_units()  # n*R distinct (question, seed) requests
    answers = answers_by_repeat(tmp_path / "a" / "llm.json")
    for q in ANSWERABLE:  # each repeat holds the reply to its own seed, none another's
        for r in range(R):
            assert answers[q, r] == f"{q} drew {unit_seed(0, q, r)} [1]."

    again = invoke(repeat_args(tmp_path / "b", "--llm-concurrency", "4"))
    assert again.exit_code == 0, again.output
    assert len(server.requests) == N_QUESTIONS * R  # the second run sent nothing
    assert (tmp_path / "a" / "llm.json").read_bytes() == (tmp_path / "b" / "llm.json").read_bytes()


@pytest.mark.slow
def test_a_resumed_repeated_run_never_asks_a_finished_unit_again(
    server: FakeChatServer, seeded: SeededModel, env: Path, tmp_path: Path  # noqa: F811
) -> None:
    # A 401 on q4's second repeat aborts the run; the units finished before it are kept.
    seeded.fail[("q4", unit_seed(0, "q4", 1))] = 401
    out = tmp_path / "out"
    args = repeat_args(out, "--llm-concurrency", "1", "--no-cache")
    failed = invoke(args)
    assert failed.exit_code == 2, failed.output
    finished = list(seeded.ok)
    assert ("q4", unit_seed(0, "q4", 0)) in finished and len(finished) < N_QUESTIONS * R
    resumed = invoke(args)
    assert resumed.exit_code == 0, resumed.output
    asked_again = seeded.ok[len(finished) :]
    assert not set(asked_again) & set(finished)  # no finished unit is asked twice
    assert sorted(finished + asked_again) == sorted(expected_units())
    answers = answers_by_repeat(out / "llm.json")
    assert answers["q4", 1] == f"q4 drew {unit_seed(0, 'q4', 1)} [1]."
