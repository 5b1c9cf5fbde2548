"""How often does ``judges audit`` call the offline judges biased?  200 seeded datasets.

Each dataset is the bundled benchmark's extractive run (``run --k 3``, BM25, 800-character
chunks, the demo's configuration) with every question's answer drawn, with the dataset's
seed, from four kinds: the run's own extractive answer (p = 0.4), the reference answer
(0.3), the reference answer with its first number changed (+1: a wrong answer, 0.2) and a
refusal (0.1).  ``judges audit`` then runs on the offline judges with the same seed (which
also draws the padding sentences), the position row with the offline pairwise judge.  The
offline judges are rules, so any SIGNIFICANT row is a real sensitivity of the rules to a
change that should not matter (or a false alarm of the test, which at alpha = 0.05 happens at
most 5% of the time per row).

The target of issue 36: "no evidence" of bias (no SIGNIFICANT row) in >= 95% of the datasets.
The table counts, per row, each verdict word, and the datasets with no SIGNIFICANT row, with
its Clopper-Pearson interval.

Usage::

    uv run python benchmarks/judge_audit_null.py [--datasets 200] [--readme]

``--readme`` splices the output into docs/guide/instruments.md between the ``judge-audit-null``
markers.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
from _readme import measured, splice, start

import ragaudit
from ragaudit._text import REFUSAL
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.judge_audit import OfflineAuditJudge, audit_judge
from ragaudit.judges.pairwise import OfflinePairwiseJudge
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.corpus import run_chunks
from ragaudit.pipeline.harness import run_pipeline
from ragaudit.stats.intervals import proportion_interval

BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "guide" / "instruments.md"
_NUMBER = re.compile(r"\d+")


def _dataset(base: SavedRun, seed: int) -> SavedRun:
    rng = np.random.default_rng([seed, 3600])
    rows = []
    for row in base.rows:
        reference = str(row.get("reference_answer") or "")
        kind = rng.choice(4, p=[0.4, 0.3, 0.2, 0.1])
        answer = str(row["answer"])
        if kind == 1 and reference:
            answer = reference
        elif kind == 2 and _NUMBER.search(reference):
            answer = _NUMBER.sub(lambda m: str(int(m.group()) + 1), reference, count=1)
        elif kind == 3:
            answer = REFUSAL
        rows.append({**row, "answer": answer})
    return SavedRun.from_dict({**base.to_dict(), "rows": rows}, path=base.path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--readme", action="store_true")
    args = parser.parse_args(argv)
    started, load = start("judges audit on the offline judges: 200 seeded null datasets")
    with tempfile.TemporaryDirectory() as out:
        config = RunConfig(BENCHMARK / "corpus", BENCHMARK / "golden.yaml", out_dir=Path(out),
                           k=3, record_latency=False)  # fmt: skip
        base = run_pipeline(config)
    chunks = run_chunks(BENCHMARK / "corpus", base.config)
    words: dict[str, Counter[str]] = {}
    clean = 0
    for seed in range(args.datasets):
        audit = audit_judge(_dataset(base, seed), chunks, OfflineAuditJudge(), seed=seed,
                            pairwise=OfflinePairwiseJudge())  # fmt: skip
        significant = False
        for row in audit.rows:
            if row.comparison is None:
                continue
            key = f"{row.test} / {row.metric}"
            words.setdefault(key, Counter())[row.comparison.verdict] += 1
            significant |= row.comparison.verdict == "SIGNIFICANT"
        clean += not significant
    n = args.datasets
    order = ("SIGNIFICANT", "borderline", "no evidence", "too few differing questions")
    lines = [
        f"| row ({n} datasets, seeds 0-{n - 1}) | " + " | ".join(order) + " |",
        "|---|" + "---:|" * len(order),
    ]
    for key, counts in words.items():
        lines.append(f"| {key} | " + " | ".join(str(counts[w]) for w in order) + " |")
    ci = proportion_interval(clean, n).confidence_interval
    lines += [
        "",
        f"Datasets with no SIGNIFICANT row: {clean}/{n} = {clean / n:.1%} "
        f"[{ci.low:.1%}, {ci.high:.1%}] (Clopper-Pearson exact 95%); target >= 95%.",
        "",
        measured(started, load),
    ]
    text = "\n".join(lines)
    print(text)
    if args.readme:
        splice("judge-audit-null", text, DOCS)
    sys.exit(0)


if __name__ == "__main__":
    main()
