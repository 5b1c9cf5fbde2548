"""The graded verdicts still grade today's answers.

``src/ragaudit/benchmark/human_verdicts/`` holds verdicts written by reading every answer of
the demo's two runs, ``tests/fixtures/outside_verdicts/`` those on the answers to
``tests/fixtures/outside_golden.yaml`` at k=3 (see their READMEs).  Each line records the
SHA-256 of the answer it grades, so when the answers change these tests fail and name the
question to re-grade, instead of the judges being measured against verdicts on answers
nobody read.
"""

from __future__ import annotations

import re
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from ragaudit.data.human_grades import answer_fingerprint, read_human_grades_file
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError

VERDICTS = Path(str(files("ragaudit.benchmark"))) / "human_verdicts"
FIXTURES = Path(__file__).parent.parent / "fixtures"
OUTSIDE = FIXTURES / "outside_verdicts"
FIELDS = ("correct", "evidence_in_context", "faithful")
NAME = re.compile(r"(?P<run>[\w-]+)\.(?P<field>\w+)\.jsonl")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, dict[str, SavedRun]]:
    """Folder of verdicts -> the runs they grade: the demo's two runs, built as ``ragaudit
    demo`` builds them (no report), and ``ragaudit run --golden outside_golden.yaml --k 3``."""
    from ragaudit.pipeline.bundled import CONFIGURATIONS, SEED, benchmark_paths
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.harness import run_pipeline

    out = tmp_path_factory.mktemp("runs")
    demo = {}
    with benchmark_paths() as (corpus, golden):
        for config in CONFIGURATIONS:
            saved = run_pipeline(
                RunConfig(
                    corpus,
                    golden,
                    k=config.k,
                    chunk_size=config.chunk_size,
                    chunk_overlap=config.chunk_overlap,
                    name=config.name,
                    out_dir=out / "demo",
                    seed=SEED,
                    record_latency=False,
                )
            )
            demo[saved.name] = saved
        # The defaults of `ragaudit run`: chunks of 800 with 100 overlap, seed 0.
        outside = run_pipeline(
            RunConfig(
                corpus, FIXTURES / "outside_golden.yaml", k=3, out_dir=out / "outside",
                record_latency=False,
            )
        )  # fmt: skip
    return {VERDICTS: demo, OUTSIDE: {outside.name: outside}}


def verdict_files() -> list[Path]:
    return sorted([*VERDICTS.glob("*.jsonl"), *OUTSIDE.glob("*.jsonl")])


@pytest.mark.parametrize("folder", [VERDICTS, OUTSIDE], ids=lambda folder: folder.name)
def test_every_run_and_field_has_a_file(
    folder: Path, runs: dict[Path, dict[str, SavedRun]]
) -> None:
    expected = {f"{run}.{field}.jsonl" for run in runs[folder] for field in FIELDS}
    assert {path.name for path in folder.glob("*.jsonl")} == expected


@pytest.mark.parametrize(
    "path", verdict_files(), ids=lambda path: f"{path.parent.name}/{path.name}"
)
def test_verdicts_grade_todays_answers(path: Path, runs: dict[Path, dict[str, SavedRun]]) -> None:
    match = NAME.fullmatch(path.name)
    assert match is not None, path.name
    run, field = match["run"], match["field"]
    saved = runs[path.parent][run]
    verdicts = read_human_grades_file(path, field)
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
    assert stale == [], f"{path.name}: the answers changed for {stale}: re-grade them"
    assert verdicts.check_answers(answers, run) == len(expected)


def test_a_changed_answer_is_refused(runs: dict[Path, dict[str, SavedRun]]) -> None:
    """The check above can fail: one answer edited by a character is caught."""
    saved = runs[VERDICTS]["k3_cs800"]
    verdicts = read_human_grades_file(VERDICTS / "k3_cs800.correct.jsonl")
    first = saved.questions[0]
    edited = [replace(first, answer=(first.answer or "") + " "), *saved.questions[1:]]
    answers = {q.id: q.answer for q in edited}
    with pytest.raises(
        FormatError, match=rf"answer_sha256: .*answer of run 'k3_cs800' to {first.id}"
    ):
        verdicts.check_answers(answers, saved.name)
