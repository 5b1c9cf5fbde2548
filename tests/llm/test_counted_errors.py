"""Counted errors are visible by name everywhere a run is shown (issue 10 item 1).

A generation that fails for good is a ``generation_error``; a judge that fails is a
``judge_error``.  Both are counted in the saved run's summary (``n_generation_errors``,
``judge_errors``/``n_judge_errors``) and named on the ``run``, ``judge``, ``import``,
``funnel`` and ``report`` outputs; neither ever becomes a number.  The faults are malformed
HTTP-200 replies of the loopback server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ragaudit.llm.testing import MALFORMED, FakeChatServer

from .test_run_integration import (
    ANSWERABLE,
    CORPUS,
    FaultyModel,
    by_id,
    env,  # noqa: F401 - fixture
    invoke,
    load,
    model,  # noqa: F401 - fixture
    run_args,
)


def test_generation_and_judge_errors_are_counted_and_named_in_every_output(
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    model.faults[("generator", "q3")] = [MALFORMED["empty_choices"]]
    model.faults[("sufficiency", "q1")] = [MALFORMED["html"]]
    out = tmp_path / "out"
    ran = invoke(run_args(out, "--llm-max-retries", "0"))
    assert ran.exit_code == 0, ran.output
    assert re.search(r"\n  generation errors +1 \(see each row's 'generation_error'", ran.output)
    assert re.search(r"\n  judge errors +sufficiency 1 ", ran.output)
    run_file = out / "llm.json"
    data = load(run_file)
    assert "error" not in by_id(data)["q3"]  # the old key name is no longer written
    summary = data["summary"]
    assert (summary["n_generation_errors"], summary["n_judge_errors"]) == (1, 1)
    assert summary["judge_errors"] == {"sufficiency": 1} and "n_errors" not in summary

    imported = invoke(["import", str(run_file)])
    assert imported.exit_code == 0, imported.output
    assert "(6 answerable, 2 unanswerable; 1 generation errors, 1 judge errors)" in imported.output

    # funnel: q3 (no answer) is left out by name; q1's stage 2 falls back to the offline
    # evidence judge when its sufficiency judge failed
    funnel = invoke(["funnel", str(run_file), "--format", "json"])
    assert funnel.exit_code == 0, funnel.output
    unjudged = json.loads(funnel.stdout)["unjudged"]
    assert [(u["id"], u["correct"]) for u in unjudged] == [("q3", None)]
    assert unjudged[0]["reason"].startswith("generation error: ")
    assert json.loads(funnel.stdout)["n"] == len(ANSWERABLE)  # counted, never dropped

    judged = tmp_path / "judged.json"
    result = invoke(["judge", str(run_file), "--corpus", str(CORPUS), "--out", str(judged),
                     "--judges", "relevance", "--llm-max-retries", "0", "--no-cache"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert re.search(r"\n  not judged +1 \(generation_error: no answer to judge\)", result.output)
    assert load(judged)["summary"]["n_generation_errors"] == 1

    page = tmp_path / "page.md"
    result = invoke(["report", str(run_file), "--format", "markdown", "--out", str(page),
                     "--resamples", "20"])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert "errors: 1 generation errors (no answer: q3); judge errors: sufficiency 1" in text
    # the question is among the failing questions of the drill-down, with its reason
    assert "| unjudged | 1 | q3 (2-evidence: generation error: request to" in text
    assert "stage died         unjudged at 2-evidence: generation error: " in text

    shown = invoke(["show", str(run_file), "q3"])
    assert shown.exit_code == 0, shown.output
    assert "stage             unjudged at 2-evidence: generation error: " in shown.stdout
    assert re.search(r"\n  answer +\(no answer: .*failed after 1 attempts", shown.stdout)


def test_a_run_whose_every_generation_failed_has_an_undefined_funnel(
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    for qid in [*ANSWERABLE, "q7", "q8"]:
        model.faults[("generator", qid)] = [MALFORMED["null_message"]]
    out = tmp_path / "out"
    ran = invoke(run_args(out, "--llm-max-retries", "0", "--judges", "offline"))
    assert ran.exit_code == 0, ran.output
    assert load(out / "llm.json")["summary"]["n_generation_errors"] == 8
    funnel = invoke(["funnel", str(out / "llm.json")])
    assert funnel.exit_code == 0, funnel.output
    assert (
        "ragaudit: warning: 2 unanswerable question(s) left out of the abstention rate "
        "(no abstention verdict): q7 (generation error: " in funnel.stderr
    )
    assert "UNANSWERABLE QUESTIONS (n=0)" in funnel.stdout
    assert (
        "P(correct) = undefined: all 6 answerable questions are unjudged (generation error)"
        in funnel.stdout
    )
    assert "= 0.000" not in funnel.stdout


def test_the_old_key_error_is_read_as_generation_error(tmp_path: Path) -> None:
    doc = {
        "format": "ragaudit.run",
        "format_version": 1,
        "name": "old",
        "config": {"k": 1},
        "rows": [
            {"id": "q1", "retrieved": [], "error": "HTTP 500", "metrics": {"correct": None}},
            {"id": "q2", "retrieved": [], "error": None, "metrics": {"correct": True}},
        ],
        "summary": {"n_errors": 1},
    }
    source = tmp_path / "old.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    copy = tmp_path / "copy"
    result = invoke(["import", str(source), "--out", str(copy)])
    assert result.exit_code == 0, result.output
    assert "1 generation errors, 0 judge errors" in result.output
    written = load(next(copy.glob("*.json")))
    assert [r["generation_error"] for r in written["rows"]] == ["HTTP 500", None]
    assert "error" not in written["rows"][0] and "n_errors" not in written["summary"]
    assert written["summary"]["n_generation_errors"] == 1
