"""``ragaudit show``: one question at a time, the same stages as ``ragaudit funnel``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

BENCH = "src/ragaudit/benchmark"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("show")
    args = ["run", "--corpus", f"{BENCH}/corpus", "--golden", f"{BENCH}/golden.yaml",
            "--k", "3", "--out", str(out), "--no-timing"]  # fmt: skip
    assert CliRunner().invoke(main, args).exit_code == 0
    path = out / "k3_cs800.json"
    funnel = CliRunner().invoke(main, ["funnel", str(path), "--format", "json"])
    return str(path), json.loads(path.read_text()), json.loads(funnel.stdout)


def show(*args):
    result = CliRunner().invoke(main, ["show", *args])
    assert result.exit_code == 0, result.output
    return result


def test_one_question_shows_what_the_file_holds(bench_run):
    path, saved, _ = bench_run
    row = next(r for r in saved["rows"] if r["id"] == "q21")
    data = json.loads(show(path, "q21", "--format", "json").stdout)
    (view,) = data["questions"]
    assert view["qid"] == "q21" and view["stage"] == "3-refusal"
    assert view["question"] == row["question"]
    assert view["reference_answer"] == row["reference_answer"]
    assert view["answer"] == row["answer"]
    ranked = sorted(row["retrieved"], key=lambda r: r["rank"])[: saved["config"]["k"]]
    assert [c["chunk_id"] for c in view["chunks"]] == [r["chunk_id"] for r in ranked]
    assert [c["gold_doc"] for c in view["chunks"]] == [
        r["doc_id"] in row["gold_docs"] for r in ranked
    ]
    assert dict(view["judges"])["abstained"] == "true"
    text = show(path, "q21", "--corpus", f"{BENCH}/corpus").stdout
    assert row["question"] in text and "QUESTION (q21, 3-refusal)" in text
    assert "Passwords must be at least 14 characters" in text  # the gold chunk's text


@pytest.mark.parametrize("stage", ["2-evidence", "3-refusal", "4-generation"])
def test_stage_selects_what_the_funnel_says_died_there(bench_run, stage):
    path, _, funnel = bench_run
    data = json.loads(show(path, "--stage", stage, "--format", "json").stdout)
    assert [q["qid"] for q in data["questions"]] == funnel["died"][stage]
    assert {q["stage"] for q in data["questions"]} <= {stage, f"{stage} (correct by luck)"}


def test_failures_are_every_question_not_ok(bench_run):
    path, saved, funnel = bench_run
    data = json.loads(show(path, "--failures", "--format", "json").stdout)
    died = {q for ids in funnel["died"].values() for q in ids}
    died |= set(funnel["unanswerable"]["answered_ids"])
    order = [r["id"] for r in saved["rows"]]
    assert [q["qid"] for q in data["questions"]] == [q for q in order if q in died]


def test_unknown_id_is_one_line_exit_2(bench_run):
    path, _, _ = bench_run
    result = CliRunner().invoke(main, ["show", path, "nope"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ragaudit: error: {path}: question id: expected ids")
    assert result.stderr.rstrip().endswith("found 'nope'")


def test_long_chunk_text_is_shown_around_the_evidence(bench_run):
    """q14's answer chunk (the FAQ) states "8 days" far past the first 240 characters: the
    excerpt is cut around it, and the cuts are marked."""
    path = bench_run[0]
    text = show(path, "q14", "--corpus", f"{BENCH}/corpus").stdout
    chunk_lines = text.split("  [3] ", 1)[1].split("\n\n", 1)[0]
    flat = " ".join(chunk_lines.split())
    assert flat.startswith("...") and flat.endswith("...")
    assert "up to 8 days" in flat


def test_unjudged_questions_have_their_own_stage_and_a_right_answer_is_no_failure(tmp_path):
    def row(qid, evidence, correct, doc="G"):
        return {"id": qid, "answerable": True, "gold_docs": ["G"], "question": f"{qid}?",
                "retrieved": [{"chunk_id": f"{doc}#0", "doc_id": doc, "rank": 1}],
                "answer": "an answer", "judges": {"abstained": False, "correct": correct,
                                                  "evidence_in_context": evidence}}  # fmt: skip

    run = {"format": "ragaudit.run", "format_version": 1, "name": "hand", "config": {"k": 1},
           "rows": [row("q1", True, True), row("q2", None, True), row("q3", None, False),
                    row("q4", None, True, doc="X")]}  # fmt: skip
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    # by hand: q1 ok; q2 and q3 unjudged at stage 2 (q2 answered right, q3 wrong); q4's gold
    # document was not retrieved: 1-retrieval (correct by luck), never unjudged
    views = json.loads(show(str(path), "--format", "json").stdout)["questions"]
    stages = {v["qid"]: v["stage"] for v in views}
    assert stages == {
        "q1": "ok",
        "q2": "unjudged at 2-evidence, answered correctly: no evidence-in-context verdict",
        "q3": "unjudged at 2-evidence: no evidence-in-context verdict",
        "q4": "1-retrieval (correct by luck)",
    }
    unjudged = json.loads(show(str(path), "--stage", "unjudged", "--format", "json").stdout)
    assert [v["qid"] for v in unjudged["questions"]] == ["q2", "q3"]
    failures = json.loads(show(str(path), "--failures", "--format", "json").stdout)
    assert [v["qid"] for v in failures["questions"]] == ["q3"]


def test_library_selection_is_what_show_prints(tmp_path):
    """`ragaudit show` is parse -> diagnose.drilldown.select_questions -> render: the library
    call's views, rendered, are the command's JSON."""
    import json

    from click.testing import CliRunner

    from ragaudit.cli import main
    from ragaudit.data.records import load_saved_run
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.drilldown import select_questions
    from ragaudit.reports.renderer import render
    from ragaudit.reports.show import show_report

    rows = [
        {"id": "q1", "gold_docs": ["d"], "retrieved": [{"chunk_id": "d#0", "doc_id": "d"}]},
        {"id": "q2", "gold_docs": ["d"], "retrieved": [{"chunk_id": "e#0", "doc_id": "e"}]},
        {"id": "q3", "gold_docs": ["d"], "retrieved": [{"chunk_id": "f#0", "doc_id": "f"}]},
    ]
    data = {"format": "ragaudit.run", "format_version": 1, "name": "r", "config": {"k": 1},
            "rows": rows}  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps(SavedRun.from_dict(data).to_dict()))
    k, views = select_questions(load_saved_run(path), stage="1-retrieval")
    assert [v.qid for v in views] == ["q2", "q3"]  # by hand: only q1 retrieved its gold doc
    out = CliRunner().invoke(
        main, ["show", str(path), "--stage", "1-retrieval", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == json.loads(
        render(
            show_report(
                "r", k, views, note=("pass --corpus DIR to see each retrieved chunk's text")
            ),
            "json",
        )
    )
