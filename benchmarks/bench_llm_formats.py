"""Invalid judge replies from a real small model: ``json_object`` against ``json_schema``.

The demo's ``k3_cs800`` run is rebuilt offline and the first ``--n`` answerable questions are
judged by the LLM judges (``--judges``, default all five) twice, on fresh caches: once with
the client held at ``response_format={"type": "json_object"}`` (what judges sent before they
sent their schema)
and once as shipped (``json_schema``, strict).  Both runs cap each reply at the judge's
``max_output_tokens`` and repair invalid replies, so the table shows the effect of the format
alone: replies invalid at the first attempt, cut at the token cap, repaired, and judge calls
that still ended without a verdict.

Usage::

    uv run python scripts/serve_local_model.py --model smollm2 &      # prints the URL
    uv run python benchmarks/bench_llm_formats.py --base-url http://127.0.0.1:PORT/v1 \\
        --model smollm2-135m-instruct --n 2 --judges correctness,relevance

This is a benchmark, not a test: nothing here asserts a number.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from _readme import measured, splice, start

from ragaudit.cli.demo import run_demo
from ragaudit.judges.llm import JUDGE_NAMES, LLMJudges, items_from_rows
from ragaudit.llm import LLMClient, LLMConfig

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "llm.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("RAGAUDIT_LLM_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("RAGAUDIT_LLM_MODEL"))
    parser.add_argument("--n", type=int, default=3, help="answerable questions judged")
    parser.add_argument("--judges", default=",".join(JUDGE_NAMES), help="comma-separated")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--readme", action="store_true", help="splice docs/guide/llm.md")
    args = parser.parse_args(argv)
    if not args.base_url or not args.model:
        parser.error("pass --base-url and --model (or set RAGAUDIT_LLM_BASE_URL/_MODEL)")
    started, load = start(f"judge reply formats of {args.model}")
    with tempfile.TemporaryDirectory() as out:
        ctx = run_demo(out, echo=lambda line: None)
    rows = [r for r in ctx.runs["k3_cs800"].to_dict()["rows"] if r.get("answerable", True)]
    _, items = items_from_rows(rows[: args.n], {c.chunk_id: c.text for c in ctx.chunks})
    names = [j for j in args.judges.split(",") if j]
    print(f"{len(items)} answers x judges {names}: {[i.question_id for i in items]}")
    lines = [
        "| format | calls | invalid | cut at cap | repair requests | repaired | no verdict "
        "| s/call |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode in ("json_object", "json_schema"):
        with tempfile.TemporaryDirectory() as cache:
            config = LLMConfig(
                base_url=args.base_url,
                model=args.model,
                timeout=args.timeout,
                max_concurrency=1,
                cache_path=os.path.join(cache, "llm.sqlite"),
            )
            with LLMClient(config) as client:
                # Hold the client at the older format (a benchmark may reach inside).
                client._format = mode
                t0 = time.monotonic()
                verdicts = LLMJudges(client, names).judge(items)
                seconds = time.monotonic() - t0
                usage = client.usage_summary()
        s = usage["structured"]
        failed = sum(len(v.get("judge_errors") or {}) for v in verdicts)
        calls = usage["calls"]
        lines.append(
            f"| {mode} | {calls} | {s['invalid_replies']} | {s['cut_at_length']} | "
            f"{s['repair_requests']} | {s['repaired']} | {failed} | {seconds / max(calls, 1):.1f} |"
        )
        print(lines[-1], flush=True)
    table = "\n".join(lines) + (
        f"\n\n{args.model} on 127.0.0.1, judges {', '.join(names)} on the first {len(items)} "
        f'answerable questions of the demo\'s k3_cs800 run; "no verdict" counts (answer, judge) '
        f"pairs left without a verdict after the repairs. {measured(started, load)}"
    )
    print(table)
    if args.readme:
        splice("bench-llm-formats", table, GUIDE)
        print(f"spliced into {GUIDE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
