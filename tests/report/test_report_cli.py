"""``ragaudit report`` without a browser: determinism, configuration, errors."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ragaudit.cli import main

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
