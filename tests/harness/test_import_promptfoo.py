"""``import --from promptfoo``: results written by promptfoo 0.120.27's own CLI with its offline
``echo`` provider and a ``file://`` provider that reports tokens and cost
(tests/fixtures/promptfoo/, scripts/make_promptfoo_fixtures.py) become one saved run per
(prompt, provider), paired by test id: compare's exact verdict matches scipy's binomial test on
the discordant pairs counted from the raw results."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main

from .conftest import exact_mcnemar_verdict

RESULTS = Path(__file__).resolve().parents[1] / "fixtures" / "promptfoo"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def raw(name="results"):
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))["results"]["results"]


def passes(results, prompt):
    """``{test id: 0/1}`` of one prompt's ``success``, straight from the file."""
    return {r["vars"]["id"]: int(r["success"]) for r in results if r["prompt"]["label"] == prompt}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    files = (RESULTS / "results.json", RESULTS / "priced.json")
    made = invoke("import", "--from", "promptfoo", *files, "--out", out, "--cluster-by", "topic",
                  "--format", "json")  # fmt: skip
    assert made.exit_code == 0, made.output
    return out


def test_one_saved_run_per_prompt_and_provider(imported):
    names = sorted(p.name for p in imported.glob("*.json"))
    assert names == ["priced.json", *(f"results.sys-{s}.json" for s in "abd")]


def test_compare_of_two_prompts_is_the_exact_mcnemar_test(imported):
    seen = set()
    for a, b in (("sys-a", "sys-b"), ("sys-a", "sys-d"), ("sys-b", "sys-d")):
        left, right = passes(raw(), a), passes(raw(), b)
        assert left.keys() == right.keys() and len(left) == 40
        out = invoke("compare", imported / f"results.{a}.json", imported / f"results.{b}.json",
                     "-m", "pass", "--format", "json")  # fmt: skip
        assert out.exit_code == 0, out.output
        seen.add(exact_mcnemar_verdict(out.output, left, right))
    assert "SIGNIFICANT" in seen and len(seen) == 2  # both sides of the rule are seen


def test_assertions_latency_tokens_and_cost_are_promptfoos_own(imported):
    results = raw("priced")
    rows = {r["id"]: r for r in json.loads((imported / "priced.json").read_text())["rows"]}
    assert len(rows) == len(results) == 40
    for r in results:
        row = rows[r["vars"]["id"]]
        assert row["latency_ms"]["total"] == r["latencyMs"]
        assert row["usage"]["cost_usd"] == r["cost"]
        assert row["tags"] == [r["testCase"]["metadata"]["topic"]]
        assert row["metrics"]["pass"] == float(r["success"])
        if r["failureReason"] == 2:  # the provider failed: kept, with its error, answered 0
            assert row["generation_error"] == r["error"] and row["answer"] is None
            assert row["metrics"]["answered"] == 0.0 and row["metrics"]["equals"] is None
            continue
        usage = r["response"]["tokenUsage"]
        assert (row["usage"]["input_tokens"], row["usage"]["output_tokens"]) == (
            usage["prompt"], usage["completion"])  # fmt: skip
        components = r["gradingResult"]["componentResults"]
        assertions = {c["assertion"]["type"]: float(c["pass"]) for c in components}
        assert {k: row["metrics"][k] for k in assertions} == assertions
        assert row["generation_error"] is None  # a failed assertion's `error` is not a failure
    out = invoke("import", "--from", "promptfoo", RESULTS / "priced.json", "--out",
                 imported / "again", "--format", "json")  # fmt: skip
    [made] = json.loads(out.output)["imports"]
    numbers = {n["key"]: n for n in made["numbers"]}
    latencies = [r["latencyMs"] for r in results]
    assert numbers["latency_p95"]["value"] == pytest.approx(np.quantile(latencies, 0.95), abs=1e-9)
    assert numbers["cost_per_question"]["value"] == pytest.approx(
        np.mean([r["cost"] for r in results]), rel=1e-12)  # fmt: skip
    assert numbers["answered"]["value"] == pytest.approx(39 / 40) and made["errors"] == ["s13"]


