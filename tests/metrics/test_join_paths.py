"""The join's key layouts and slicing against pytrec_eval on seeded TREC files.

Below 2**24 questions a join key stores its question row exactly; above, the row is hashed
into the key and every match is also checked for its question.  Both layouts, with join
slices of a few rows, must give pytrec_eval's values.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from ragaudit.data.formats import read_trec_qrels, read_trec_run
from ragaudit.metrics import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")
MEASURES = {"ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100", "P@5": "P_5", "mrr": "recip_rank"}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("row_bits_limit", "qid_mix"),
    # (1, 0): hashed layout whose keys ignore the question, so every item labelled in one
    # question also matches it in every other; only the match's question check keeps them apart.
    [(1 << 24, None), (1, None), (1, 0)],
)
@pytest.mark.parametrize("join_rows", [1 << 18, 5])
def test_both_key_layouts_match_pytrec_eval(
    tmp_path, monkeypatch, seed, row_bits_limit, qid_mix, join_rows
):
    join = importlib.import_module("ragaudit.metrics._join")
    monkeypatch.setattr(join, "_ROW_BITS_LIMIT", row_bits_limit)
    monkeypatch.setattr(join, "_JOIN_ROWS", join_rows)
    if qid_mix is not None:
        monkeypatch.setattr(join, "QID_MIX", np.uint64(qid_mix))
    rng = np.random.default_rng(seed)
    run_lines, qrel_lines = [], []
    for q in range(40):
        # Items shared between questions: a match must be for the right question.
        items = rng.choice(60, size=int(rng.integers(1, 15)), replace=False)
        for rank, item in enumerate(items):
            run_lines.append(f"q{q} Q0 doc-{item} {rank + 1} {rng.normal():.6f} t\n")
        for item in rng.choice(60, size=int(rng.integers(1, 8)), replace=False):
            qrel_lines.append(f"q{q} 0 doc-{item} {int(rng.integers(0, 4))}\n")
        qrel_lines.append(f"q{q} 0 always-{q} 1\n")  # a relevant item in every question
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("".join(run_lines))
    qrels_path.write_text("".join(qrel_lines))
    with open(qrels_path) as handle:
        trec_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        trec_run = pytrec_eval.parse_run(handle)
    expected = pytrec_eval.RelevanceEvaluator(trec_qrels, set(MEASURES.values())).evaluate(trec_run)
    ev = evaluate(read_trec_qrels(qrels_path), read_trec_run(run_path), list(MEASURES))
    for name, measure in MEASURES.items():
        ours = dict(zip(ev.query_ids, ev.per_query[name].tolist(), strict=True))
        assert ours == pytest.approx({q: v[measure] for q, v in expected.items()}, abs=1e-12)
