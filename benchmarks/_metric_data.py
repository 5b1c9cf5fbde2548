"""The seeded TREC run and qrels pairs that ``bench_metrics.py`` reads (cached in ``_data/``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "_data"


def build_files(n_questions: int, depth: int, seed: int) -> tuple[Path, Path]:
    """Write (or reuse) a seeded TREC qrels + run pair and return their paths."""
    DATA.mkdir(exist_ok=True)
    stem = f"q{n_questions}_d{depth}_s{seed}"
    qrels_path, run_path = DATA / f"{stem}.qrels", DATA / f"{stem}.run"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    pool = 1_000_000
    qids = np.array([f"q{i}" for i in range(n_questions)])
    # Retrieved items: distinct per question; scores rounded to 2 decimals so that ties occur.
    docs = rng.integers(0, pool, size=(n_questions, depth))
    scores = np.round(np.sort(rng.random((n_questions, depth)), axis=1)[:, ::-1] * 20, 2)
    with open(run_path, "w") as out:
        for i in range(n_questions):
            row_docs = dict.fromkeys(docs[i].tolist())  # drop the rare duplicate draw
            q = qids[i]
            out.write(
                "".join(
                    f"{q} Q0 d{d} {r + 1} {s:.2f} bench\n"
                    for r, (d, s) in enumerate(zip(row_docs, scores[i], strict=False))
                )
            )
    # Labels: ~5 relevant per question (grades 1-3), 4 of them usually among the retrieved,
    # plus a few judged non-relevant items.
    with open(qrels_path, "w") as out:
        for i in range(n_questions):
            n_rel = int(rng.integers(1, 10))
            retrieved = docs[i]
            chosen = set()
            lines = []
            for _ in range(n_rel):
                d = (
                    int(retrieved[rng.integers(0, depth)])
                    if rng.random() < 0.8
                    else int(rng.integers(0, pool))
                )
                if d in chosen:
                    continue
                chosen.add(d)
                lines.append(f"{qids[i]} 0 d{d} {int(rng.integers(1, 4))}\n")
            for _ in range(3):
                d = int(retrieved[rng.integers(0, depth)])
                if d not in chosen:
                    chosen.add(d)
                    lines.append(f"{qids[i]} 0 d{d} 0\n")
            out.write("".join(lines))
    return qrels_path, run_path


def build_large(n_questions: int, depth: int, seed: int) -> tuple[Path, Path]:
    """A big seeded pair written by pyarrow's CSV writer in slices (for runs of >= 10M lines).

    Each question retrieves ``depth`` distinct documents with scores rounded to 2 decimals
    (ties are common); 5 of its retrieved documents are labelled relevant (grades 1-3).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    DATA.mkdir(exist_ok=True)
    stem = f"large_q{n_questions}_d{depth}_s{seed}"
    qrels_path, run_path = DATA / f"{stem}.qrels", DATA / f"{stem}.run"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    step = max(1, 5_000_000 // depth)

    def constant(text: str, size: int) -> pa.Array:
        codes = pa.array(np.zeros(size, dtype=np.int32))
        return pc.cast(pa.DictionaryArray.from_arrays(codes, pa.array([text])), pa.string())

    run_schema = pa.schema([(n, pa.string()) for n in ("qid", "q0", "docid", "rank")]
                           + [("score", pa.float64()), ("tag", pa.string())])  # fmt: skip
    qrels_schema = pa.schema([(n, pa.string()) for n in ("qid", "it", "docid")]
                             + [("grade", pa.int64())])  # fmt: skip
    run_tmp, qrels_tmp = str(run_path) + ".tmp", str(qrels_path) + ".tmp"
    with (
        csv.CSVWriter(run_tmp, run_schema, write_options=options) as run_out,
        csv.CSVWriter(qrels_tmp, qrels_schema, write_options=options) as q_out,
    ):
        for first in range(0, n_questions, step):
            n = min(step, n_questions - first)
            q = np.repeat(np.arange(first, first + n), depth)
            # distinct documents per question: a random offset plus a stride
            docs = (rng.integers(0, 10**6, n)[:, None] + np.arange(depth) * 7919) % 10**7
            scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1] * 20, 2)
            qid = pc.binary_join_element_wise("q", pc.cast(pa.array(q), pa.string()), "")
            doc = pc.binary_join_element_wise("d", pc.cast(pa.array(docs.ravel()), pa.string()), "")
            rank = pc.cast(pa.array(np.tile(np.arange(1, depth + 1), n)), pa.string())
            rows = len(q)
            run_out.write_table(pa.table([qid, constant("Q0", rows), doc, rank,
                                          pa.array(scores.ravel()), constant("bench", rows)],
                                         schema=run_schema))  # fmt: skip
            picks = (np.arange(n)[:, None] * depth + rng.integers(0, depth, (n, 5))).ravel()
            picks = np.unique(picks)
            q_out.write_table(pa.table([pc.take(qid, pa.array(picks)), constant("0", len(picks)),
                                        pc.take(doc, pa.array(picks)),
                                        pa.array(rng.integers(1, 4, len(picks)))],
                                       schema=qrels_schema))  # fmt: skip
    os.replace(run_tmp, run_path)
    os.replace(qrels_tmp, qrels_path)
    return qrels_path, run_path
