"""A real model's LLM judges against the human-verdict fixtures of the bundled benchmark.

The demo's ``k3_cs800`` run (offline, deterministic) is rebuilt; a seeded random sample of its
questions is judged by the LLM judges of a model served on 127.0.0.1
(``scripts/serve_local_model.py``), and each judge's verdicts are compared with the fixtures
in ``src/ragaudit/benchmark/human_verdicts/`` through :func:`ragaudit.diagnose.calibration.
calibrate`: Cohen's kappa, TPR and FPR with exact (Clopper-Pearson) 95% intervals.  The
offline judge's verdicts on the same questions are reported beside them.

=================== =============================== ==========================
LLM judge           run metric                      fixture
=================== =============================== ==========================
correctness         ``correct``                     ``k3_cs800.correct``
sufficiency         ``sufficiency``                 ``k3_cs800.evidence_in_context``
faithfulness        ``faithfulness == 1``           ``k3_cs800.faithful``
=================== =============================== ==========================

A small CPU model is slow (about a minute per call on two busy cores), so the sample is small
and every reply goes to the sqlite cache (``--cache-dir``): an interrupted run resumes where it
stopped.  Replies the model got wrong in form are counted (invalid replies, repairs).

Usage::

    uv sync --group local-llm --group local-llm-qwen
    uv run python scripts/serve_local_model.py --model qwen2.5-coder-1.5b &   # prints the URL
    uv run python benchmarks/bench_llm_judges.py --base-url http://127.0.0.1:PORT/v1 \\
        --model qwen2.5-coder-1.5b-instruct-q4_k_m --n 20 --seed 0 [--readme]

``--readme`` splices the table into docs/guide/llm.md between ``<!-- bench-llm-judges -->``
markers.  This is a benchmark, not a test: nothing here asserts a number.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _readme import measured, splice, start

from ragaudit.cli.demo import run_demo
from ragaudit.data.human_grades import read_human_grades_file
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.calibration import calibrate
from ragaudit.judges.llm import LLMJudges, judge_saved_run
from ragaudit.llm import LLMClient, LLMConfig
from ragaudit.stats.intervals import proportion_interval

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "llm.md"
FIXTURES = Path(__file__).resolve().parent.parent / "src/ragaudit/benchmark/human_verdicts"
RUN = "k3_cs800"
#: judge -> (metric the LLM writes, fixture verdict, offline metric of the same run)
JUDGES: dict[str, tuple[str, str, str]] = {
    "correctness": ("correct", "correct", "correct"),
    "sufficiency": ("sufficiency", "evidence_in_context", "evidence_in_context"),
    "faithfulness": ("faithfulness", "faithful", "faithfulness"),
}


def _binary(run: SavedRun, metric: str) -> SavedRun:
    """The run with ``metric`` thresholded at 1 (faithfulness is a share; 'faithful' is all)."""
    rows = []
    for row in run.to_dict()["rows"]:
        metrics = dict(row.get("metrics") or {})
        value = metrics.get(metric)
        if value is not None:
            metrics[metric] = float(value >= 1.0 - 1e-9)
        rows.append({**row, "metrics": metrics})
    return SavedRun.from_dict({**run.to_dict(), "rows": rows})


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "n/a"
    ci = proportion_interval(k, n).confidence_interval
    return f"{k}/{n} = {k / n:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def agreement(run: SavedRun, human: dict[str, float], metric: str) -> dict[str, Any]:
    """calibrate()'s confusion and kappa, with exact intervals for TPR and FPR."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one-class kappa, unlabelled-question warnings
        cal = calibrate(_binary(run, metric), human, metric=metric)
    (tp, fn), (fp, tn) = cal.confusion
    return {
        "n": cal.n_labeled,
        "agree": (tp + tn) / cal.n_labeled,
        "kappa": cal.kappa,
        "tpr": _rate(tp, tp + fn),
        "fpr": _rate(fp, fp + tn),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("RAGAUDIT_LLM_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("RAGAUDIT_LLM_MODEL"))
    parser.add_argument("--judges", default="correctness,sufficiency")
    parser.add_argument("--n", type=int, default=20, help="questions sampled (0: all 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per request")
    parser.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/ragaudit"))
    parser.add_argument("--readme", action="store_true", help="splice docs/guide/llm.md")
    args = parser.parse_args(argv)
    if not args.base_url or not args.model:
        parser.error("pass --base-url and --model (or set RAGAUDIT_LLM_BASE_URL/_MODEL)")
    names = [j for j in args.judges.split(",") if j]
    started, load = start(f"LLM judges of {args.model} against the human verdicts")

    with tempfile.TemporaryDirectory() as out:
        ctx = run_demo(out, echo=lambda line: None)
    saved = ctx.runs[RUN]
    texts = {c.chunk_id: c.text for c in ctx.chunks}
    ids = [q.id for q in saved.questions]
    rng = np.random.default_rng(args.seed)
    n = len(ids) if args.n <= 0 else min(args.n, len(ids))
    sample = sorted(rng.choice(len(ids), size=n, replace=False).tolist())
    chosen = {ids[i] for i in sample}
    print(f"sample: {n} of {len(ids)} questions of {RUN}, seed {args.seed}: {sorted(chosen)}")
    subset = SavedRun.from_dict(
        {**saved.to_dict(), "rows": [r for r in saved.to_dict()["rows"] if r["id"] in chosen]}
    )

    config = LLMConfig(
        base_url=args.base_url,
        model=args.model,
        timeout=args.timeout,
        max_concurrency=1,  # llama.cpp serves one request at a time here
        max_retries=1,
        cache_path=os.path.join(args.cache_dir, "llm.sqlite"),
    )
    lines = [
        "| judge | verdict | n | agree | kappa | TPR [95% CI] | FPR [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    usage: dict[str, Any] = {}
    with LLMClient(config, stage="the benchmark's LLM judges") as client:
        for name in names:  # one judge at a time, so a partial run already answers something
            t0 = time.monotonic()
            judged, _ = judge_saved_run(
                subset,
                texts,
                LLMJudges(client, [name]),
                progress=lambda done, total, name=name: print(
                    f"  {name}: {done}/{total}", file=sys.stderr, flush=True
                ),
            )
            metric, fixture, offline_metric = JUDGES[name]
            human = read_human_grades_file(FIXTURES / f"{RUN}.{fixture}.jsonl", fixture)
            human_sample = {q: float(v) for q, v in human.items() if q in chosen}
            for who, run, m in (
                (f"LLM {name}", judged, metric),
                (f"offline {offline_metric}", subset, offline_metric),
            ):
                a = agreement(run, human_sample, m)
                lines.append(
                    f"| {who} | {fixture} | {a['n']} | {a['agree']:.2f} | {a['kappa']:.2f} | "
                    f"{a['tpr']} | {a['fpr']} |"
                )
            print(f"  {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
        usage = client.usage_summary()
    structured = usage["structured"]
    fresh = usage["calls"] - usage["cache_hits"]
    footer = (
        f"Model {args.model} served by llama.cpp (xllamacpp) on 127.0.0.1; {n} of 60 questions "
        f"of the demo's {RUN} run, drawn with seed {args.seed}; verdicts from "
        f"`src/ragaudit/benchmark/human_verdicts/` (graded by an AI agent, see its README). "
        f"{usage['calls']} judge calls ({fresh} sent, {usage['cache_hits']} from the cache); "
        f"response formats {structured['formats']}; {structured['invalid_replies']} invalid "
        f"replies ({structured['cut_at_length']} cut at the token cap), "
        f"{structured['repair_requests']} repair requests, {structured['repaired']} repaired. "
        f"TPR/FPR intervals are exact (Clopper-Pearson). {measured(started, load)}"
    )
    table = "\n".join(lines) + "\n\n" + footer
    print(table)
    if args.readme:
        splice("bench-llm-judges", table, GUIDE)
        print(f"spliced into {GUIDE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
