"""File-wide question codes (ragaudit.data.formats._qids): distinct names, shared id tuples."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ragaudit.data.formats import _qids as qids_module
from ragaudit.data.formats import read_qrels_columns, read_run_columns
from ragaudit.data.formats.strings import Strings


def strings(values: list[str]) -> pa.Array:
    return pa.array(values, pa.large_string())


@pytest.mark.parametrize("constant_hash", [False, True])
def test_distinct_is_exact_even_when_every_hash_collides(monkeypatch, constant_hash):
    if constant_hash:  # every pair of ids then goes to the byte-for-byte check
        monkeypatch.setattr(
            Strings, "hashes", lambda self, rows=None: np.zeros(len(self), dtype=np.uint64)
        )
    assert qids_module._distinct(strings(["q1", "q2", "q10", "a-longer-id-than-8-bytes"]))
    assert qids_module._distinct(strings(["only"]))
    assert not qids_module._distinct(strings(["q1", "q2", "q1"]))
    assert not qids_module._distinct(
        strings(["a-longer-id-than-8-bytes", "x", "a-longer-id-than-8-bytes"])
    )


@pytest.mark.parametrize("constant_hash", [False, True])
def test_codes_follow_first_appearance_whatever_the_layout(monkeypatch, constant_hash):
    if constant_hash:
        monkeypatch.setattr(
            Strings, "hashes", lambda self, rows=None: np.zeros(len(self), dtype=np.uint64)
        )
    # Chunks list runs of equal ids: q2's lines are split, so the names repeat.
    names = [strings(["q1", "q2"]), strings(["q3", "q2"]), strings(["q1"])]
    provisional = np.array([0, 0, 1, 2, 3, 3, 4], dtype=np.int32)
    qids, codes, key = qids_module.unify_codes(names, provisional)
    assert qids == ("q1", "q2", "q3")
    assert codes.tolist() == [0, 0, 1, 2, 1, 1, 0] and codes.dtype == np.int32
    grouped, same_codes, grouped_key = qids_module.unify_codes(
        [strings(["q1", "q2", "q3"])], np.array([0, 1, 1, 2])
    )
    assert grouped == qids and same_codes.tolist() == [0, 1, 1, 2]
    assert key == grouped_key  # the digest names the ids, not the layout


def test_a_run_whose_lines_are_not_grouped_shares_the_labels_ids(tmp_path):
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 0\n")
    run_path.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 b 1 1.0 t\nq1 Q0 c 2 0.5 t\nq3 Q0 c 1 1.0 t\n")
    qrels = read_qrels_columns(qrels_path)
    run = read_run_columns(run_path, block_bytes=20)  # one or two lines per chunk
    assert run.qids is qrels.qids
    assert run.offsets.tolist() == [0, 2, 3, 4]
    assert run.items.decode(run.row_order) == ["a", "c", "b", "c"]
