"""Agreement of the offline judges with graded verdicts, through ``calibrate``.

The script builds the runs the verdict files grade, exactly as their tests do (offline,
deterministic, a few seconds):

* the demo's two runs (``k3_cs800``, ``k6_cs800``: BM25, 800-character chunks, extractive
  reader, seed 0) against ``src/ragaudit/benchmark/human_verdicts/``;
* ``ragaudit run --golden tests/fixtures/outside_golden.yaml --k 3`` (a golden set written by
  someone else, with bare-number and "No" keywords) against ``tests/fixtures/outside_verdicts/``.

Beside them it judges the hand-written probes ``benchmarks/probes/judge_probe_v2.yaml`` (292
non-extractive answers) and ``judge_probe_v3.yaml`` (320, written blind by another session;
the judge was tuned on it from commit 863edc7 on, so its figures are tuning figures), each
frozen before any judge ran on it (``benchmarks/_judge_probe.py``): offline ``correct``
against the reader's label, per kind, as decided share and decided accuracy with
Clopper-Pearson intervals, and the refusals scored correct on answerable questions (must be
0).  Without ``--readme`` it also prints each sub-kind's disagreements.

For each judge (``correct``, ``evidence_in_context``, and ``faithful``: the offline
``faithfulness`` equal to 1, every sentence supported) it pools the runs' questions and
reports, through :func:`ragaudit.diagnose.calibration.calibrate`: raw agreement with its
Clopper-Pearson interval, Cohen's kappa, TPR = P(judge 1 | grader 1) and FPR = P(judge 1 |
grader 0) with Clopper-Pearson intervals, and every disagreeing question.  The targets of
issue 20: ``correct`` agrees on >= 95% of answers with kappa >= 0.85; ``evidence_in_context``
on >= 95%.

``--llm-runs DIR`` fills the LLM judge's rows from runs re-judged by the LLM judges
(``ragaudit judge``), saved under DIR with the demo's file names (``k3_cs800.json``,
``k6_cs800.json``, and ``outside/k3_cs800.json`` for the outside set); its evidence verdict is
the ``sufficiency`` judge.

Usage::

    uv run python benchmarks/bench_judges.py               # table and disagreements
    uv run python benchmarks/bench_judges.py --readme      # also splice docs/guide/judges.md
    uv run python benchmarks/bench_judges.py --llm-runs results-llm/

The verdicts were written by an AI agent reading every answer (their READMEs say how); they
are a careful reading, not a human panel.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from _judge_probe import PROBES, judge_probe, probe_table, subkind_table
from _readme import splice

from ragaudit.data.human_grades import read_human_grades_file
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.calibration import calibrate
from ragaudit.stats.intervals import proportion_interval

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide" / "judges.md"
DEMO_VERDICTS = Path(str(files("ragaudit.benchmark"))) / "human_verdicts"
OUTSIDE_GOLDEN = ROOT / "tests" / "fixtures" / "outside_golden.yaml"
OUTSIDE_VERDICTS = ROOT / "tests" / "fixtures" / "outside_verdicts"
#: verdict file key -> the run metric that judges it (``faithful``: faithfulness == 1).
JUDGES = {"correct": "correct", "evidence_in_context": "evidence_in_context",
          "faithful": "faithfulness"}  # fmt: skip
TARGETS = {"correct": (0.95, 0.85), "evidence_in_context": (0.95, None)}
#: The same, for runs re-judged by the LLM judges (evidence: the sufficiency judge).
LLM_JUDGES = {"correct": "correct", "evidence_in_context": "sufficiency",
              "faithful": "faithfulness"}  # fmt: skip
KEYWORDS = "keywords"  # pseudo-metric: keyword_correct
METHODS = {"correct": "offline `reference-claims/5`",
           "evidence_in_context": "offline `reference-claims-in-context/3`",
           "faithful": "offline `sentence-support/1`"}  # fmt: skip


def build_runs(out: Path) -> dict[str, SavedRun]:
    """The runs the verdict files grade: ``{label: saved run}``."""
    from ragaudit.pipeline.bundled import CONFIGURATIONS, SEED, benchmark_paths
    from ragaudit.pipeline.config import RunConfig
    from ragaudit.pipeline.harness import run_pipeline

    runs: dict[str, SavedRun] = {}
    with benchmark_paths() as (corpus, golden):
        for config in CONFIGURATIONS:
            saved = run_pipeline(
                RunConfig(corpus, golden, k=config.k, chunk_size=config.chunk_size,
                          chunk_overlap=config.chunk_overlap, name=config.name,
                          out_dir=out, seed=SEED, record_latency=False)
            )  # fmt: skip
            runs[f"demo/{saved.name}"] = SavedRun.from_dict(saved.to_dict())
        outside = run_pipeline(
            RunConfig(corpus, OUTSIDE_GOLDEN, k=3, out_dir=out / "outside", seed=0,
                      record_latency=False)
        )  # fmt: skip
        runs["outside/k3_cs800"] = SavedRun.from_dict(outside.to_dict())
    return runs


def load_runs(folder: Path) -> dict[str, SavedRun]:
    """LLM-judged runs saved under ``folder`` with the demo's file names."""
    from ragaudit.data.saved_run import load_saved_run

    where = {"demo/k3_cs800": folder / "k3_cs800.json", "demo/k6_cs800": folder / "k6_cs800.json",
             "outside/k3_cs800": folder / "outside" / "k3_cs800.json"}  # fmt: skip
    return {label: load_saved_run(path) for label, path in where.items() if path.exists()}


