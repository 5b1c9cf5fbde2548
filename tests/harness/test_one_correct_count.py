"""One correct count over one denominator, whatever the command (issue 20, part 1).

``run``'s summary, ``funnel``, the report's JSON and ``compare`` must print the same
end-to-end correct count over the same denominator (the answerable questions), on the demo and
on a golden set whose keywords are bare short numbers and "No" (the keywords the offline
evidence judge used to drop, losing the question from the funnel).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main

BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"
CORPUS = {
    "leave.md": "# Leave policy\n\nEvery employee receives 24 days of paid leave per year. "
    "Unused leave can be carried over for 6 months.\nParental leave lasts 90 days and is "
    "fully paid.\n",
    "security.md": "# Security policy\n\nCustomer telemetry is Confidential. Staff may not "
    'paste telemetry into public AI assistants: the answer to "may I?" is No.\nPasswords '
    "rotate every 4 hours for admin accounts, and the lockout threshold is 16 failed "
    "attempts.\n",
    "travel.md": "# Travel\n\nEconomy class is the default for flights under 6 hours. Hotel "
    "bookings go through the travel desk.\n",
}
GOLDEN = """\
- id: q1
  question: How many days of paid leave does an employee receive per year?
  answer: 24 days per year.
  sources: [leave]
  keywords: ["24"]
- id: q2
  question: For how many months can unused leave be carried over?
  answer: 6 months.
  sources: [leave]
  keywords: ["6"]
- id: q3
  question: How long does parental leave last?
  answer: 90 days, fully paid.
  sources: [leave]
  keywords: ["90"]
- id: q4
  question: May staff paste customer telemetry into public AI assistants?
  answer: No, telemetry is Confidential.
  sources: [security]
  keywords: ["No"]
- id: q5
  question: What is the lockout threshold for admin accounts?
  answer: 16 failed attempts.
  sources: [security]
  keywords: ["16"]
- id: q6
  question: What is the company's stock ticker?
  answerable: false
- id: q7
  question: How many paid days of leave per year apply to travel?
  answer: Economy class under 6 hours.
  sources: [travel]
  keywords: ["Economy"]
"""


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def counts_everywhere(run_file: Path, printed_run: str) -> dict[str, tuple[int, int]]:
    """``{command: (correct, denominator)}`` as each command reports it."""
    out: dict[str, tuple[int, int]] = {}
    line = re.search(r"\n  end-to-end correct +(\d+)/(\d+) ", printed_run)
    assert line, printed_run
    out["run (printed)"] = (int(line[1]), int(line[2]))
    summary = json.loads(run_file.read_text(encoding="utf-8"))["summary"]["end_to_end_correct"]
    out["run (saved summary)"] = (summary["count"], summary["n"])
    funnel = invoke(["funnel", run_file, "--format", "json", "--resamples", "20"])
    assert funnel.exit_code == 0, funnel.output
    data = json.loads(funnel.stdout)
    out["funnel"] = (data["correct"]["count"], data["correct"]["n"])
    assert data["n"] == data["correct"]["n"]
    report = invoke(["report", run_file, "--format", "json", "--out", "-", "--resamples", "20"])
    assert report.exit_code == 0, report.output
    audit = json.loads(report.stdout)["runs"][0]
    out["report (funnel)"] = (audit["funnel"]["correct"]["count"], audit["funnel"]["n"])
    dashboard = {row["key"]: row for row in audit["dashboard"]}
    out["report (dashboard)"] = (dashboard["correct"]["count"], dashboard["correct"]["n"])
    compare = invoke(["compare", run_file, run_file, "--metric", "correct", "--questions",
                      "answerable", "--format", "json", "--resamples", "200",
                      "--permutations", "200"])  # fmt: skip
    assert compare.exit_code == 0, compare.output
    row = json.loads(compare.stdout)["metrics"][0]
    out["compare"] = (round(row["mean_a"] * row["n"]), row["n"])
    return out


def test_bare_numbers_and_no_lose_no_question_and_every_command_agrees(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    golden = tmp_path / "golden.yaml"
    golden.write_text(GOLDEN, encoding="utf-8")
    ran = invoke(["run", "--corpus", corpus, "--golden", golden, "--k", "1", "--out",
                  tmp_path / "out", "--no-timing"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    run_file = tmp_path / "out" / "k1_cs800.json"

    funnel = json.loads(invoke(["funnel", run_file, "--format", "json"]).stdout)
    # 6 answerable questions (q6 is not): each lands in exactly one place
    placed = [q for ids in funnel["died"].values() for q in ids]
    placed += [u["id"] for u in funnel["unjudged"]]
    assert funnel["n"] == 6
    assert funnel["ok"] + len(placed) == 6 and len(set(placed)) == len(placed)
    # q7's gold document (travel) is not the top-1 chunk (BM25 ranks the leave policy first):
    # it is 1-retrieval, whatever its later verdicts
    assert funnel["died"]["1-retrieval"] == ["q7"]
    assert funnel["stages"][0]["kept"] == 5

    counts = counts_everywhere(run_file, ran.output)
    # by hand: q1-q5 are answered with the one sentence that states the fact; q7 with the
    # leave policy's sentence, which is wrong: 5 correct of 6 answerable questions
    assert set(counts.values()) == {(5, 6)}, counts


def test_the_demo_prints_one_correct_count_everywhere(tmp_path):
    demo = invoke(["demo", "--out", tmp_path / "demo", "--format", "json"])
    assert demo.exit_code == 0, demo.output
    dashboard = {row["key"]: row for row in json.loads(demo.stdout)["runs"][0]["dashboard"]}
    # the demo's k3 run, made again by `run` with the demo's settings, to read what it prints
    ran = invoke(["run", "--corpus", BENCHMARK / "corpus", "--golden", BENCHMARK / "golden.yaml",
                  "--k", "3", "--chunk-size", "800", "--chunk-overlap", "100",
                  "--out", tmp_path / "run", "--no-timing"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    run_file = tmp_path / "run" / "k3_cs800.json"
    counts = counts_everywhere(run_file, ran.output)
    counts["demo dashboard"] = (dashboard["correct"]["count"], dashboard["correct"]["n"])
    # the benchmark's 60 questions hold 54 answerable ones (its README)
    assert len(set(counts.values())) == 1, counts
    assert next(iter(counts.values()))[1] == 54
