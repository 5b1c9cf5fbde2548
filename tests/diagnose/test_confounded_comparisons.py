"""Confounded comparisons named (issue 22 item 4): ``compare``, ``ragaudit.compare_runs`` and
``assert_not_worse`` list every configuration field that differs between two saved runs, say
when the effect cannot be attributed, and refuse runs on another golden set unless allowed.

The two runs are made by ``ragaudit run`` on the bundled benchmark, as the issue's user did;
the expected differing fields are the options passed to it (k 3 vs 8, chunk size 800 vs 400).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main
from ragaudit.exceptions import InputError
from ragaudit.testing import assert_not_worse

BENCH = Path(ragaudit.__file__).parent / "benchmark"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    cli = CliRunner()
    made = {}
    for name, options in {
        "k3_cs800": ["--k", "3", "--chunk-size", "800"],
        "k8_cs400": ["--k", "8", "--chunk-size", "400", "--chunk-overlap", "100"],
        "k6_cs800": ["--k", "6", "--chunk-size", "800"],
    }.items():
        result = cli.invoke(main, ["run", "--corpus", str(BENCH / "corpus"), "--golden",
                                   str(BENCH / "golden.yaml"), *options, "--no-timing",
                                   "--out", str(out / name)])  # fmt: skip
        assert result.exit_code == 0, result.output
        (made[name],) = (out / name).glob("*.json")
    other = json.loads(made["k8_cs400"].read_text())
    other["config"]["golden_sha256"] = "f" * 64  # the same questions' file, edited: another set
    made["other_golden"] = out / "other_golden.json"
    made["other_golden"].write_text(json.dumps(other))
    return made


def test_compare_names_k_and_chunk_size_and_says_they_cannot_be_attributed(runs):
    result = CliRunner().invoke(
        main, ["compare", str(runs["k3_cs800"]), str(runs["k8_cs400"]), "-m", "correct"]
    )
    assert result.exit_code == 0, result.output
    assert "differs: k (3 vs 8), chunk_size (800 vs 400)" in result.output
    assert "k and chunking both differ, so the effect cannot be attributed to either" in (
        result.output
    )


def test_one_variable_is_listed_without_a_confounding_warning(runs):
    comparison = ragaudit.compare_runs(runs["k3_cs800"], runs["k6_cs800"], "correct")
    assert comparison.config_differences.design_variables == ("k",)
    text = ragaudit.reports.renderer.render(comparison.to_report(), "table")
    assert "differs: k (3 vs 6)" in text and "cannot be attributed" not in text
    assert comparison.to_dict()["config_differences"]["confounded"] is False


def test_another_golden_set_is_refused_then_accepted_with_the_flag(runs):
    args = ["compare", str(runs["k3_cs800"]), str(runs["other_golden"]), "-m", "correct"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    (line,) = [x for x in refused.output.splitlines() if x]
    assert "golden set differs" in line and "not the same experiment" in line
    assert "--allow-different-data" in line
    accepted = CliRunner().invoke(main, [*args, "--allow-different-data"])
    assert accepted.exit_code == 0, accepted.output
    assert "golden_sha256" in accepted.output and "not the same experiment" in accepted.output
    with pytest.raises(InputError, match="golden set differs"):
        ragaudit.compare_runs(runs["k3_cs800"], runs["other_golden"], "correct")
    with pytest.raises(InputError, match="golden set differs"):
        assert_not_worse(runs["k3_cs800"], runs["other_golden"], ["correct"])
    kept = ragaudit.compare_runs(
        runs["k3_cs800"], runs["other_golden"], "correct", allow_different_data=True
    )
    assert kept.config_differences.data_variables == ("golden set",)


def test_the_gate_failure_lists_the_differences(runs):
    worse = json.loads(runs["k8_cs400"].read_text())  # k 8, chunk size 400, every answer wrong
    worse["name"] = "worse"
    worse.pop("summary", None)
    for row in worse["rows"]:
        row["metrics"]["correct"] = False
    path = runs["k3_cs800"].parent / "worse.json"
    path.write_text(json.dumps(worse))
    with pytest.raises(AssertionError) as failed:
        assert_not_worse(runs["k3_cs800"], path, ["correct"])
    head = str(failed.value).split("\n\n")[0]
    assert "differs: k (3 vs 8), chunk_size (800 vs 400)" in head
    assert "cannot be attributed to either" in head


def test_the_baseline_option_gets_the_differences_too(runs):
    result = CliRunner().invoke(
        main, ["compare", "--baseline", str(runs["k3_cs800"]), str(runs["k8_cs400"]),
               "-m", "correct", "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["config_differences"]["design_variables"] == ["k", "chunking"]
    assert doc["config_differences"]["confounded"] is True


def test_the_report_names_the_differences_and_compares_the_funnels(runs, tmp_path):
    args = ["report", str(runs["k3_cs800"]), str(runs["k8_cs400"])]
    pages = {}
    for fmt in ("html", "markdown", "table", "json"):
        out = tmp_path / f"report.{fmt}"
        result = CliRunner().invoke(main, [*args, "--format", fmt, "--out", str(out)])
        assert result.exit_code == 0, result.output
        pages[fmt] = out.read_text()
    for fmt in ("html", "markdown", "table"):
        assert "chunk_size (800 vs 400)" in pages[fmt], fmt
        assert "cannot be attributed to either" in pages[fmt], fmt
        title = "funnels compared (b = k8_cs400 vs a = k3_cs800; 54 answerable questions)"
        assert title in pages[fmt].lower(), fmt
    (pair,) = json.loads(pages["json"])["comparisons"]
    assert pair["config_differences"]["design_variables"] == ["k", "chunking"]
    # the funnels compared on the page are those of `ragaudit funnel A B`
    funnel = CliRunner().invoke(
        main, ["funnel", str(runs["k3_cs800"]), str(runs["k8_cs400"]), "--format", "json"]
    )
    assert funnel.exit_code == 0, funnel.output
    compared = json.loads(funnel.stdout)
    # funnel A B adds judged@k of both runs: the page's, run by run
    judged = compared.pop("judged")
    page_runs = json.loads(pages["json"])["runs"]
    assert [r["doc"] for r in judged["runs"]] == [r["judged"]["doc"] for r in page_runs]
    assert pair["funnels"] == compared
    moved = [(m["id"], m["a"], m["b"]) for m in pair["funnels"]["moved"]]
    for qid, a, b in moved:
        assert f"{qid}" in pages["table"].split("MOVED BETWEEN STAGES")[1] and a != b


def test_the_report_refuses_another_golden_set_unless_allowed(runs, tmp_path):
    args = ["report", str(runs["k3_cs800"]), str(runs["other_golden"]), "--format", "json",
            "--out", str(tmp_path / "r.json")]  # fmt: skip
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2 and "golden set differs" in refused.output
    assert not (tmp_path / "r.json").exists()
    accepted = CliRunner().invoke(main, [*args, "--allow-different-data"])
    assert accepted.exit_code == 0, accepted.output
    with pytest.raises(InputError, match="golden set differs"):
        ragaudit.audit([runs["k3_cs800"], runs["other_golden"]], n_resamples=10)


def test_different_judges_are_named_as_different_instruments():
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.confounding import config_differences
    from ragaudit.reports.confounding import confounding_lines

    def run(name: str, model: str) -> SavedRun:
        config = {"k": 3, "llm_judges": {"model": model, "versions": {"correct": "v2"}}}
        return SavedRun.from_dict({"name": name, "config": config, "rows": []})

    lines = confounding_lines(config_differences(run("a", "j1"), run("b", "j2")))
    assert lines[0] == "differs: llm_judges.model (j1 vs j2)"
    assert any("judged metrics are measured with different instruments" in x for x in lines)
    assert not any("cannot be attributed" in x for x in lines)  # one variable: the judges