def verdict_file(label: str, key: str) -> Path:
    folder = DEMO_VERDICTS if label.startswith("demo/") else OUTSIDE_VERDICTS
    return folder / f"{label.split('/')[1]}.{key}.jsonl"


def keyword_correct(row: dict[str, Any]) -> float | None:
    """``correct`` as the judge before issue 20 decided it, from the verdicts it still writes:
    every keyword in the answer (``keyword_hit`` = 1), else every number of the reference
    (``numeric_match``); an abstention is right exactly for an unanswerable question."""
    judges = row.get("judges") or {}
    if not row.get("answerable", True) or judges.get("abstained"):
        return float(not row.get("answerable", True) and bool(judges.get("abstained")))
    hit = judges.get("keyword_hit")
    decided = hit == 1.0 if hit is not None else judges.get("numeric_match")
    return None if decided is None else float(decided)


def pooled(
    runs: dict[str, SavedRun], key: str, judges: dict[str, str] = JUDGES
) -> tuple[SavedRun, dict[str, float]]:
    """One run of every labelled question (ids ``label:qid``) and the graded verdicts.

    Each run's verdict file is read with its answer fingerprints and checked against the
    run's answers (a verdict on another answer stops the script), then the questions are
    pooled so one :func:`calibrate` call gives the agreement over all of them.
    """
    metric = judges[key]
    rows: list[dict[str, Any]] = []
    human: dict[str, float] = {}
    for label, run in runs.items():
        path = verdict_file(label, key)
        if not path.exists():
            continue
        graded = read_human_grades_file(path, key)
        graded.check_answers({q.id: q.answer for q in run.questions}, run.name)
        for row in run.to_dict()["rows"]:
            value = (
                keyword_correct(row)
                if metric == KEYWORDS
                else (row.get("metrics") or {}).get(metric)
            )
            if key == "faithful" and value is not None:
                value = float(value == 1.0)
            rows.append({**row, "id": f"{label}:{row['id']}", "metrics": {key: value}})
        human.update({f"{label}:{qid}": v for qid, v in graded.items()})
    # the pooled rows keep their own contexts: k is the deepest of the pooled runs'
    k = max([int(run.config.k) for run in runs.values()] + [1])
    return SavedRun.from_dict({"name": "pooled", "config": {"k": k}, "rows": rows}), human


@dataclass(frozen=True)
class Agreement:
    """One judge against the graded verdicts (the numbers of :func:`calibrate`)."""

    key: str
    n: int
    agree: int
    kappa: float
    tp: int
    fn: int
    fp: int
    tn: int
    undecided: int
    one_class: bool
    disagree: tuple[str, ...]

    def target(self) -> str:
        goal = TARGETS.get(self.key)
        if goal is None:
            return "-"
        share, kappa = goal
        ok = self.agree / self.n >= share and (kappa is None or self.kappa >= kappa)
        wanted = f">= {share:.0%}" + (f", kappa >= {kappa}" if kappa is not None else "")
        return f"{'met' if ok else 'NOT met'} ({wanted})"

    def cells(self) -> list[str]:
        kappa = "undefined (one class)" if self.one_class else f"{self.kappa:.3f}"
        agree = rate(self.agree, self.n)
        if self.undecided:
            agree += f"; {self.undecided} undecided"
        return [agree, kappa, rate(self.tp, self.tp + self.fn), rate(self.fp, self.fp + self.tn),
                self.target()]  # fmt: skip


