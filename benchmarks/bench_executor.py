"""The Ray executor against the threads (issue 34, item 5): its overhead, and its speed-up.

Two workloads, on a generated corpus (50 one-paragraph documents) and golden set:

1. **Overhead.**  A trivial pipeline (a dictionary look-up) on 1,000 questions, through
   ``evaluate_pipeline`` end to end (corpus, chunking, calls, checkpoint, metrics, file) with
   2 threads and with 2 Ray workers.  Ray is started once before (its start and shutdown are
   timed apart); each Ray run includes starting its actors.
2. **Speed-up.**  A CPU-bound toy pipeline, pure-Python arithmetic that holds the GIL for
   about ``--burn-ms`` per question, on ``--cpu-questions`` questions, with 1 and 2 workers on
   each executor.  Threads cannot run Python bytecode in parallel; Ray's worker processes can.

Every run writes the same file (checked: byte-identical, latency not recorded).  Printed: wall
time per run (median of ``--runs``), the driver's CPU time, ratios, and the load average, which
decides what 2 workers can gain on a shared 2-core machine.

Usage::

    uv run python benchmarks/bench_executor.py                # the numbers in docs/guide/harness.md
    uv run python benchmarks/bench_executor.py --runs 3 --cpu-questions 100
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _readme import measured, start

from ragaudit.pipeline.live import evaluate_pipeline
from ragaudit.pipeline.ray_executor import start_ray

N_DOCS = 50


def write_inputs(root: Path, n_questions: int) -> tuple[Path, Path, dict[str, str]]:
    """A corpus of ``N_DOCS`` documents and ``n_questions`` questions about them."""
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    texts = {}
    for d in range(N_DOCS):
        text = f"# Policy {d}\nThe allowance of policy {d} is {d + 10} days per year."
        (corpus / f"policy{d}.md").write_text(text, encoding="utf-8")
        texts[f"policy{d}"] = text
    lines = []
    questions = {}
    for i in range(n_questions):
        d = i % N_DOCS
        question = f"What is the allowance of policy {d} (case {i})?"
        lines.append(
            f"- {{id: q{i:04d}, question: '{question}', answer: '{d + 10} days', "
            f"sources: [policy{d}], keywords: ['{d + 10} days']}}"
        )
        questions[question] = texts[f"policy{d}"]
    golden = root / "golden.yaml"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus, golden, questions


class Trivial:
    """Answers from a dictionary: the cost of a call is the executor's alone."""

    def __init__(self, contexts: dict[str, str]) -> None:
        self.contexts = contexts

    def __call__(self, question: str) -> dict[str, Any]:
        text = self.contexts[question]
        return {"answer": f"{text.split(' is ')[1]} [1]", "contexts": [text]}


class Burn(Trivial):
    """Trivial, after ``loops`` iterations of pure-Python arithmetic (holds the GIL)."""

    def __init__(self, contexts: dict[str, str], loops: int) -> None:
        super().__init__(contexts)
        self.loops = loops

    def __call__(self, question: str) -> dict[str, Any]:
        total = 0
        for i in range(self.loops):
            total = (total + i * i) % 1_000_003
        out = super().__call__(question)
        out["answer"] += "" if total >= 0 else "!"  # the loop's result is used
        return out


def calibrate(burn_ms: float) -> int:
    """Loops of :class:`Burn` that take about ``burn_ms`` of CPU time (not wall time, which
    a loaded machine stretches)."""
    loops = 100_000
    while True:
        begin = time.process_time()
        Burn({"q": "a is b"}, loops)("q")
        took = (time.process_time() - begin) * 1000
        if took > 50:
            return max(1, round(loops * burn_ms / took))
        loops *= 2


