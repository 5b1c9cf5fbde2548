"""The frozen judge probes v2 to v5 (benchmarks/probes/): their schema, never the judges' accuracy.

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
PROBE_V4 = ROOT / "benchmarks" / "probes" / "judge_probe_v4.yaml"
PROBE_V5 = ROOT / "benchmarks" / "probes" / "judge_probe_v5.yaml"
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
    PROBE_V4: ({"paraphrase": 153, "near_miss": 96, "refusal": 61}, {True: 31, False: 30}, 2),
    PROBE_V5: ({"paraphrase": 160, "near_miss": 89, "refusal": 66}, {True: 38, False: 28}, 1),
}
#: Per frozen probe: sha256 of the file at its freeze commit (the README's "Freeze"), the short
#: and the full commit.  A probe file is never edited after its freeze.
FROZEN = {
    PROBE_V3: (
        "bcc4947128ed394da24aad954f4b4853db92ad96bb6183e3f8a26056113da6a0",
        "4b0461c9b0ee02f72ded999c97ffa8c0b7475fd4",
    ),
    PROBE_V4: (
        "99ab8e288474146269423c46c0377ffb73fc4cceae4c53bf3bbf5e6c5f9c1ca0",
        "9260a321ee606b3ad09be447de94adfff0f0a95e",
    ),
    PROBE_V5: (
        "9bfd18779ad6f4a7c823d3f2ae028f7dd752bbef165bf06a307a506ab4968ddf",
        "37ec1edaffa278888404ac1f428004beb9f6a2aa",
    ),
}


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


@pytest.mark.parametrize("path", list(FROZEN), ids=lambda p: p.stem)
def test_a_frozen_probe_is_byte_identical_to_its_freeze_and_listed_with_that_commit(
    path: Path,
) -> None:
    digest, commit = FROZEN[path]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    version = path.stem.rsplit("_", 1)[1]
    assert [(p.path, p.freeze) for p in PROBES if p.name == version] == [(path, commit[:7])]
    assert commit in (path.parent / f"README_{version}.md").read_text(encoding="utf-8")


def test_the_probes_tuned_on_are_listed_with_the_commit_that_says_so() -> None:
    """A probe becomes tuning data at the commit its README's errata names: from then on its
    figures are no longer held out (v5 is the one nobody has tuned on)."""
    listed = {p.name: p.tuned_since for p in PROBES}
    assert listed == {"v2": "9824507", "v3": "863edc7", "v4": "738b67a", "v5": ""}
    for readme in ("README.md", "README_v3.md", "README_v4.md"):  # each says it in words
        text = (PROBE_V3.parent / readme).read_text(encoding="utf-8")
        assert "used for tuning" in text.lower() or "used to tune" in text.lower(), readme


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
