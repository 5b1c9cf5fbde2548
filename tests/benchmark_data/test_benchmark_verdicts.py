"""The reference verdicts shipped for the demo's runs still grade the demo's answers.

``src/ragaudit/benchmark/human_verdicts/`` holds verdicts written by reading every answer of
the demo's two runs (see its README).  Each line records the SHA-256 of the answer it grades,
so when the demo's answers change these tests fail and name the question to re-grade, instead
of the judges being measured against verdicts on answers nobody read.
"""

from __future__ import annotations

import re
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from ragaudit.data.human_verdicts import answer_fingerprint, read_human_verdict_file
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError

VERDICTS = Path(str(files("ragaudit.benchmark"))) / "human_verdicts"
FIELDS = ("correct", "evidence_in_context", "faithful")
NAME = re.compile(r"(?P<run>[\w-]+)\.(?P<field>\w+)\.jsonl")


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SavedRun]:
    """The demo's saved runs, built as ``ragaudit demo`` builds them (no report)."""
    from ragaudit.cli.demo import CONFIGURATIONS, SEED, benchmark_paths
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.harness import run_pipeline

    out = tmp_path_factory.mktemp("demo")
    runs = {}
    with benchmark_paths() as (corpus, golden):
        for config in CONFIGURATIONS:
            saved = run_pipeline(
                RunConfig(
                    corpus,
                    golden,
                    k=config["k"],
                    chunk_size=config["chunk_size"],
                    chunk_overlap=config["chunk_overlap"],
                    name=config["name"],
                    out_dir=out,
                    seed=SEED,
                    record_latency=False,
                )
            )
            runs[saved.name] = saved
    return runs


def verdict_files() -> list[Path]:
    return sorted(VERDICTS.glob("*.jsonl"))


def test_every_run_and_field_has_a_file(demo_runs: dict[str, SavedRun]) -> None:
    expected = {f"{run}.{field}.jsonl" for run in demo_runs for field in FIELDS}
    assert {path.name for path in verdict_files()} == expected


@pytest.mark.parametrize("path", verdict_files(), ids=lambda path: path.name)
def test_verdicts_grade_the_demo_answers(path: Path, demo_runs: dict[str, SavedRun]) -> None:
    match = NAME.fullmatch(path.name)
    assert match is not None, path.name
    run, field = match["run"], match["field"]
    saved = demo_runs[run]
    verdicts = read_human_verdict_file(path, field)
    assert (verdicts.run, verdicts.metric) == (run, field)
    # Every question the verdict applies to, once, none skipped: evidence only exists for
    # answerable questions.
    expected = {q.id for q in saved.questions if field != "evidence_in_context" or q.answerable}
    assert set(verdicts) == expected
    assert verdicts.skipped == ()
    assert verdicts.sample is not None and verdicts.sample.n == verdicts.sample.of == len(expected)
    # Each line names the answer it graded, and that is the answer the demo gives today.
    answers = {q.id: q.answer for q in saved.questions}
    recorded = {qid: fingerprint for qid, fingerprint, _ in verdicts.answers}
    assert set(recorded) == expected
    stale = sorted(qid for qid in expected if recorded[qid] != answer_fingerprint(answers[qid]))
    assert stale == [], f"{path.name}: the demo's answers changed for {stale}: re-grade them"
    assert verdicts.check_answers(answers, run) == len(expected)


def test_a_changed_answer_is_refused(demo_runs: dict[str, SavedRun]) -> None:
    """The check above can fail: one answer edited by a character is caught."""
    saved = demo_runs["k3_cs800"]
    verdicts = read_human_verdict_file(VERDICTS / "k3_cs800.correct.jsonl")
    first = saved.questions[0]
    edited = [replace(first, answer=(first.answer or "") + " "), *saved.questions[1:]]
    answers = {q.id: q.answer for q in edited}
    with pytest.raises(
        FormatError, match=rf"answer_sha256: .*answer of run 'k3_cs800' to {first.id}"
    ):
        verdicts.check_answers(answers, saved.name)