def timed(runs: int, make: Callable[[], Any], **options: Any) -> tuple[float, float, bytes]:
    """Median wall and driver CPU seconds of ``runs`` evaluate_pipeline calls, and the file."""
    walls, cpus = [], []
    data = b""
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            before = resource.getrusage(resource.RUSAGE_SELF)
            begin = time.perf_counter()
            saved = evaluate_pipeline(make(), out_dir=out, record_latency=False, k=1, **options)
            walls.append(time.perf_counter() - begin)
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            data = Path(saved.path).read_bytes()
    return statistics.median(walls), statistics.median(cpus), data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--cpu-questions", type=int, default=200)
    parser.add_argument("--burn-ms", type=float, default=50.0)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    started, load = start("bench_executor: Ray workers against threads")
    print(f"usable cores: {len(os.sched_getaffinity(0))}; runs per cell: {args.runs} (median)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus, golden, contexts = write_inputs(root / "trivial", args.questions)
        begin = time.perf_counter()
        stop = start_ray(num_cpus=2)
        ray_start = time.perf_counter() - begin
        try:
            print(f"\nRay start (local, 2 CPUs): {ray_start:.1f} s")
            print(f"\n1. overhead: trivial pipeline, {args.questions} questions, 2 workers")
            common = dict(corpus=corpus, max_workers=2, name="trivial")
            t_wall, t_cpu, t_file = timed(args.runs, lambda: Trivial(contexts), golden=golden,
                                          executor="threads", **common)  # fmt: skip
            r_wall, r_cpu, r_file = timed(args.runs, lambda: Trivial(contexts), golden=golden,
                                          executor="ray", **common)  # fmt: skip
            assert r_file == t_file, "the executors wrote different files"
            # The same on the first 10 questions: what a run costs whatever its size.
            few = dict(common, limit=10)
            t10, _, _ = timed(args.runs, lambda: Trivial(contexts), golden=golden,
                              executor="threads", **few)  # fmt: skip
            r10, _, _ = timed(args.runs, lambda: Trivial(contexts), golden=golden,
                              executor="ray", **few)  # fmt: skip
            per_unit = ((r_wall - r10) - (t_wall - t10)) / (args.questions - 10) * 1000
            print(f"   threads  {t_wall:7.2f} s wall  {t_cpu:6.2f} s driver CPU  "
                  f"(10 questions: {t10:.2f} s)")  # fmt: skip
            print(f"   ray      {r_wall:7.2f} s wall  {r_cpu:6.2f} s driver CPU  "
                  f"(10 questions: {r10:.2f} s)")  # fmt: skip
            print(
                f"   ray / threads: {r_wall / t_wall:.2f}x wall; fixed cost of a Ray run "
                f"(actors started, 10 questions) {r10 - t10:.1f} s; then {per_unit:+.2f} ms per "
                f"question (load {os.getloadavg()[0]:.1f}); files byte-identical"
            )
            loops = calibrate(args.burn_ms)
            corpus, golden, contexts = write_inputs(root / "cpu", args.cpu_questions)
            print(
                f"\n2. speed-up: CPU-bound pipeline ({loops:,} pure-Python loops, about "
                f"{args.burn_ms:g} ms of CPU per question), {args.cpu_questions} questions"
            )
            walls: dict[tuple[str, int], float] = {}
            fixed: dict[tuple[str, int], float] = {}
            files = set()
            for executor in ("threads", "ray"):
                for workers in (1, 2):
                    options = dict(golden=golden, corpus=corpus, max_workers=workers,
                                   name="cpu", executor=executor)  # fmt: skip
                    wall, cpu, data = timed(args.runs, lambda: Burn(contexts, loops), **options)
                    # the same workers on `workers` questions: what starting them costs
                    fixed[executor, workers], _, _ = timed(
                        args.runs, lambda: Burn(contexts, loops), limit=workers, **options
                    )
                    walls[executor, workers] = wall
                    files.add(data)
                    print(
                        f"   {executor:<7} {workers} worker{'s' if workers > 1 else ' '} "
                        f"{wall:7.2f} s wall  {cpu:6.2f} s driver CPU  (a run of {workers} "
                        f"question{'s' if workers > 1 else ''}: {fixed[executor, workers]:.2f}"
                        f" s; load {os.getloadavg()[0]:.1f})"
                    )
            assert len(files) == 1, "the executors wrote different files"
            for executor in ("threads", "ray"):
                speed_up = walls[executor, 1] / walls[executor, 2]
                work = [walls[executor, w] - fixed[executor, w] for w in (1, 2)]
                print(
                    f"   {executor} speed-up, 2 workers over 1: {speed_up:.2f}x end to end, "
                    f"{work[0] / work[1]:.2f}x without the start-up run"
                )
            print(
                "   ray 2 workers against threads 2 workers: "
                f"{walls['threads', 2] / walls['ray', 2]:.2f}x as fast end to end; "
                "files byte-identical"
            )
        finally:
            begin = time.perf_counter()
            stop()
            print(f"\nRay shutdown: {time.perf_counter() - begin:.1f} s")
    print(measured(started, load))


if __name__ == "__main__":
    main()
