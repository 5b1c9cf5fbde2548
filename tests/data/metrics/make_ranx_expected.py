"""Regenerate ranx_expected.json: ranx's per-question values on a seeded random case.

Run from the repository root:  uv run python tests/data/metrics/make_ranx_expected.py
(ranx compiles with numba on first use, which takes minutes, so the values are stored.)
The case has distinct scores (ranx breaks ties differently from trec_eval) and only
positive labels (ranx's Qrels drops non-relevant judgements).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

PAIRS = {
    "ndcg_exp@5": "ndcg_burges@5",
    "ndcg_exp@10": "ndcg_burges@10",
    "ndcg@10": "ndcg@10",
    "dcg@5": "dcg@5",
    "mrr@3": "mrr@3",
    "mrr@10": "mrr@10",
    "f1@5": "f1@5",
    "map@10": "map@10",
    "hit@5": "hit_rate@5",
    "precision@5": "precision@5",
    "recall@10": "recall@10",
    "r_precision": "r-precision",
}


def make_case(seed: int = 0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(50)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        labelled = rng.choice(pool, size=rng.integers(1, 10), replace=False)
        grades = rng.integers(1, 4, size=len(labelled))
        qrels[f"q{q}"] = {str(d): int(g) for d, g in zip(labelled, grades, strict=True)}
        ranked = rng.choice(pool, size=rng.integers(1, 25), replace=False)
        scores = rng.permutation(len(ranked)).astype(float) + 1.0
        run[f"q{q}"] = {str(d): float(s) for d, s in zip(ranked, scores, strict=True)}
    return qrels, run


def main() -> None:
    import ranx

    qrels, run = make_case()
    ranx_run = ranx.Run(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(PAIRS.values()))
    expected = {
        ours: {qid: float(ranx_run.scores[theirs][qid]) for qid in run}
        for ours, theirs in PAIRS.items()
    }
    out = {"ranx_version": _version(), "qrels": qrels, "run": run, "expected": expected}
    path = Path(__file__).with_name("ranx_expected.json")
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def _version() -> str:
    from importlib.metadata import version

    return version("ranx")


if __name__ == "__main__":
    main()
