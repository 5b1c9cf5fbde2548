"""The frozen judge probes v2 and v3 (benchmarks/probes/): their schema, never the judges' accuracy.

The agreement of the offline judges with the probes is reported by
``benchmarks/bench_judges.py``; thresholds are decided there, not asserted here, because the
judges are still being changed.  These tests read the YAML directly (not through the
benchmark's loader) and check it against the bundled golden set; the documented mixes are
the counts stated in each probe's README.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml
from benchmarks._judge_probe import PROBES, load_probe

from ragaudit.exceptions import FormatError

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "benchmarks" / "probes" / "judge_probe_v2.yaml"
PROBE_V3 = ROOT / "benchmarks" / "probes" / "judge_probe_v3.yaml"
GOLDEN = {
    q["id"]: q
    for q in yaml.safe_load(
        (Path(str(files("ragaudit.benchmark"))) / "golden.yaml").read_text(encoding="utf-8")
    )
}
#: Per probe, as its README states: kinds, refusals on answerable / unanswerable questions,
#: ambiguous rows.
MIXES: dict[Path, tuple[dict[str, int], dict[bool, int], int]] = {
    PROBE: ({"paraphrase": 137, "near_miss": 97, "refusal": 58}, {True: 21, False: 37}, 5),
    PROBE_V3: ({"paraphrase": 138, "near_miss": 118, "refusal": 64}, {True: 28, False: 36}, 4),
}
#: sha256 of v3 at its freeze commit 4b0461c (README_v3.md): the file is never edited.
FROZEN_V3 = "bcc4947128ed394da24aad954f4b4853db92ad96bb6183e3f8a26056113da6a0"


def rows_of(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return rows


probes = pytest.mark.parametrize("path", list(MIXES), ids=lambda p: p.stem)


@probes
def test_the_probe_has_at_least_150_rows_with_unique_ids_on_golden_questions(path: Path) -> None:
    rows = rows_of(path)
    assert len(rows) >= 150
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert {row["question"] for row in rows} <= GOLDEN.keys()
    # spread over the benchmark: every question, unanswerable ones included
    assert {row["question"] for row in rows} == GOLDEN.keys()


@probes
def test_every_row_has_the_documented_fields_and_a_valid_label_and_kind(path: Path) -> None:
    for row in rows_of(path):
        assert {"id", "question", "answer", "label", "kind", "subkind"} <= row.keys(), row
        assert row.keys() <= {"id", "question", "answer", "label", "kind", "subkind", "note"}
        assert isinstance(row["answer"], str) and row["answer"].strip(), row["id"]
        assert row["label"] in {"correct", "wrong", "ambiguous"}, row["id"]
        assert row["kind"] in {"paraphrase", "near_miss", "refusal"}, row["id"]
        assert row["label"] != "ambiguous" or row.get("note"), row["id"]


@probes
def test_labels_follow_the_readme_rules(path: Path) -> None:
    for row in rows_of(path):
        answerable = GOLDEN[row["question"]]["answerable"]
        if row["kind"] == "refusal":  # a refusal is right exactly when nothing is answerable
            assert row["label"] == ("wrong" if answerable else "correct"), row["id"]
        elif row["kind"] == "paraphrase":
            assert row["label"] in {"correct", "ambiguous"} and answerable, row["id"]
        else:
            assert row["label"] in {"wrong", "ambiguous"}, row["id"]


@probes
def test_the_mix_is_the_documented_one(path: Path) -> None:
    rows = rows_of(path)
    kinds, refused, ambiguous = MIXES[path]
    assert Counter(row["kind"] for row in rows) == kinds
    refusals = Counter(GOLDEN[r["question"]]["answerable"] for r in rows if r["kind"] == "refusal")
    assert refusals == refused
    assert sum(row["label"] == "ambiguous" for row in rows) == ambiguous


def test_v3_is_byte_identical_to_its_freeze_and_listed_with_that_commit() -> None:
    assert hashlib.sha256(PROBE_V3.read_bytes()).hexdigest() == FROZEN_V3
    listed = {p.name: (p.path, p.freeze, p.tuned_since) for p in PROBES}
    assert listed["v3"] == (PROBE_V3, "4b0461c", "863edc7")
    # v4 is tuning data since the commit that says so in its README (issue 31, round 2)
    assert listed["v4"][1:] == ("9260a32", "738b67a")
    assert "4b0461c9b0ee02f72ded999c97ffa8c0b7475fd4" in (
        PROBE_V3.parent / "README_v3.md"
    ).read_text(encoding="utf-8")


def test_the_benchmark_loader_reads_the_probes_and_names_a_bad_row(tmp_path: Path) -> None:
    for path in MIXES:
        assert [row.id for row in load_probe(path, list(GOLDEN))] == [
            row["id"] for row in rows_of(path)
        ]
    bad = tmp_path / "probe.yaml"
    bad.write_text(
        "- {id: p1, question: q01, answer: '2014.', label: correct, kind: paraphrase,"
        " subkind: x}\n- {id: p2, question: q01, answer: '2014.', label: right,"
        " kind: paraphrase, subkind: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match=r"rows\[1\]\.label: expected one of .*found 'right'"):
        load_probe(bad)
    bad.write_text(
        "- {id: p1, question: q99, answer: 'x', label: wrong, kind: near_miss, subkind: x}\n",
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match=r"rows\[0\]\.question: no question 'q99'"):
        load_probe(bad, list(GOLDEN))
