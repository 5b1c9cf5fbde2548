"""ragaudit == ranx where ranx defines the metric.

ranx's numba compilation takes minutes, so its values are stored in
tests/data/metrics/ranx_expected.json by make_ranx_expected.py (kept next to it).  The case
avoids what ranx does differently: score ties (ranx does not break them by id descending
like trec_eval) and non-relevant labels (ranx's Qrels drops them).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ragaudit.data import Qrels, Run
from ragaudit.metrics import evaluate

FIXTURE = Path(__file__).parents[1] / "data" / "metrics" / "ranx_expected.json"


def test_matches_stored_ranx_values():
    stored = json.loads(FIXTURE.read_text())
    metrics = list(stored["expected"])
    ev = evaluate(Qrels(stored["qrels"]), Run(stored["run"]), metrics)
    for name in metrics:
        reference = [stored["expected"][name][qid] for qid in ev.query_ids]
        np.testing.assert_allclose(ev.per_query[name], reference, atol=1e-9, err_msg=name)
    assert {"ndcg_exp@5", "mrr@3", "f1@5"} <= set(metrics)
