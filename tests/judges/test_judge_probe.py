"""The frozen judge probe v2 (benchmarks/probes/): its schema, never the judges' accuracy.

The agreement of the offline judges with the probe is reported by
``benchmarks/bench_judges.py``; thresholds are decided there, not asserted here, because the
judges are still being changed.  These tests read the YAML directly (not through the
benchmark's loader) and check it against the bundled golden set.
"""

from __future__ import annotations

from collections import Counter
from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from benchmarks._judge_probe import load_probe

from ragaudit.exceptions import FormatError

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "benchmarks" / "probes" / "judge_probe_v2.yaml"
GOLDEN = {
    q["id"]: q
    for q in yaml.safe_load(
        (Path(str(files("ragaudit.benchmark"))) / "golden.yaml").read_text(encoding="utf-8")
    )
}
ROWS = yaml.safe_load(PROBE.read_text(encoding="utf-8"))


def test_the_probe_has_at_least_150_rows_with_unique_ids_on_golden_questions() -> None:
    assert len(ROWS) >= 150
    ids = [row["id"] for row in ROWS]
    assert len(set(ids)) == len(ids)
    assert {row["question"] for row in ROWS} <= GOLDEN.keys()
    # spread over the benchmark: every question, unanswerable ones included
    assert {row["question"] for row in ROWS} == GOLDEN.keys()


def test_every_row_has_the_documented_fields_and_a_valid_label_and_kind() -> None:
    for row in ROWS:
        assert {"id", "question", "answer", "label", "kind", "subkind"} <= row.keys(), row
        assert row.keys() <= {"id", "question", "answer", "label", "kind", "subkind", "note"}
        assert isinstance(row["answer"], str) and row["answer"].strip(), row["id"]
        assert row["label"] in {"correct", "wrong", "ambiguous"}, row["id"]
        assert row["kind"] in {"paraphrase", "near_miss", "refusal"}, row["id"]
        assert row["label"] != "ambiguous" or row.get("note"), row["id"]


def test_labels_follow_the_readme_rules() -> None:
    for row in ROWS:
        answerable = GOLDEN[row["question"]]["answerable"]
        if row["kind"] == "refusal":  # a refusal is right exactly when nothing is answerable
            assert row["label"] == ("wrong" if answerable else "correct"), row["id"]
        elif row["kind"] == "paraphrase":
            assert row["label"] == "correct" and answerable, row["id"]
        else:
            assert row["label"] in {"wrong", "ambiguous"}, row["id"]


def test_the_mix_is_the_documented_one() -> None:
    kinds = Counter(row["kind"] for row in ROWS)
    assert kinds == {"paraphrase": 137, "near_miss": 97, "refusal": 58}
    refusals = Counter(GOLDEN[r["question"]]["answerable"] for r in ROWS if r["kind"] == "refusal")
    assert refusals == {True: 21, False: 37}
    assert sum(row["label"] == "ambiguous" for row in ROWS) == 5


def test_the_benchmark_loader_reads_the_probe_and_names_a_bad_row(tmp_path: Path) -> None:
    assert [row.id for row in load_probe(PROBE, list(GOLDEN))] == [row["id"] for row in ROWS]
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
