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
        --tools ragaudit pytrec_eval          # bpref, judged@10, infAP (not run by default)
    uv run python benchmarks/bench_metrics.py --metric-set standard incomplete \
        --sizes 100000x100 --tools ragaudit pytrec_eval   # both sets, paired in each pass
    uv run python benchmarks/bench_metrics.py ... --render-only --readme   # the saved rounds

Several ``--metric-set`` make a *paired* round: in each pass every tool runs once per set, so
that the sets are measured under the same load, and the summary gives each set's ratio to
pytrec_eval and, per round, the ratio of those ratios (issue 24: the measures for incomplete
labels keep evaluate's ratio to pytrec_eval).

Each invocation is one *round*, saved under ``--out``; the summary (and the README table) is
rendered over every round of the same command saved there (:mod:`_rounds`), so that every
ratio is quoted as its range over rounds run at different loads, not as one quiet run.

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
from _metric_data import build_files, build_large
from _readme import machine, splice, start
from _rounds import VERSION, load_rounds, render_rounds

HERE = Path(__file__).resolve().parent
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
# workers (each runs in a fresh interpreter)
# --------------------------------------------------------------------------------------------
TOOLS = ("floor", "floor-polars", "ragaudit", "ragaudit-stream", "ragaudit-cli", "pytrec_eval",
         "ranx", "ir_measures")  # fmt: skip
IR_MEASURES = {"ndcg@10": "nDCG@10", "map@100": "AP@100", "mrr@10": "RR@10",
               "recall@100": "R@100", "precision@10": "P@10"}  # fmt: skip
# --metric-set incomplete: the measures for incomplete labels.  judged@10 has no trec_eval
# measure (ir_measures computes it; it breaks ties by id ascending, trec_eval and ragaudit by id
# descending, so its mean may differ where a tie straddles rank 10); bpref is checked against
# pytrec_eval.
METRIC_SETS: dict[str, dict[str, object]] = {
    "standard": {"ragaudit": METRICS, "trec": TREC_MEASURES, "ir_measures": IR_MEASURES,
                 "ranx": METRICS},
    "incomplete": {"ragaudit": ["bpref", "judged@10", "infap"],
                   "trec": {"bpref": "bpref", "infap": "infAP"},
                   "ir_measures": {"bpref": "Bpref", "judged@10": "Judged@10"},
                   "ranx": ["bpref"]},
}  # fmt: skip
# both: the standard set and the incomplete-label set in one evaluation.
METRIC_SETS["both"] = {
    key: (
        [*METRIC_SETS["standard"][key], *METRIC_SETS["incomplete"][key]]  # type: ignore[misc]
        if isinstance(METRIC_SETS["standard"][key], list)
        else {**METRIC_SETS["standard"][key], **METRIC_SETS["incomplete"][key]}  # type: ignore[dict-item]
    )
    for key in METRIC_SETS["standard"]
}


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
    means: dict[str, float] = {}
    # t_ready: after the tool's imports, so that the parent can tell start-up from work.
    if tool == "floor":
        import pyarrow.csv  # noqa: F401

        t0 = t_ready = time.perf_counter()
        _floor_read(qrels_path, ["qid", "iter", "docid", "grade"])
        _floor_read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"])
        t_parse = time.perf_counter()
    elif tool == "floor-polars":
        import polars  # noqa: F401

        t0 = t_ready = time.perf_counter()
        _polars_read(qrels_path, ["qid", "iter", "docid", "grade"])
        _polars_read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"])
        t_parse = time.perf_counter()
    elif tool == "ragaudit":
        from ragaudit.data.formats import read_qrels, read_run
        from ragaudit.metrics import evaluate

        t0 = t_ready = time.perf_counter()
        qrels = read_qrels(qrels_path)
        run = read_run(run_path)
        t_parse = time.perf_counter()
        means = dict(evaluate(qrels, run, metrics, missing="skip").means)
    elif tool == "ragaudit-stream":
        from ragaudit.data.formats import read_qrels
        from ragaudit.metrics import evaluate_stream

        t0 = t_ready = time.perf_counter()
        qrels = read_qrels(qrels_path)
        t_parse = time.perf_counter()
        means = dict(evaluate_stream(qrels, run_path, metrics, missing="skip").means)
    elif tool == "pytrec_eval":
        import pytrec_eval

        t0 = t_ready = time.perf_counter()
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

        t0 = t_ready = time.perf_counter()
        qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
        run = ranx.Run.from_file(run_path, kind="trec")
        t_parse = time.perf_counter()
        found_ranx = ranx.evaluate(qrels, run, ranx_metrics)
        if len(ranx_metrics) == 1:  # ranx returns a bare number for one metric
            found_ranx = {ranx_metrics[0]: found_ranx}
        means = {k: float(v) for k, v in found_ranx.items()}
    elif tool == "ir_measures":
        import ir_measures

        t0 = t_ready = time.perf_counter()
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
    return {"parse_s": t_parse - t0, "eval_s": t1 - t_parse, "work_s": t1 - t_ready,
            "peak_mb": _peak_mb(), "means": means}  # fmt: skip


# Workers may write .pyc files, as an installed package has them after its first run
# (PYTHONDONTWRITEBYTECODE, set in some shells, would make every worker compile from source).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _spawn(command: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``command``; its wall time and (from ``wait4``) its own peak RSS and CPU time."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=err,
            env={k: v for k, v in (env or ENV).items() if k != "PYTHONDONTWRITEBYTECODE"},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{command} failed:\n{stderr[-3000:]}")
    return {"wall_s": wall, "child_peak_mb": usage.ru_maxrss / 1024,
            "cpu_s": usage.ru_utime + usage.ru_stime, "stdout": stdout}  # fmt: skip


def _run_once(
    tool: str, qrels: Path, run: Path, env: dict[str, str] | None, metric_set: str
) -> dict[str, object]:
    if tool == "ragaudit-cli":  # the `ragaudit evaluate` command, as a user types it
        metrics: list[str] = METRIC_SETS[metric_set]["ragaudit"]  # type: ignore[assignment]
        command = [
            str(Path(sys.executable).with_name("ragaudit")),
            "evaluate",
            "--qrels",
            str(qrels),
            "--run",
            str(run),
            "--missing",
            "skip",
            "--format",
            "json",
        ]
        command += [arg for m in metrics for arg in ("-m", m)]  # fmt: skip
        result = _spawn(command)
        printed = json.loads(str(result.pop("stdout")))
        result.update(means=printed["metrics"], peak_mb=result["child_peak_mb"])
        return result  # no inner clock: start-up is not separated
    result = _spawn([sys.executable, __file__, "--worker", tool, str(qrels), str(run),
                     metric_set], env)  # fmt: skip
    result.update(json.loads(str(result.pop("stdout")).strip().splitlines()[-1]))
    return result


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------
DEFAULT_SIZES = "1000x10,1000x100,10000x10,10000x100,100000x10,100000x100,1000000x10"


def _read_files(qrels: Path, run: Path) -> dict[str, int]:
    """Read both files once (so the first tool timed is not the only one to read from disk)
    and count their lines and bytes."""
    counts = {}
    for name, path in (("run", run), ("qrels", qrels)):
        lines = 0
        with path.open("rb") as handle:
            while block := handle.read(1 << 24):
                lines += block.count(b"\n")
        counts[f"{name}_lines"], counts[f"{name}_bytes"] = lines, path.stat().st_size
    return counts


def _runs(
    tool: str, qrels: Path, run: Path, repeats: int, env: dict[str, str], metric_set: str
) -> list[dict]:
    name = "ranx" if tool.startswith("ranx") else tool
    return [
        _run_once(name, qrels, run, env if name == "ranx" else None, metric_set)
        for _ in range(repeats)
    ]


def _summary(label: str, results: list[dict], floor: float, base: float) -> dict[str, object]:
    walls = [float(r["wall_s"]) for r in results]
    median = statistics.median(walls)

    def mid(field: str) -> float | None:
        values = [float(r[field]) for r in results if field in r]
        return statistics.median(values) if values else None

    work = mid("work_s")
    return {
        "tool": label,
        "n": len(walls),
        "median_s": median,
        "min_s": min(walls),
        "max_s": max(walls),
        "parse_s": mid("parse_s"),
        "eval_s": mid("eval_s"),
        # interpreter start, imports and exit: the wall clock not spent reading or scoring
        "startup_s": None if work is None else median - work,
        "cpu_s": mid("cpu_s"),
        "peak_mb": max(float(r["peak_mb"]) for r in results),
        "vs_ragaudit": median / base if base else float("nan"),
        "vs_floor": median / floor if floor else float("nan"),
        "means": results[0]["means"],
        # each run's times in pass order, so that paired rounds can pair runs of one pass
        "walls": walls,
        "evals": [r.get("eval_s") for r in results],
    }


def _num(value: object) -> str:
    return "-" if value is None else f"{float(value):.2f}"  # type: ignore[arg-type]


def _print_size(key: str, files: dict[str, int], rows: list[dict[str, object]]) -> None:
    size_mb = (files["run_bytes"] + files["qrels_bytes"]) / 1e6
    print(f"\n### {key}: run {files['run_lines']:,} lines, qrels {files['qrels_lines']:,} lines "
          f"({size_mb:,.0f} MB)\n")  # fmt: skip
    print("| tool | runs | median s | min-max s | start-up s | parse s | eval s | / ragaudit "
          "| / floor | peak MB | peak / files |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['tool']} | {r['n']} | {r['median_s']:.2f} | {r['min_s']:.2f}-"
              f"{r['max_s']:.2f} | {_num(r['startup_s'])} | {_num(r['parse_s'])} | "
              f"{_num(r['eval_s'])} | {r['vs_ragaudit']:.2f}x | {r['vs_floor']:.2f}x | "
              f"{r['peak_mb']:.0f} | {float(r['peak_mb']) / size_mb:.2f} |")  # fmt: skip


def _label(tool: str, metric_set: str, sets: list[str]) -> str:
    """A tool's name in the results: ``"ragaudit"``, or ``"ragaudit [incomplete]"`` in a paired
    round (several metric sets)."""
    return tool if len(sets) == 1 else f"{tool} [{metric_set}]"


def _set_of(label: str, sets: list[str]) -> str:
    """The metric set a result label was measured with (the inverse of :func:`_label`)."""
    for metric_set in sets:
        if label.endswith(f" [{metric_set}]"):
            return metric_set
    return sets[0]


def _base(results: dict[str, list[dict]], label: str, sets: list[str]) -> float:
    """ragaudit's median time with the metric set of ``label`` (0 when ragaudit did not run)."""
    ours = results.get(_label("ragaudit", _set_of(label, sets), sets), [{"wall_s": 0}])
    return statistics.median(r["wall_s"] for r in ours)


def _command_args(argv: list[str]) -> list[str]:
    """The arguments that name the command (whose saved rounds are summarised together):
    ``--render-only`` and ``--since`` choose what to print, not what was measured."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--since":
            skip = True
        elif arg != "--render-only" and not arg.startswith("--since="):
            out.append(arg)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="questions x depth, comma-separated")
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slow-repeats", type=int, default=1,
                        help="runs of ranx and ir_measures from 100k rows up")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--metric-set", nargs="+", choices=list(METRIC_SETS),
                        default=["standard"],
                        help="standard: ndcg@10, map@100, mrr@10, recall@100, precision@10; "
                        "incomplete: bpref, judged@10, infAP; both: the two at once.  "
                        "Several: each tool runs once per set in every pass (paired)")  # fmt: skip
    parser.add_argument("--since", metavar="TIME",
                        help="summarise only the saved rounds started at or after TIME (ISO, "
                        "UTC, e.g. 2026-12-01T21:00): leaves out rounds of older code")  # fmt: skip
    parser.add_argument("--out", default=str(HERE / "results"),
                        help="folder of saved rounds (default benchmarks/results/, kept in git: "
                        "the rounds behind the README); each invocation adds one, and the "
                        "summary covers every round of the same command found there")  # fmt: skip
    parser.add_argument("--render-only", action="store_true",
                        help="measure nothing: print (and with --readme, paste) the summary of "
                        "the rounds already saved for this command")  # fmt: skip
    parser.add_argument("--readme", nargs="?", const="bench_metrics", metavar="MARKER",
                        help="also write the summary into README.md, between <!-- MARKER --> "
                        "and <!-- /MARKER --> (default marker: bench_metrics)")  # fmt: skip
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    return parser


def _measure(args: argparse.Namespace, this: dict) -> None:
    """One round: every size, every tool ``--repeats`` times; fills ``this``."""
    numba_cache = tempfile.mkdtemp(prefix="ranx-numba-")
    env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache)
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    for index, (n_questions, depth) in enumerate(sizes):
        build = build_large if n_questions * depth >= 50_000_000 else build_files
        qrels_path, run_path = build(n_questions, depth, args.seed)
        files = _read_files(qrels_path, run_path)
        slow = args.slow_repeats if n_questions * depth >= 100_000 * 10 else args.repeats
        # Tools interleaved, one run of each per pass, so that a burst of load from other users
        # falls on every tool alike instead of on whichever tool was running then.
        results: dict[str, list[dict]] = {}
        sets = args.metric_set
        for tool in args.tools:
            for metric_set in sets:
                label = _label("ranx (cold)", metric_set, sets)
                if tool == "ranx" and index == 0:
                    cold_env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="ranx-"))
                    results[label] = _runs("ranx", qrels_path, run_path, 1, cold_env, metric_set)
                if tool == "ranx":  # warm the cache
                    _runs("ranx", qrels_path, run_path, 1, env, metric_set)
        for attempt in range(args.repeats):
            # Paired rounds rotate the order of the sets from pass to pass: the run that follows
            # another tool's exit is not always the same set's.
            turn = attempt % len(sets)
            in_order = sets[turn:] + sets[:turn]
            for tool in args.tools:
                if tool in ("ranx", "ir_measures") and attempt >= slow:
                    continue
                # the floor reads the files and computes nothing: once per pass
                for metric_set in in_order[:1] if tool.startswith("floor") else in_order:
                    label = _label("ranx (warm)" if tool == "ranx" else tool, metric_set, sets)
                    runs = _runs(tool, qrels_path, run_path, 1, env, metric_set)
                    results.setdefault(label, []).extend(runs)
        for label, runs in results.items():
            times = ", ".join(f"{r['wall_s']:.2f}s" for r in runs)
            print(f"  {n_questions}x{depth} {label}: {times}", flush=True)
        floor = statistics.median(r["wall_s"] for r in results.get("floor", [{"wall_s": 0}]))
        key = f"{n_questions}x{depth}"
        this["sizes"][key] = [
            _summary(label, rs, floor, _base(results, label, sets)) for label, rs in results.items()
        ]
        this["files"][key] = files
        _print_size(key, files, this["sizes"][key])
        print(f"\nload average now {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    args = _parser().parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    command = " ".join(["bench_metrics.py", *_command_args(sys.argv[1:])])
    this: dict = {
        "version": VERSION, "sizes_asked": args.sizes, "tools": args.tools,
        # one set: its name, as rounds saved before paired rounds existed; several: the list
        "metric_set": args.metric_set[0] if len(args.metric_set) == 1 else args.metric_set,
        "seed": args.seed, "repeats": args.repeats,
        "slow_repeats": args.slow_repeats, "command": command, "machine": machine(),
        "interleaved": True,
        "rotated": len(args.metric_set) > 1,
        "sizes": {}, "files": {},
    }  # fmt: skip
    folder = Path(args.out)
    if not args.render_only:
        started, load = start(
            f"bench_metrics  seed={args.seed}  metrics={' + '.join(args.metric_set)}"
        )
        this.update(started=started.isoformat(timespec="seconds"), load_at_start=load)
        _measure(args, this)
        this.update(ended=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    load_at_end=os.getloadavg()[0])  # fmt: skip
        folder.mkdir(parents=True, exist_ok=True)
        stamp = started.strftime("%Y%m%dT%H%M%S")
        out = folder / f"bench_metrics_{stamp}.json"
        out.write_text(json.dumps(this, indent=1), encoding="utf-8")
        print(f"\nthis round: {out}  (load average at end {this['load_at_end']:.1f})")
    rounds = load_rounds(folder, this, since=args.since)
    if not rounds:
        raise SystemExit(f"{folder}: no saved round of this command; run it without "
                         "--render-only first")  # fmt: skip
    summary = render_rounds(rounds, command)
    print(f"\n## summary over {len(rounds)} round(s) saved in {folder}\n\n{summary}\n")
    if args.readme:
        splice(args.readme, summary)
        print(f"README.md updated (between the <!-- {args.readme} --> markers)")


if __name__ == "__main__":
    main()