def test_compare_cluster_by_tag_uses_the_test_metadata(imported):
    out = invoke("compare", imported / "results.sys-a.json", imported / "results.sys-d.json",
                 "-m", "pass", "--cluster-by", "tag", "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["clustered"] is not None


def test_retrieval_options_are_refused(tmp_path):
    out = invoke("import", "--from", "promptfoo", RESULTS / "results.json", "--k", 3)
    assert out.exit_code == 2
    assert out.output.strip() == (
        "ragaudit: error: --k: not used with --from promptfoo (its results have no retrieval)"
    )


def test_promptfoo_repeat_is_a_repeated_run_paired_by_test(tmp_path):
    """repeated.json: ``promptfoo eval --repeat 3`` with a provider wrong on some calls
    (scripts/make_promptfoo_fixtures.py).  promptfoo writes each run as its own result (the
    same testCase at consecutive testIdx); each test is one question with 3 repeats, in
    testIdx order, and compare pairs the question means with results.json's sys-a."""
    results = raw("repeated")
    expected: dict[str, list[int]] = {}
    for r in sorted(results, key=lambda r: r["testIdx"]):
        expected.setdefault(r["vars"]["id"], []).append(int(r["success"]))
    assert {len(v) for v in expected.values()} == {3} and len(expected) == 40
    made = invoke("import", "--from", "promptfoo", RESULTS / "repeated.json", "--out", tmp_path,
                  "--format", "json")  # fmt: skip
    assert made.exit_code == 0, made.output
    from ragaudit.data.records import load_saved_run

    run = load_saved_run(tmp_path / "repeated.json")
    assert run.repeats == 3 and run.ids == list(expected)
    assert run.repeat_outcomes("pass").tolist() == list(expected.values())
    assert run.config["repeat_seeds"] is None
    flaky = [q for q, v in expected.items() if 0 < sum(v) < 3]
    assert flaky  # the fixture's repeats disagree on some questions
    a = invoke("import", "--from", "promptfoo", RESULTS / "results.json", "--out", tmp_path,
               "--format", "json")  # fmt: skip
    assert a.exit_code == 0, a.output
    out = invoke("compare", tmp_path / "results.sys-a.json", tmp_path / "repeated.json",
                 "-m", "pass", "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output
    row = json.loads(out.output)["metrics"][0]
    means = {q: sum(v) / 3 for q, v in expected.items()}
    single = passes(raw(), "sys-a")
    assert row["n"] == 40
    assert row["mean_b"] == pytest.approx(np.mean(list(means.values())))
    assert row["diff"] == pytest.approx(np.mean([means[q] - single[q] for q in expected]))


def test_a_test_id_given_to_two_different_tests_is_still_refused(tmp_path):
    document = json.loads((RESULTS / "results.json").read_text(encoding="utf-8"))
    same = [r for r in document["results"]["results"] if r["prompt"]["label"] == "sys-a"]
    first, second = same[:2]
    assert first["vars"]["id"] != second["vars"]["id"]
    second["vars"] = {**second["vars"], "id": first["vars"]["id"]}
    second["testCase"]["vars"] = second["vars"]
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = invoke("import", "--from", "promptfoo", path, "--out", tmp_path / "o")
    assert out.exit_code == 2 and "appears twice" in out.output, out.output


def _identical_first_two_tests(tests_listed=True):
    """results.json with tests 1 and 2 made identical (no vars.id, same content), as a
    config with two copies of a test writes them, without --repeat."""
    document = json.loads((RESULTS / "results.json").read_text(encoding="utf-8"))
    for result in document["results"]["results"]:
        result["vars"] = {k: v for k, v in result["vars"].items() if k != "id"}
        result["testCase"]["vars"] = result["vars"]
    by_slot = {}
    for result in document["results"]["results"]:
        by_slot.setdefault(result["promptIdx"], {})[result["testIdx"]] = result
    for slots in by_slot.values():
        slots[1]["testCase"] = json.loads(json.dumps(slots[0]["testCase"]))
        slots[1]["vars"] = slots[1]["testCase"]["vars"]
    tests = document["config"]["tests"]
    tests[1] = tests[0]
    if not tests_listed:
        document["config"]["tests"] = "file://tests.yaml"
    return document


def test_two_identical_tests_without_repeat_are_two_questions(tmp_path):
    from ragaudit.data.promptfoo import read_promptfoo

    path = tmp_path / "twins.json"
    path.write_text(json.dumps(_identical_first_two_tests()), encoding="utf-8")
    _, systems = read_promptfoo(path)
    assert len(systems) == 3
    for system in systems:
        assert [r["id"] for r in system.rows] == [f"test{n}" for n in range(1, 41)]
        assert not any("repeats" in r for r in system.rows)  # R = 1
        assert system.rows[0]["question"] == system.rows[1]["question"]


def test_identical_tests_without_a_list_of_tests_are_refused_by_result(tmp_path):
    path = tmp_path / "twins.json"
    path.write_text(json.dumps(_identical_first_two_tests(False)), encoding="utf-8")
    out = invoke("import", "--from", "promptfoo", path, "--out", tmp_path / "o")
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert re.search(r"twins\.json: results\.results\[\d+\]\.testCase: the same test as testIdx 0",
                     out.output), out.output  # fmt: skip


def test_a_repeat_block_holding_another_test_is_refused(tmp_path):
    document = json.loads((RESULTS / "repeated.json").read_text(encoding="utf-8"))
    results = document["results"]["results"]
    i = next(i for i, r in enumerate(results) if r["testIdx"] == 4)  # s02's second run
    other = next(r for r in results if r["testIdx"] == 0)
    results[i]["testCase"] = other["testCase"]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = invoke("import", "--from", "promptfoo", path, "--out", tmp_path / "o")
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert f"results.results[{i}].testCase: expected the same test as testIdx 3" in out.output


@pytest.mark.parametrize("cut", [1, 0])
def test_a_missing_repeat_keeps_every_run_in_its_place(tmp_path, cut):
    """repeated.json with s02's run ``cut`` (testIdx 3 + cut) removed: that repeat is a
    generation error in its place, and the runs after it keep their own repeat numbers."""
    from ragaudit.data.records import load_saved_run

    document = json.loads((RESULTS / "repeated.json").read_text(encoding="utf-8"))
    results = document["results"]["results"]
    runs = {r["testIdx"]: r for r in results if r["vars"]["id"] == "s02"}
    results.remove(runs[3 + cut])
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "out"
    made = invoke("import", "--from", "promptfoo", path, "--out", out, "--format", "json")
    assert made.exit_code == 0, made.output
    run = load_saved_run(out / "cut.json")
    i = run.ids.index("s02")
    assert run.repeat(cut).questions[i].generation_error == f"repeat {cut}: not in the file"
    assert run.repeat(2).questions[i].answer == runs[5]["response"]["output"]
    outcomes = run.repeat_outcomes("pass")[i]
    assert np.isnan(outcomes[cut]) and outcomes[2] == int(runs[5]["success"])
