"""The audit commands on large saved runs: `funnel`, `show` one question, `report`, `compare`.

Issue 25 measured 71 s for `funnel` and 177 s for `report` at 100,000 questions, 442 s and a
63 MB page for the HTML report at 200,000, and 178 s for `show RUN q199999`.  This script
generates saved runs of n questions shaped like `ragaudit run` output (20 retrieved chunks, 5
contexts, a gold document, an answer, judge verdicts and the ten per-question metrics of an
offline run; about 3 KB per question), then times each command in a fresh process and reads
its peak resident memory from ``wait4`` (and, sampled every 5 ms, that of the command with its
children, the larger figure kept).  Each command runs on the JSON runs and, with ``--formats
json parquet`` (the default), on the same runs converted to Parquet by ``ragaudit convert``
(the conversion is timed too, as ``convert``).

Usage::

    uv run python benchmarks/bench_scale.py                     # n = 1k, 10k, 100k, 200k
    uv run python benchmarks/bench_scale.py --n 1000 10000      # a quick look
    uv run python benchmarks/bench_scale.py --readme            # also update README.md
    uv run python benchmarks/bench_scale.py --n 100000 --formats parquet --commands compare

``--tile SOURCE.parquet N PATH.parquet`` builds a Parquet run of N questions by repeating
those of a generated one (1M questions: the JSON would not fit in memory to generate).
Generated runs are cached under ``--dir`` (default ``/tmp/ragaudit-bench-scale``); every
random choice comes from ``numpy.random.default_rng(seed)`` (``--seed``, printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from _readme import measured, splice, start

N_DOCS = 2_000
DEPTH = 20
K = 5
WORDS = [
    "leave",
    "policy",
    "annual",
    "days",
    "manager",
    "request",
    "travel",
    "expense",
    "receipt",
    "laptop",
    "password",
    "office",
    "booking",
    "approval",
    "remote",
    "contract",
    "holiday",
    "budget",
    "refund",
    "invoice",
    "security",
    "badge",
]


def _text(rng: np.random.Generator, n_words: int) -> str:
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n_words))


def make_run(n: int, path: Path, seed: int) -> Path:
    """A saved run of ``n`` questions (see the module docstring), written to ``path``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        gold = int(rng.integers(0, N_DOCS))
        docs = rng.integers(0, N_DOCS, DEPTH)
        if rng.random() < 0.8:  # the gold document is retrieved, somewhere in the top 20
            docs[int(rng.integers(0, DEPTH))] = gold
        retrieved = [
            {"chunk_id": f"doc{d}#{j % 7}", "doc_id": f"doc{d}", "score": round(30.0 - j, 3),
             "rank": j + 1}
            for j, d in enumerate(docs.tolist())
        ]  # fmt: skip
        top = [r["doc_id"] for r in retrieved[:K]]
        hit = f"doc{gold}" in top
        rank = top.index(f"doc{gold}") + 1 if hit else None
        evidence = hit and bool(rng.random() < 0.85)
        correct = evidence and bool(rng.random() < 0.8)
        ndcg = 1.0 / np.log2(rank + 1) if rank else 0.0
        rows.append({
            "id": f"q{i}",
            "question": _text(rng, 12) + "?",
            "answerable": True,
            "reference_answer": _text(rng, 15),
            "keywords": WORDS[i % len(WORDS)].split(),
            "gold_docs": [f"doc{gold}"],
            "tags": [],
            "retrieved": retrieved,
            "context_ids": [r["chunk_id"] for r in retrieved[:K]],
            "answer": _text(rng, 40),
            "abstained": False,
            "citations": [1],
            "latency_ms": None,
            "judges": {"abstained": False, "correct": correct, "evidence_in_context": evidence,
                       "numeric_match": None},
            "metrics": {
                "hit@k": float(hit), "recall@k": float(hit), "precision@k": float(hit) / K,
                "mrr@k": 1.0 / rank if rank else 0.0, "ndcg@k": round(float(ndcg), 6),
                "map@k": 1.0 / rank if rank else 0.0, "answered": 1.0, "correct": float(correct),
                "keyword_hit": float(rng.random() < 0.7), "evidence_in_context": float(evidence),
            },
            "generation_error": None,
        })  # fmt: skip
    doc = {
        "format": "ragaudit.run", "format_version": 1, "name": path.stem,
        "config": {"k": K, "chunk_size": 800, "chunk_overlap": 100, "chunker": "fixed",
                   "retriever": "bm25", "generator": "extractive", "judges": "offline",
                   "seed": seed, "retrieval_depth": DEPTH},
        "rows": rows,
    }  # fmt: skip
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


