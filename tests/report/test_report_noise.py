"""``ragaudit report --cluster-by / --human`` and the demo's clustering line (issue 14).

Expected numbers come from statsmodels (CR1 design effect) and ppi-python (PPI++), never from
ragaudit's own output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import statsmodels.api as sm
import yaml
from click.testing import CliRunner
from ppi_py import ppi_mean_ci

from ragaudit.cli import main

from .conftest import cli

HUMAN = Path(__file__).parents[1] / "data" / "stats" / "human_k3.yaml"


def _rows(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["rows"]


def _design_effect(rows: list[dict], metric: str) -> float:
    rows = [r for r in rows if r["answerable"]]
    y = np.array([float(r["metrics"][metric]) for r in rows])
    groups = np.unique([r["gold_docs"][0] for r in rows], return_inverse=True)[1]
    ones = np.ones(y.size)
    clustered = sm.OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
    return float((clustered / sm.OLS(y, ones).fit().bse[0]) ** 2)


def test_report_shows_clustering_and_the_calibrated_number(bench: dict[str, Path], tmp_path):
    out = tmp_path / "r.md"
    cli("report", str(bench["k3"]), str(bench["k6"]), "--cluster-by", "source",
        "--human", str(HUMAN), "--format", "markdown", "--out", str(out))  # fmt: skip
    text = out.read_text(encoding="utf-8")
    rows = _rows(bench["k3"])
    for run in ("k3", "k6"):
        assert f"## Where the noise comes from: {run}" in text
    deff = _design_effect(rows, "ndcg@k")
    assert deff > 1.1
    n = sum(r["answerable"] for r in rows)
    assert f"design effect of ndcg@k {deff:.2f} ({n / deff:.2g} independent questions" in text
    assert "above 1.1: questions that share a source are not independent" in text
    # PPI++ over the k3 run: human verdicts on q01-q16, the judge on every other question.
    human = {k: float(v) for k, v in yaml.safe_load(HUMAN.read_text(encoding="utf-8")).items()}
    judge = {r["id"]: float(r["metrics"]["correct"]) for r in rows}
    labelled = sorted(human)
    low, high = ppi_mean_ci(
        np.array([human[q] for q in labelled]),
        np.array([judge[q] for q in labelled]),
        np.array([v for q, v in judge.items() if q not in human]),
        alpha=0.05,
    )
    expected = (
        f"correct calibrated (PPI++) {(low[0] + high[0]) / 2:.3f} [{low[0]:.3f}, {high[0]:.3f}]"
    )
    assert expected in text
    assert text.count("calibrated (PPI++)") == 1  # one --human: only the first run
    assert "judge only " in text and "human labels only " in text


def test_report_html_has_the_noise_sections(bench: dict[str, Path], tmp_path):
    out = tmp_path / "r.html"
    cli("report", str(bench["k3"]), "--cluster-by", "source", "--human", str(HUMAN),
        "--out", str(out))  # fmt: skip
    page = out.read_text(encoding="utf-8")
    assert "<h2>Where the noise comes from: k3</h2>" in page
    assert "<th>metric</th>" in page and "clustered 95%" in page
    assert "calibrated (PPI++)" in page and "<pre>" in page


def test_report_without_the_options_has_no_noise_section(bench: dict[str, Path]):
    assert "Where the noise comes from" not in bench["md"].read_text(encoding="utf-8")


def test_more_human_files_than_runs_is_one_line_exit_2(bench: dict[str, Path], tmp_path):
    result = CliRunner().invoke(
        main, ["report", str(bench["k3"]), "--human", str(HUMAN), "--human", str(HUMAN),
               "--out", str(tmp_path / "r.html")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "ragaudit: error: --human: expected at most one file of human verdicts per run (1), "
        "found 2\n"
    )


def test_unknown_cluster_field_is_one_line_exit_2(bench: dict[str, Path], tmp_path):
    result = CliRunner().invoke(
        main,
        ["report", str(bench["k3"]), "--cluster-by", "nope", "--out", str(tmp_path / "r.html")],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("ragaudit: error: --cluster-by nope: no question of run")
    assert result.stderr.count("\n") == 1


def test_demo_says_what_clustering_by_source_does(tmp_path):
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    deff = _design_effect(_rows(tmp_path / "demo" / "k3_cs800.json"), "ndcg@k")
    text = " ".join(result.stdout.split())
    assert f"clustering by source (14 clusters): design effect of ndcg@k {deff:.2f} (" in text


def test_noise_sections_fit_a_phone_screen(bench: dict[str, Path], open_page, tmp_path):
    out = tmp_path / "r.html"
    cli("report", str(bench["k3"]), "--cluster-by", "source", "--human", str(HUMAN),
        "--out", str(out))  # fmt: skip
    loaded = open_page(out, width=390)
    page = loaded.page
    assert page.locator("h2", has_text="Where the noise comes from: k3").count() == 1
    # Wide tables and the calibration block scroll in their own box, not the page.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert loaded.console_errors == [] and loaded.network_requests == []
