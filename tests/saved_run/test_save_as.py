"""The commands and functions that write a saved run write Parquet when asked (``--save-as
parquet``, ``save_as="parquet"``), through the one writer, and the run read back from that
file is the model the JSON file of the same run gives (the oracle: the JSON reader).

Fixtures: the harness test corpus and golden set (tests/data/harness, hand-written) and the
inspect_ai logs written by inspect_ai itself (tests/fixtures/inspect).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.exceptions import InputError
from ragaudit.pipeline import inspect_import
from ragaudit.pipeline.config import RunConfig, saved_run_path
from ragaudit.pipeline.inspect_import import import_inspect_log
from ragaudit.pipeline.live import evaluate_pipeline

from .conftest import model_shape

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "data" / "harness"
RUN = ["run", "--corpus", str(DATA / "corpus"), "--golden", str(DATA / "golden.yaml"),
       "--k", "2", "--chunk-size", "200", "--chunk-overlap", "40", "--no-timing"]  # fmt: skip


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def same_model(parquet_path: Path, json_path: Path) -> None:
    """The file is Parquet with the run's header in its schema, and reads as the JSON does."""
    assert parquet_path.read_bytes()[:4] == b"PAR1"
    assert b"ragaudit.run" in pq.read_schema(parquet_path).metadata
    got = load_saved_run(parquet_path).replace(path=None)
    assert model_shape(got) == model_shape(load_saved_run(json_path).replace(path=None))


def test_run_save_as_parquet_writes_the_run_json_would_hold(tmp_path):
    assert invoke(*RUN, "--out", tmp_path / "j").exit_code == 0
    result = invoke(*RUN, "--out", tmp_path / "p", "--save-as", "parquet")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["k2_cs200.parquet"]
    same_model(tmp_path / "p" / "k2_cs200.parquet", tmp_path / "j" / "k2_cs200.json")
    # every command reads it: compare against the JSON of the same run finds no difference
    out = invoke("compare", tmp_path / "j" / "k2_cs200.json", tmp_path / "p" / "k2_cs200.parquet",
                 "--format", "json")  # fmt: skip
    assert out.exit_code == 0, out.output


def test_run_limit_and_checkpoint_names_follow_the_format(tmp_path):
    assert saved_run_path(tmp_path, "k2", 3, "parquet").name == "k2.limit3.parquet"
    result = invoke(*RUN, "--out", tmp_path, "--save-as", "parquet", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k2_cs200.limit3.parquet"]
    assert len(load_saved_run(tmp_path / "k2_cs200.limit3.parquet").rows) == 3


def test_import_copies_a_json_run_as_parquet(tmp_path):
    assert invoke(*RUN, "--out", tmp_path).exit_code == 0
    source = tmp_path / "k2_cs200.json"
    result = invoke("import", source, "--out", tmp_path / "copy", "--save-as", "parquet")
    assert result.exit_code == 0, result.output
    same_model(tmp_path / "copy" / "k2_cs200.parquet", source)


def test_import_save_as_without_out_is_refused_in_one_line(tmp_path):
    assert invoke(*RUN, "--out", tmp_path).exit_code == 0
    result = invoke("import", tmp_path / "k2_cs200.json", "--save-as", "parquet")
    assert result.exit_code == 2
    assert result.output == (
        "ragaudit: error: --save-as: only with --out (--from ragaudit writes nothing without it)\n"
    )


def test_an_unknown_format_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(InputError, match="save_as: expected one of json, parquet, found 'csv'"):
        RunConfig(DATA / "corpus", DATA / "golden.yaml", save_as="csv")
    result = invoke(*RUN, "--out", tmp_path, "--save-as", "csv")
    assert result.exit_code == 2 and not any(tmp_path.iterdir())


def test_evaluate_pipeline_save_as_parquet(tmp_path):
    def answer(question):
        return {"answer": "Staff get 25 days of leave.", "contexts": []}

    options = dict(corpus=DATA / "corpus", k=2, chunk_size=200, chunk_overlap=40,
                   record_latency=False, max_workers=1)  # fmt: skip
    as_json = evaluate_pipeline(answer, DATA / "golden.yaml", out_dir=tmp_path / "j", **options)
    as_parquet = evaluate_pipeline(
        answer, DATA / "golden.yaml", out_dir=tmp_path / "p", save_as="parquet", **options
    )
    assert Path(as_parquet.path).name == "answer.parquet"
    same_model(Path(as_parquet.path), Path(as_json.path))


def test_inspect_import_save_as_parquet(tmp_path, monkeypatch):
    # the log's JSON form read as JSON (inspect_ai, an optional extra, is not needed for it)
    def read_log(file):
        return json.loads(Path(file).read_text(encoding="utf-8"))

    monkeypatch.setattr(inspect_import, "read_inspect_log", read_log)
    log = TESTS / "fixtures" / "inspect" / "sys-a.json"
    as_json = import_inspect_log(log, out_dir=tmp_path / "j")
    as_parquet = import_inspect_log(log, out_dir=tmp_path / "p", save_as="parquet")
    assert Path(as_parquet.saved.path).name == "sys-a.parquet"
    same_model(Path(as_parquet.saved.path), Path(as_json.saved.path))