#: The children's environment: bytecode cached, as an installed package has it.  With
#: PYTHONDONTWRITEBYTECODE set (as in some sandboxes), every command compiled numpy, scipy and
#: ragaudit from source again: about 3 s of each command on a busy 2-core machine.
CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
CODE = "import sys; from ragaudit.cli import main; sys.exit(main())"


def _tree_rss(pid: int) -> tuple[float, int]:
    """Resident MB of process ``pid`` and its children now, and how many processes they are."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            pids = [pid, *map(int, listing.read().split())]
    except OSError:
        return 0.0, 0
    pages = 0
    for each in pids:
        try:
            with open(f"/proc/{each}/statm") as statm:
                pages += int(statm.read().split()[1])
        except (OSError, ValueError, IndexError):
            pass  # it ended meanwhile
    return pages * PAGE / 2**20, len(pids)


PAGE = os.sysconf("SC_PAGE_SIZE")


def timed(args: list[str]) -> tuple[float, float, int, float]:
    """Wall seconds and peak RSS (MB) of one ``ragaudit`` process and of the processes it
    starts, how many processes ran at once at most, and its CPU seconds (user + system, of
    the process and the children it waited for: on a loaded machine wall time measures the
    load as much as the command).  The peak is the larger of the
    process's own (``wait4``) and the sum over the process and its children sampled every 5 ms
    (``wait4`` reports the larger process's peak, not the sum, should a command start one)."""
    begin = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CODE, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=CHILD_ENV,
    )
    sampled = [0.0, 1.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            rss, count = _tree_rss(child.pid)
            sampled[:] = [max(sampled[0], rss), max(sampled[1], count)]

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    done.set()
    sampler.join()
    wall = time.perf_counter() - begin
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ragaudit {' '.join(args)} failed: {child.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
    cpu = usage.ru_utime + usage.ru_stime
    return wall, max(usage.ru_maxrss / 1024.0, sampled[0]), int(sampled[1]), cpu  # KiB on Linux


def _line(
    n: int, size: float, name: str, fmt: str, wall: float, rss: float, extra: str, cpu: float
) -> str:
    return (
        f"| {n:,} | {size:.0f} | `{name}` | {fmt} | {wall:.1f} | {cpu:.1f} | {rss:,.0f} | "
        f"{rss / size:.1f}{extra} |"
    )


def tile_run(source: Path, n: int, path: Path) -> Path:
    """A Parquet run of ``n`` questions: the questions of the Parquet run ``source`` repeated
    in turn, renamed ``q0 .. q{n-1}``, written a row group at a time (never held whole).

    For sizes whose JSON would not fit in memory to generate (1M questions: 3.4 GB of JSON,
    about 30 GB as Python rows); the content repeats, the work per question does not change.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ragaudit.data.saved_run.parquet import BATCH_ROWS

    table = pq.read_table(source)
    header = json.loads(table.schema.metadata[b"ragaudit.run"])
    header["name"] = path.stem
    schema = table.schema.with_metadata({b"ragaudit.run": json.dumps(header)})
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for start in range(0, n, BATCH_ROWS):
            rows = np.arange(start, min(start + BATCH_ROWS, n))
            part = table.take(pa.array(rows % table.num_rows))
            ids = pc.binary_join_element_wise("q", pa.array(rows.astype(str)), "")
            part = part.set_column(part.schema.get_field_index("id"), "id", ids)
            writer.write_table(part.replace_schema_metadata(schema.metadata))
    return path


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        make_run(int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return
    if sys.argv[1:2] == ["--tile"]:  # --tile SOURCE.parquet N PATH.parquet
        tile_run(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1_000, 10_000, 100_000, 200_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", default="/tmp/ragaudit-bench-scale")
    parser.add_argument("--commands", nargs="+", default=["funnel", "show", "report", "compare"])
    parser.add_argument("--formats", nargs="+", default=["json", "parquet"])
    parser.add_argument("--readme", action="store_true", help="Update README.md's table.")
    options = parser.parse_args()
    folder = Path(options.dir)
    folder.mkdir(parents=True, exist_ok=True)
    started, load = start("ragaudit on large saved runs")
    print(f"seed {options.seed}; runs in {folder}; formats: {' '.join(options.formats)}")
    rows = []
    for n in options.n:
        a = folder / f"a{n}.json"
        b = folder / f"b{n}.json"
        for path, seed in ((a, options.seed), (b, options.seed + 1)):
            if not path.exists():  # in a child: a forked command would inherit our memory
                subprocess.run(
                    [sys.executable, __file__, "--make", str(n), str(path), str(seed)], check=True
                )
        size = a.stat().st_size / 1e6
        for fmt in options.formats:
            if fmt == "parquet":
                for source in (a, b):
                    target = source.with_suffix(".parquet")
                    if not target.exists():
                        wall, rss, _, cpu = timed(["convert", str(source), str(target)])
                        if source == a:
                            rows.append(
                                _line(
                                    n,
                                    size,
                                    "convert",
                                    "json -> parquet",
                                    wall,
                                    rss,
                                    f"; {target.stat().st_size / 1e6:.0f} MB",
                                    cpu,
                                )
                            )
                            print(rows[-1], flush=True)
                a_run, b_run = a.with_suffix(".parquet"), b.with_suffix(".parquet")
            else:
                a_run, b_run = a, b
            commands = {
                "funnel": ["funnel", str(a_run)],
                "show": ["show", str(a_run), f"q{n - 1}"],
                "report": ["report", str(a_run), "--out", str(folder / f"report{n}.html")],
                "compare": ["compare", str(a_run), str(b_run)],
            }
            for name in options.commands:
                if n == options.n[0]:
                    timed(commands[name])  # untimed: writes the bytecode the later runs read
                wall, rss, processes, cpu = timed(commands[name])
                extra = f"; {processes} processes" if processes > 1 else ""
                if name == "report":
                    page = (folder / f"report{n}.html").stat().st_size / 1e6
                    extra += f"; page {page:.1f} MB"
                rows.append(_line(n, size, name, fmt, wall, rss, extra, cpu))
                print(rows[-1], flush=True)
    table = "\n".join([
        "| questions | JSON MB | command | read from | wall s | CPU s | peak RSS MB | "
        "RSS / JSON size |",
        "|---:|---:|---|---|---:|---:|---:|---:|",
        *rows,
    ])  # fmt: skip
    sizes = " ".join(map(str, options.n))
    summary = (
        f"{measured(started, load)}  `bench_scale.py --n {sizes}`, seed {options.seed}, "
        "one fresh process per command (bytecode cached), each on the JSON runs and on the "
        "same runs as Parquet (`ragaudit convert`); `compare` reads two runs of n questions "
        "(its RSS ratio is against one JSON run's size); peak RSS is the larger of wait4's "
        "and the sum over the command's processes sampled every 5 ms."
    )
    print(summary)
    if options.readme:
        splice("bench_scale", f"{summary}\n\n{table}")


if __name__ == "__main__":
    main()
