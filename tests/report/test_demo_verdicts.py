"""The demo's comparison under issue 21: the verdicts follow the exact test, with clusters too."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import cli


def _rows(*args: str) -> dict[str, dict]:
    doc = json.loads(cli("compare", *args, "--questions", "answerable", "--format", "json"))
    return {row["metric"]: row for row in doc["metrics"]}


def test_the_demos_precision_drop_stays_significant_when_clustered(bench: dict[str, Path]):
    k3, k6 = str(bench["k3"]), str(bench["k6"])
    plain = _rows(k3, k6)["precision@k"]
    clustered = _rows(k3, k6, "--cluster-by", "source")["precision@k"]
    for row in (plain, clustered):
        assert row["verdict"] == "SIGNIFICANT"
        assert row["ci_high"] < 0  # the interval excludes 0, as the verdict says
    assert clustered["ci_method"] == "cluster sign-flip inversion"
    # every source's sum of differences is negative: p = 2 / 2^G over G sources
    doc = json.loads(
        cli("compare", k3, k6, "--questions", "answerable", "--cluster-by", "source",
            "--format", "json")
    )  # fmt: skip
    (clustered_row,) = [m for m in doc["clustered"]["metrics"] if m["metric"] == "precision@k"]
    assert clustered["p_value"] == 2 / 2 ** clustered_row["n_clusters"]


def test_every_demo_row_agrees_with_its_interval(bench: dict[str, Path]):
    for extra in ((), ("--cluster-by", "source")):
        for row in _rows(str(bench["k3"]), str(bench["k6"]), *extra).values():
            excludes = row["ci_low"] > 0 or row["ci_high"] < 0
            assert excludes == (row["p_value"] < 0.05), row  # every row inverts its test
            assert "power" not in row and "mde_assumption" in row
