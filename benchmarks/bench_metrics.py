"""Side by side: ragaudit, pytrec_eval, ranx (cold and warm), ir_measures and the floor.

For each size (questions x depth) a seeded TREC run and qrels are built once (cached under
``benchmarks/_data/``), then every tool reads the same two files and computes ndcg@10,
map@100, mrr@10, recall@100 and precision@10, each in its own fresh interpreter, so that the
time is the whole process (start-up included) and the peak memory (``ru_maxrss``) is the
tool's own.  The *floor* is the bare columnar read of the same files
(``pyarrow.csv.read_csv``, space delimiter) and nothing else; ``floor-polars`` is the same
read by ``polars.read_csv`` (the alternative reader weighed for ragaudit).  ``ragaudit-stream`` is
:func:`ragaudit.metrics.evaluate_stream` (batches of whole questions, bounded memory).

Every tool runs ``--repeats`` times (medians and min-max are printed); ranx and ir_measures,
which take minutes at the large sizes, run ``--slow-repeats`` times from 100k rows up.  ranx
cold (an empty numba cache, so its JIT compiles) is timed at the smallest size only: the
compile does not depend on the data.  The means of every metric a tool shares with
pytrec_eval are checked to agree to 1e-9.

Usage::

    uv run python benchmarks/bench_metrics.py                  # the full grid (~30 min)
    uv run python benchmarks/bench_metrics.py --sizes 1000x10 --repeats 1   # a quick look
    uv run python benchmarks/bench_metrics.py --sizes 1000000x100 --tools ragaudit-stream floor
    uv run python benchmarks/bench_metrics.py --metric-set incomplete --sizes 100000x100 \
        --tools ragaudit pytrec_eval          # bpref and judged@10 (not run by default)

This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from _readme import measured, splice, start

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


# --------------------------------------------------------------------------------------------
# workers (each runs in a fresh interpreter)
# --------------------------------------------------------------------------------------------
TOOLS = ("floor", "floor-polars", "ragaudit", "ragaudit-stream", "pytrec_eval", "ranx",
         "ir_measures")  # fmt: skip
IR_MEASURES = {"ndcg@10": "nDCG@10", "map@100": "AP@100", "mrr@10": "RR@10",
               "recall@100": "R@100", "precision@10": "P@10"}  # fmt: skip
# --metric-set incomplete: the measures for incomplete labels.  judged@10 has no trec_eval
# measure (ir_measures computes it; it breaks ties by id ascending, trec_eval and ragaudit by id
# descending, so its mean may differ where a tie straddles rank 10); bpref is checked against
# pytrec_eval.
METRIC_SETS: dict[str, dict[str, object]] = {
    "standard": {"ragaudit": METRICS, "trec": TREC_MEASURES, "ir_measures": IR_MEASURES,
                 "ranx": METRICS},
    "incomplete": {"ragaudit": ["bpref", "judged@10"], "trec": {"bpref": "bpref"},
                   "ir_measures": {"bpref": "Bpref", "judged@10": "Judged@10"},
                   "ranx": ["bpref"]},
}  # fmt: skip


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _floor_read(path: str, names: list[str]) -> int:
    import pyarrow.csv as csv

    table = csv.read_csv(
        path,
        read_options=csv.ReadOptions(column_names=names),
        parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
    )
    return table.num_rows


def _polars_read(path: str, names: list[str]) -> int:
    import polars as pl

    frame = pl.read_csv(path, separator=" ", has_header=False, new_columns=names, quote_char=None)
    return frame.height


def worker(
    tool: str, qrels_path: str, run_path: str, metric_set: str = "standard"
) -> dict[str, object]:
    chosen = METRIC_SETS[metric_set]
    metrics: list[str] = chosen["ragaudit"]  # type: ignore[assignment]
    trec_measures: dict[str, str] = chosen["trec"]  # type: ignore[assignment]
    ir_names: dict[str, str] = chosen["ir_measures"]  # type: ignore[assignment]
    ranx_metrics: list[str] = chosen["ranx"]  # type: ignore[assignment]
    t0 = time.perf_counter()
    means: dict[str, float] = {}
    if tool == "floor":
        _floor_read(qrels_path, ["qid", "iter", "docid", "grade"])
        _floor_read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"])
        t_parse = time.perf_counter()
    elif tool == "floor-polars":
        _polars_read(qrels_path, ["qid", "iter", "docid", "grade"])
        _polars_read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"])
        t_parse = time.perf_counter()
    elif tool == "ragaudit":
        from ragaudit.data.formats import read_qrels, read_run
        from ragaudit.metrics import evaluate

        qrels = read_qrels(qrels_path)
        run = read_run(run_path)
        t_parse = time.perf_counter()
        means = dict(evaluate(qrels, run, metrics, missing="skip").means)
    elif tool == "ragaudit-stream":
        from ragaudit.data.formats import read_qrels
        from ragaudit.metrics import evaluate_stream

        qrels = read_qrels(qrels_path)
        t_parse = time.perf_counter()
        means = dict(evaluate_stream(qrels, run_path, metrics, missing="skip").means)
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels_path) as f:
            qrels = pytrec_eval.parse_qrel(f)
        with open(run_path) as f:
            run = pytrec_eval.parse_run(f)
        t_parse = time.perf_counter()
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(trec_measures.values()))
        per_query = evaluator.evaluate(run)
        means = {m: float(np.mean([v[t] for v in per_query.values()]))
                 for m, t in trec_measures.items()}  # fmt: skip
    elif tool == "ranx":
        import ranx

        qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
        run = ranx.Run.from_file(run_path, kind="trec")
        t_parse = time.perf_counter()
        found_ranx = ranx.evaluate(qrels, run, ranx_metrics)
        if len(ranx_metrics) == 1:  # ranx returns a bare number for one metric
            found_ranx = {ranx_metrics[0]: found_ranx}
        means = {k: float(v) for k, v in found_ranx.items()}
    elif tool == "ir_measures":
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in ir_names.values()]
        qrels = list(ir_measures.read_trec_qrels(qrels_path))
        run = list(ir_measures.read_trec_run(run_path))
        t_parse = time.perf_counter()
        found = ir_measures.calc_aggregate(measures, qrels, run)
        means = {ours: float(found[ir_measures.parse_measure(theirs)])
                 for ours, theirs in ir_names.items()}  # fmt: skip
    else:
        raise SystemExit(f"unknown tool {tool}")
    t1 = time.perf_counter()
    return {"parse_s": t_parse - t0, "eval_s": t1 - t_parse, "peak_mb": _peak_mb(),
            "means": means}  # fmt: skip


# Workers may write .pyc files, as an installed package has them after its first run
# (PYTHONDONTWRITEBYTECODE, set in some shells, would make every worker compile from source).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _spawn(args: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in (env or ENV).items() if k != "PYTHONDONTWRITEBYTECODE"},
        check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------
DEFAULT_SIZES = "1000x10,1000x100,10000x10,10000x100,100000x10,100000x100,1000000x10"


def _warm_page_cache(*paths: Path) -> None:
    """Read the files once, so the first tool timed is not the only one to read from disk."""
    for path in paths:
        with path.open("rb") as handle:
            while handle.read(1 << 24):
                pass


def _runs(
    tool: str, qrels: Path, run: Path, repeats: int, env: dict[str, str], metric_set: str
) -> list[dict]:
    name = "ranx" if tool.startswith("ranx") else tool
    return [
        _spawn(
            ["--worker", name, str(qrels), str(run), metric_set], env if name == "ranx" else None
        )
        for _ in range(repeats)
    ]


def _summary(label: str, results: list[dict], floor: float, base: float) -> dict[str, object]:
    walls = [float(r["wall_s"]) for r in results]
    median = statistics.median(walls)
    return {
        "tool": label,
        "n": len(walls),
        "median_s": median,
        "min_s": min(walls),
        "max_s": max(walls),
        "parse_s": statistics.median(float(r["parse_s"]) for r in results),
        "eval_s": statistics.median(float(r["eval_s"]) for r in results),
        "peak_mb": max(float(r["peak_mb"]) for r in results),
        "vs_ragaudit": median / base if base else float("nan"),
        "vs_floor": median / floor if floor else float("nan"),
        "means": results[0]["means"],
    }


def _check_means(rows: list[dict[str, object]]) -> str:
    reference = next((r["means"] for r in rows if r["tool"] == "pytrec_eval"), None)
    if not reference:
        return "means not checked (pytrec_eval not run)"
    notes = []
    for row in rows:
        if str(row["tool"]).startswith("floor") or row["tool"] == "pytrec_eval":
            continue
        means = row["means"]
        assert isinstance(means, dict) and isinstance(reference, dict)
        shared = [m for m in reference if m in means]
        worst = max((abs(means[m] - reference[m]) for m in shared), default=0.0)
        notes.append(f"{row['tool']} {worst:.1e}")
    return "largest |mean - pytrec_eval mean| over shared metrics: " + ", ".join(notes)


def _cell(row: dict[str, object]) -> str:
    return f"{row['median_s']:.2f} ({row['min_s']:.2f}-{row['max_s']:.2f})"


def summary_table(all_rows: dict[str, list[dict[str, object]]], sizes_mb: dict[str, float]) -> str:
    """One markdown table over all sizes: each tool's median (min-max) seconds and the ratios."""
    tools = list(dict.fromkeys(r["tool"] for rows in all_rows.values() for r in rows))
    others = [t for t in tools if t not in ("floor", "ragaudit")]
    head = ["size (run + qrels)"] + [f"{t} s" for t in tools]
    if "floor" in tools and "ragaudit" in tools:
        head.append("ragaudit / floor")
    if "ragaudit" in tools:
        head += [f"{t} / ragaudit" for t in others]
    head += [f"{t} peak MB (/ files)" for t in tools if t.startswith(("ragaudit", "floor"))]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for key, rows in all_rows.items():
        by_tool = {str(r["tool"]): r for r in rows}
        n_questions, depth = (int(x) for x in key.split("x"))
        mb = sizes_mb[key]
        cells = [
            f"{n_questions:,} × {depth} ({mb:,.0f} MB)"
            if mb >= 10
            else f"{n_questions:,} × {depth} ({mb:.1f} MB)"
        ]
        cells += [_cell(by_tool[t]) if t in by_tool else "-" for t in tools]
        base = by_tool.get("ragaudit")
        if "floor" in tools and "ragaudit" in tools:
            floor = by_tool.get("floor")
            ok = base is not None and floor is not None
            cells.append(
                f"{float(base['median_s']) / float(floor['median_s']):.2f}x" if ok else "-"
            )  # type: ignore[index]
        if "ragaudit" in tools:
            for t in others:
                ok = base is not None and t in by_tool
                ratio = float(by_tool[t]["median_s"]) / float(base["median_s"]) if ok else 0.0  # type: ignore[index]
                cells.append(f"{ratio:.2f}x" if ok else "-")
        for t in tools:
            if t.startswith(("ragaudit", "floor")):
                r = by_tool.get(t)
                peak = float(r["peak_mb"]) if r else 0.0
                cells.append(f"{peak:,.0f} ({peak / sizes_mb[key]:.2f}x)" if r else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="questions x depth, comma-separated")
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slow-repeats", type=int, default=1,
                        help="runs of ranx and ir_measures from 100k rows up")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--metric-set", choices=list(METRIC_SETS), default="standard",
                        help="standard: ndcg@10, map@100, mrr@10, recall@100, precision@10; "
                        "incomplete: bpref and judged@10 (e.g. --sizes 100000x100 --tools "
                        "ragaudit pytrec_eval)")  # fmt: skip
    parser.add_argument("--out", default=str(HERE / "_results"))
    parser.add_argument("--readme", nargs="?", const="bench_metrics", metavar="MARKER",
                        help="also write the summary into README.md, between <!-- MARKER --> "
                        "and <!-- /MARKER --> (default marker: bench_metrics)")  # fmt: skip
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return

    started, load = start(f"bench_metrics  seed={args.seed}  metrics={args.metric_set}")
    sizes_mb: dict[str, float] = {}
    checks: list[str] = []
    numba_cache = tempfile.mkdtemp(prefix="ranx-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache)
    all_rows: dict[str, list[dict[str, object]]] = {}
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    for index, (n_questions, depth) in enumerate(sizes):
        build = build_large if n_questions * depth >= 50_000_000 else build_files
        qrels_path, run_path = build(n_questions, depth, args.seed)
        size_mb = (run_path.stat().st_size + qrels_path.stat().st_size) / 1e6
        _warm_page_cache(qrels_path, run_path)
        slow = args.slow_repeats if n_questions * depth >= 100_000 * 10 else args.repeats
        results: dict[str, list[dict]] = {}
        for tool in args.tools:
            if tool == "ranx" and index == 0:
                cold_env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="ranx-"))
                results["ranx (cold)"] = _runs(
                    "ranx", qrels_path, run_path, 1, cold_env, args.metric_set
                )
            repeats = slow if tool in ("ranx", "ir_measures") else args.repeats
            label = "ranx (warm)" if tool == "ranx" else tool
            if tool == "ranx":
                _runs("ranx", qrels_path, run_path, 1, env, args.metric_set)  # warm the cache
            results[label] = _runs(tool, qrels_path, run_path, repeats, env, args.metric_set)
            times = ", ".join(f"{r['wall_s']:.2f}s" for r in results[label])
            print(f"  {n_questions}x{depth} {label}: {times}", flush=True)
        floor = statistics.median(r["wall_s"] for r in results.get("floor", [{"wall_s": 0}]))
        base = statistics.median(r["wall_s"] for r in results.get("ragaudit", [{"wall_s": 0}]))
        rows = [_summary(label, rs, floor, base) for label, rs in results.items()]
        key = f"{n_questions}x{depth}"
        all_rows[key] = rows
        sizes_mb[key] = size_mb
        print(f"\n### {n_questions:,} questions x {depth} (run + qrels {size_mb:,.0f} MB)\n")
        print("| tool | runs | median s | min-max s | parse s | eval s | / ragaudit | / floor "
              "| peak MB | peak / files |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['tool']} | {r['n']} | {r['median_s']:.2f} | {r['min_s']:.2f}-"
                  f"{r['max_s']:.2f} | {r['parse_s']:.2f} | {r['eval_s']:.2f} | "
                  f"{r['vs_ragaudit']:.2f}x | {r['vs_floor']:.2f}x | {r['peak_mb']:.0f} | "
                  f"{r['peak_mb'] / size_mb:.2f} |")  # fmt: skip
        checks.append(f"{n_questions:,} × {depth}: {_check_means(rows)}")
        print(f"\n{checks[-1]}\n", flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M")
    out = Path(args.out) / f"bench_metrics_{stamp}.json"
    out.write_text(json.dumps({"load_at_start": load, "sizes": all_rows}, indent=1))
    summary = "\n".join([
        f"{measured(started, load)}  "
        f"`{' '.join(['bench_metrics.py', *sys.argv[1:]])}`: median (min-max) seconds of "
        f"{args.repeats} fresh processes per tool (ranx and ir_measures: {args.slow_repeats} "
        "from 1M rows up), peak RSS of the tool's process.",
        "",
        summary_table(all_rows, sizes_mb),
        "",
        *[f"- {line}" for line in checks],
    ])  # fmt: skip
    print("\n## summary\n\n" + summary + "\n")
    print(f"results: {out}  (load average at end {os.getloadavg()[0]:.1f})")
    if args.readme:
        splice(args.readme, summary)
        print(f"README.md updated (between the <!-- {args.readme} --> markers)")


if __name__ == "__main__":
    main()
