"""Regenerate the stats test fixtures (deterministic).

Run: ``uv run python tests/data/stats/make_fixtures.py``.

k3.json / k6.json mimic the chapter's k=3 vs k=6 comparison on 42 questions: `correct` has the
paired table 35 / 1 / 1 / 5 with discordant questions q04 (A only) and q37 (B only);
`citation_acc` is null (not applicable) on 4 questions; precision@k drops sharply.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
IDS = [f"q{i:02d}" for i in range(1, 43)]


def saved_run(name: str, k: int, metrics: dict[str, list[object]]) -> dict[str, object]:
    rows = []
    for position, qid in enumerate(IDS):
        rows.append(
            {
                "id": qid,
                "question": f"question {qid}",
                "answerable": True,
                "retrieved": [],
                "metrics": {metric: values[position] for metric, values in metrics.items()},
            }
        )
    return {
        "format": "ragaudit.run",
        "format_version": 1,
        "name": name,
        "config": {"k": k, "seed": 0},
        "rows": rows,
        "summary": {"n": len(IDS)},
    }


def main() -> None:
    rng = np.random.default_rng(2024)
    n = len(IDS)
    neither = {"q17", "q23", "q29", "q41", "q42"}
    correct_a = [qid not in neither and qid != "q37" for qid in IDS]
    correct_b = [qid not in neither and qid != "q04" for qid in IDS]
    recall_a = np.where(rng.random(n) < 0.1, 0.5, 1.0)
    recall_b = np.maximum(recall_a, np.where(rng.random(n) < 0.08, 1.0, 0.0))
    ndcg_a = np.round(np.clip(recall_a - rng.random(n) * 0.1, 0, 1), 4)
    ndcg_b = np.round(np.clip(ndcg_a + (recall_b - recall_a) * 0.5, 0, 1), 4)
    precision_a = np.round(rng.choice([1 / 3, 2 / 3, 1.0], size=n, p=[0.2, 0.4, 0.4]), 4)
    precision_b = np.round(precision_a * 3 / 6 + rng.choice([0, 1 / 6], size=n), 4)
    cite_null = {"q23", "q29", "q41", "q42"}
    cite_a = [None if q in cite_null else 1.0 for q in IDS]
    cite_b = [None if q in cite_null else (0.0 if q == "q11" else 1.0) for q in IDS]
    runs = {
        "k3.json": saved_run(
            "k3_cs800",
            3,
            {
                "recall@k": recall_a.tolist(),
                "ndcg@k": ndcg_a.tolist(),
                "precision@k": precision_a.tolist(),
                "correct": correct_a,
                "citation_acc": cite_a,
            },
        ),
        "k6.json": saved_run(
            "k6_cs800",
            6,
            {
                "recall@k": recall_b.tolist(),
                "ndcg@k": ndcg_b.tolist(),
                "precision@k": precision_b.tolist(),
                "correct": correct_b,
                "citation_acc": cite_b,
            },
        ),
    }
    for name, doc in runs.items():
        (HERE / name).write_text(json.dumps(doc, indent=1) + "\n")
    # The same values as plain per-question files.
    flat_b = {row["id"]: row["metrics"] for row in runs["k6.json"]["rows"]}  # type: ignore[index]
    (HERE / "k6_flat.json").write_text(json.dumps(flat_b, indent=1) + "\n")
    with (HERE / "k6_flat.jsonl").open("w") as handle:
        for qid, metrics in flat_b.items():
            handle.write(json.dumps({"id": qid, **metrics}) + "\n")
    # Three runs for `compare --all`: two close, one clearly better on ndcg@5.
    base = rng.random(60)
    for name, shift in (("bm25", 0.0), ("bm25_rerank", 0.01), ("hybrid", 0.15)):
        noise = rng.normal(0, 0.05, 60)
        values = np.round(np.clip(base + shift + noise, 0, 1), 4)
        flat = {f"q{i:02d}": {"ndcg@5": float(v)} for i, v in enumerate(values, start=1)}
        (HERE / "runs" / f"{name}.json").write_text(json.dumps(flat, indent=1) + "\n")
    # Two labellers' graded labels of the same 30 (question, chunk) pairs.
    grades_a = rng.choice([0, 1, 2], size=30, p=[0.5, 0.3, 0.2])
    flip = rng.random(30) < 0.25
    grades_b = np.where(flip, np.clip(grades_a + rng.choice([-1, 1], size=30), 0, 2), grades_a)
    with (HERE / "labels_a.qrels").open("w") as handle:
        for i, g in enumerate(grades_a):
            handle.write(f"q{i // 3 + 1:02d} 0 c{i:02d} {g}\n")
        handle.write("q99 0 only_in_a 1\n")
    with (HERE / "labels_b.jsonl").open("w") as handle:
        for i, g in enumerate(grades_b):
            handle.write(
                json.dumps({"qid": f"q{i // 3 + 1:02d}", "chunk_id": f"c{i:02d}", "grade": int(g)})
                + "\n"
            )


if __name__ == "__main__":
    main()
