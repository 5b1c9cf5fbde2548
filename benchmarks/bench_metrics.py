"""Side-by-side speed of ragaudit, pytrec_eval and ranx on the same TREC files.

Builds (once, cached under ``benchmarks/_data/``) a seeded run of 100,000 questions x 100
ranked items with graded labels (about 5 relevant per question), then times each tool in its
own fresh subprocess so that peak memory (``ru_maxrss``) is the tool's own:

* end to end from the files: the tool's own parser plus evaluation of ndcg@10, map@100,
  mrr@10, recall@100 and precision@10;
* from in-memory dicts of 20,000 x 100 (parsing excluded);
* import plus first call on a tiny input (what a CLI user waits for).

ranx is timed cold (empty numba cache, so its JIT compiles) and warm (second run, same cache).
The means of every metric the tools share are checked to agree to 1e-9.

Usage::

    uv run python benchmarks/bench_metrics.py            # full size (several minutes)
    uv run python benchmarks/bench_metrics.py --questions 10000   # quick look

This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "_data"
METRICS = ["ndcg@10", "map@100", "mrr@10", "recall@100", "precision@10"]
# trec_eval names of the same measures; trec_eval has no rank cut for the reciprocal rank, so
# mrr@10 is compared with ranx only.
TREC_MEASURES = {
    "ndcg@10": "ndcg_cut_10",
    "map@100": "map_cut_100",
    "recall@100": "recall_100",
    "precision@10": "P_10",
}


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# workers (each runs in a fresh interpreter)
# --------------------------------------------------------------------------------------------
def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_files(tool: str, qrels_path: str, run_path: str) -> dict[str, object]:
    t0 = time.perf_counter()
    if tool == "ragaudit":
        from ragaudit.data.formats import read_qrels, read_run
        from ragaudit.metrics import evaluate

        qrels = read_qrels(qrels_path)
        run = read_run(run_path)
        t_parse = time.perf_counter()
        ev = evaluate(qrels, run, METRICS, missing="skip")
        means = dict(ev.means)
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels_path) as f:
            qrels = pytrec_eval.parse_qrel(f)
        with open(run_path) as f:
            run = pytrec_eval.parse_run(f)
        t_parse = time.perf_counter()
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values()))
        per_query = evaluator.evaluate(run)
        means = {
            m: float(np.mean([v[t] for v in per_query.values()])) for m, t in TREC_MEASURES.items()
        }
    elif tool == "ranx":
        import ranx

        qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
        run = ranx.Run.from_file(run_path, kind="trec")
        t_parse = time.perf_counter()
        means = {k: float(v) for k, v in ranx.evaluate(qrels, run, METRICS).items()}
    else:
        raise SystemExit(f"unknown tool {tool}")
    t1 = time.perf_counter()
    return {
        "total_s": t1 - t0,
        "parse_s": t_parse - t0,
        "eval_s": t1 - t_parse,
        "peak_mb": _peak_mb(),
        "means": means,
    }


def worker_dicts(tool: str, n_questions: int, depth: int, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    qrels_d: dict[str, dict[str, int]] = {}
    run_d: dict[str, dict[str, float]] = {}
    for i in range(n_questions):
        docs = [f"d{x}" for x in dict.fromkeys(rng.integers(0, 100_000, depth).tolist())]
        scores = np.round(rng.random(len(docs)) * 20, 2).tolist()
        run_d[f"q{i}"] = dict(zip(docs, scores, strict=True))
        rel = rng.choice(len(docs), size=5, replace=False)
        qrels_d[f"q{i}"] = {docs[j]: int(rng.integers(0, 4)) for j in rel}
    t0 = time.perf_counter()
    if tool == "ragaudit":
        from ragaudit.data import Qrels, Run
        from ragaudit.metrics import evaluate

        ev = evaluate(Qrels(qrels_d), Run(run_d), METRICS, missing="skip")
        means = dict(ev.means)
    elif tool == "pytrec_eval":
        import pytrec_eval

        evaluator = pytrec_eval.RelevanceEvaluator(qrels_d, set(TREC_MEASURES.values()))
        per_query = evaluator.evaluate(run_d)
        means = {
            m: float(np.mean([v[t] for v in per_query.values()])) for m, t in TREC_MEASURES.items()
        }
    elif tool == "ranx":
        import ranx

        means = {
            k: float(v)
            for k, v in ranx.evaluate(ranx.Qrels(qrels_d), ranx.Run(run_d), METRICS).items()
        }
    else:
        raise SystemExit(f"unknown tool {tool}")
    return {"total_s": time.perf_counter() - t0, "means": means}


def worker_first_call(tool: str) -> dict[str, object]:
    t0 = time.perf_counter()
    qrels_d = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    run_d = {"q1": {"a": 0.9, "x": 0.8, "b": 0.1}, "q2": {"y": 0.5, "c": 0.4}}
    if tool == "ragaudit":
        from ragaudit.data import Qrels, Run
        from ragaudit.metrics import evaluate

        evaluate(Qrels(qrels_d), Run(run_d), METRICS)
    elif tool == "pytrec_eval":
        import pytrec_eval

        pytrec_eval.RelevanceEvaluator(qrels_d, set(TREC_MEASURES.values())).evaluate(run_d)
    elif tool == "ranx":
        import ranx

        ranx.evaluate(ranx.Qrels(qrels_d), ranx.Run(run_d), METRICS)
    return {"total_s": time.perf_counter() - t0}


def _spawn(args: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--dict-questions", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        kind, tool, *rest = args.worker
        if kind == "files":
            out = worker_files(tool, rest[0], rest[1])
        elif kind == "dicts":
            out = worker_dicts(tool, int(rest[0]), int(rest[1]), int(rest[2]))
        else:
            out = worker_first_call(tool)
        print(json.dumps(out))
        return

    print(f"seed={args.seed} questions={args.questions} depth={args.depth}", flush=True)
    t = time.perf_counter()
    qrels_path, run_path = build_files(args.questions, args.depth, args.seed)
    print(
        f"data ready in {time.perf_counter() - t:.1f}s: {run_path.name} "
        f"({run_path.stat().st_size / 1e6:.0f} MB)",
        flush=True,
    )

    numba_cache = tempfile.mkdtemp(prefix="ranx-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache)
    files = {
        "ragaudit": _spawn(["--worker", "files", "ragaudit", str(qrels_path), str(run_path)]),
        "pytrec_eval": _spawn(["--worker", "files", "pytrec_eval", str(qrels_path), str(run_path)]),
        "ranx (cold)": _spawn(["--worker", "files", "ranx", str(qrels_path), str(run_path)], env),
        "ranx (warm)": _spawn(["--worker", "files", "ranx", str(qrels_path), str(run_path)], env),
    }
    dict_args = [str(args.dict_questions), str(args.depth), str(args.seed)]
    dicts = {
        tool: _spawn(["--worker", "dicts", tool, *dict_args])
        for tool in ("ragaudit", "pytrec_eval")
    }
    dicts["ranx (warm)"] = _spawn(["--worker", "dicts", "ranx", *dict_args], env)
    first_env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="ranx-numba-"))
    first = {
        "ragaudit": _spawn(["--worker", "first", "ragaudit"]),
        "pytrec_eval": _spawn(["--worker", "first", "pytrec_eval"]),
        "ranx (cold)": _spawn(["--worker", "first", "ranx"], first_env),
    }

    base = float(files["ragaudit"]["total_s"])  # type: ignore[arg-type]
    print(f"\n### End to end from TREC files ({args.questions:,} questions x {args.depth})\n")
    print("| tool | parse s | evaluate s | total s | total / ragaudit | peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for tool, r in files.items():
        print(
            f"| {tool} | {r['parse_s']:.2f} | {r['eval_s']:.2f} | {r['total_s']:.2f} | "
            f"{float(r['total_s']) / base:.1f}x | {r['peak_mb']:.0f} |"
        )  # type: ignore[arg-type]

    base = float(dicts["ragaudit"]["total_s"])  # type: ignore[arg-type]
    print(f"\n### From in-memory dicts ({args.dict_questions:,} questions x {args.depth})\n")
    print("| tool | evaluate s | time / ragaudit |")
    print("|---|---:|---:|")
    for tool, r in dicts.items():
        print(f"| {tool} | {r['total_s']:.2f} | {float(r['total_s']) / base:.1f}x |")  # type: ignore[arg-type]

    print("\n### Import plus first call (tiny input, fresh interpreter)\n")
    print("| tool | seconds |")
    print("|---|---:|")
    for tool, r in first.items():
        print(f"| {tool} | {r['total_s']:.2f} |")

    print("\n### Agreement of the means")
    ours = files["ragaudit"]["means"]
    worst = 0.0
    for tool in ("pytrec_eval", "ranx (warm)"):
        theirs = files[tool]["means"]
        for metric, value in theirs.items():  # type: ignore[union-attr]
            diff = abs(float(value) - float(ours[metric]))  # type: ignore[index]
            worst = max(worst, diff)
            flag = "" if diff <= 1e-9 else "   <-- differs"
            print(
                f"  {tool:12s} {metric:13s} ragaudit={ours[metric]:.12f} "  # type: ignore[index]
                f"theirs={float(value):.12f}{flag}"
            )
    print(f"  largest absolute difference: {worst:.2e}")


if __name__ == "__main__":
    main()
