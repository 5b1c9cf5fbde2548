"""``ragaudit report`` without a browser: determinism, size, errors, the Wilson interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from statsmodels.stats.proportion import proportion_confint

from ragaudit.cli import main
from ragaudit.reports.html_dashboard import wilson_interval

from .conftest import cli


def test_same_inputs_give_byte_identical_pages(bench: dict[str, Path], tmp_path: Path):
    args = [str(bench["k3"]), str(bench["k6"]), "--labels", str(bench["labels"]),
            "--corpus", str(bench["corpus"])]  # fmt: skip
    for fmt, ext in (("html", "html"), ("markdown", "md")):
        again = tmp_path / f"again.{ext}"
        cli("report", *args, "--format", fmt, "--out", str(again))
        assert again.read_bytes() == bench[ext].read_bytes()


def test_page_names_version_seed_and_configuration(bench: dict[str, Path]):
    page = bench["html"].read_text(encoding="utf-8")
    from ragaudit import __version__

    assert f"ragaudit {__version__}" in page and "seed 0" in page
    for key in ("chunk_size", "chunk_overlap", "retriever", "generator", "judges"):
        assert f"<code>{key}</code>" in page


def test_bad_run_file_is_one_line_exit_2(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "ragaudit.run"', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ragaudit: error: {bad}:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("count", "n"), [(43, 54), (0, 7), (7, 7), (1, 2), (30, 1000)])
def test_wilson_interval_matches_statsmodels(count: int, n: int):
    low, high = proportion_confint(count, n, alpha=0.05, method="wilson")
    assert wilson_interval(count, n) == pytest.approx((low, high), abs=1e-12)