def rate(k: int, n: int) -> str:
    """``k/n = p [low, high]`` with the Clopper-Pearson 95% interval."""
    if n == 0:
        return "n/a (none)"
    ci = proportion_interval(k, n).confidence_interval
    return f"{k}/{n} = {k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def agreement(
    runs: dict[str, SavedRun], key: str, judges: dict[str, str] = JUDGES
) -> Agreement | None:
    """The judge ``key`` of the pooled runs against the graded verdicts (None: no file)."""
    run, human = pooled(runs, key, judges)
    if not human:
        return None
    judged = {q.id: q.metrics.get(key) for q in run.questions}
    undecided = sum(1 for qid in human if judged.get(qid) is None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kappa with one class: shown as undefined
        cal = calibrate(run, human, metric=key)
    (tp, fn), (fp, tn) = cal.confusion
    disagree = tuple(
        qid for qid, v in human.items() if judged.get(qid) is not None and judged[qid] != v
    )
    one_class = min(tp + fn, fp + tn) == 0 or min(tp + fp, fn + tn) == 0
    return Agreement(
        key, cal.n_labeled, tp + tn, cal.kappa, tp, fn, fp, tn, undecided, one_class, disagree
    )


HEADER = ["judge", "method", "agreement [95% CI]", "Cohen's kappa", "TPR [95% CI]",
          "FPR [95% CI]", "target"]  # fmt: skip


def table(title: str, offline: dict[str, Agreement | None], llm: dict[str, Agreement | None],
          llm_method: str) -> list[str]:  # fmt: skip
    """The markdown table: per judge, the offline row and the LLM judge's row."""
    lines = [f"**{title}**", "", "| " + " | ".join(HEADER) + " |",
             "|" + "---|" * len(HEADER)]  # fmt: skip
    for key in JUDGES:
        for method, result in ((METHODS[key], offline[key]), (llm_method, llm.get(key))):
            if result is None and method is METHODS[key]:
                continue
            cells = result.cells() if result is not None else ["not measured"] + ["-"] * 4
            lines.append(f"| `{key}` | {method} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", action="store_true", help="splice docs/guide/judges.md")
    parser.add_argument("--llm-runs", type=Path, help="runs re-judged by the LLM judges")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        offline = build_runs(Path(tmp))
    llm_runs = load_runs(args.llm_runs) if args.llm_runs is not None else {}
    models = sorted({str((r.config.data.get("llm_judges") or {}).get("model"))
                     for r in llm_runs.values()})  # fmt: skip
    llm_method = (
        f"LLM judge ({', '.join(models)})"
        if llm_runs
        else "LLM judge (real model: `ragaudit judge`, then `--llm-runs DIR`)"
    )
    sets = {
        "Bundled benchmark: the demo's runs k3_cs800 and k6_cs800 (120 answers)": "demo/",
        "Outside golden set: tests/fixtures/outside_golden.yaml at k=3 (15 answers)": "outside/",
    }
    out: list[str] = []
    for title, prefix in sets.items():

        def subset(runs: dict[str, SavedRun], prefix: str = prefix) -> dict[str, SavedRun]:
            return {label: run for label, run in runs.items() if label.startswith(prefix)}

        mine = {key: agreement(subset(offline), key) for key in JUDGES}
        before = agreement(subset(offline), "correct", {"correct": KEYWORDS})
        theirs = {k: agreement(subset(llm_runs), k, LLM_JUDGES) for k in JUDGES} if llm_runs else {}
        lines = table(title, mine, theirs, llm_method)
        if before is not None:  # the keyword judge this one replaced, for comparison
            cells = " | ".join([*before.cells()[:4], "-"])
            lines.insert(5, f"| `correct` | keywords (the judge before issue 20) | {cells} |")
        out += [*lines, ""]
        for key, result in mine.items():
            if result is not None and result.disagree and not args.readme:
                print(f"{prefix}{key}: the offline judge disagrees on {', '.join(result.disagree)}")
    for probe in PROBES:
        judged = judge_probe(path=probe.path)
        out += [*probe_table(judged, probe), ""]
        if not args.readme:
            print(f"Probe {probe.name} per sub-kind (offline `correct`):")
            print("\n".join(subkind_table(judged)) + "\n")
    out.append(
        "Intervals: Clopper-Pearson exact, 95%. TPR = P(judge true | graded true), FPR = "
        "P(judge true | graded false); `faithful` is the offline `faithfulness` = 1 (every "
        "sentence supported). Made by `uv run python benchmarks/bench_judges.py --readme`."
    )
    text = "\n".join(out)
    print(text)
    if args.readme:
        splice("bench_judges", text, GUIDE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
