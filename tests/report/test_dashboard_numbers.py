"""The chapter's six dashboard numbers in the audit's JSON, each with its interval and method.

p95 latency is checked against a direct order-statistic computation written here (numpy's
quantile and scipy.stats.binom's equal-tailed ranks) on a run made with timing on; the
abstention rates against the funnel's own lists; $/question is exactly 0 offline.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from scipy import stats

from ragaudit.cli import main

BENCH = Path(__file__).resolve().parents[2] / "src" / "ragaudit" / "benchmark"
SIX = ("recall_chunk", "ndcg", "correct", "faithfulness", "over_refusal",
       "answered_unanswerable", "latency_p95", "cost_per_question")  # fmt: skip


def cli(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def direct_p95(latencies: list[float]) -> tuple[float, float, float]:
    """The sample p95 and its equal-tailed order-statistic interval, by brute force."""
    n, q, half = len(latencies), 0.95, 0.025
    ordered = sorted(latencies)
    lows = [r for r in range(1, n + 1) if stats.binom.cdf(r - 1, n, q) <= half]
    highs = [r for r in range(1, n + 1) if stats.binom.sf(r - 1, n, q) <= half]
    low = ordered[max(lows) - 1] if lows else -math.inf
    high = ordered[min(highs) - 1] if highs else math.inf
    return float(np.quantile(latencies, q)), low, high


def test_the_json_holds_the_six_numbers_with_their_methods(tmp_path):
    cli("run", "--corpus", BENCH / "corpus", "--golden", BENCH / "golden.yaml", "--k", 3,
        "--out", tmp_path, "--quiet")  # fmt: skip   (timing on: latency_ms is recorded)
    run = tmp_path / "k3_cs800.json"
    audit = json.loads(cli("report", run, "--format", "json", "--out", "-"))["runs"][0]
    rows = {row["key"]: row for row in audit["dashboard"]}
    assert set(SIX) <= set(rows)
    for key in SIX:
        if rows[key]["value"] is not None:
            assert rows[key]["interval"], key  # every number names its interval's method
    # p95 latency: 60 questions, too few for an upper end at 95% (needs 72)
    saved = json.loads(run.read_text(encoding="utf-8"))["rows"]
    latencies = [r["latency_ms"]["total"] for r in saved]
    value, low, high = direct_p95(latencies)
    p95 = rows["latency_p95"]
    assert p95["value"] == value and p95["ci_low"] == low and math.isinf(high)
    assert p95["ci_high"] is None and p95["unbounded_above"] and p95["varies"]
    assert p95["unit"] == "ms" and p95["interval"].startswith("order statistics")
    # wrong abstention, split, each over its stated denominator
    funnel = json.loads(cli("funnel", run, "--format", "json"))
    over = rows["over_refusal"]
    assert (over["count"], over["n"]) == (len(funnel["died"]["3-refusal"]),
                                          funnel["stages"][1]["kept"])  # fmt: skip
    una = rows["answered_unanswerable"]
    assert (una["count"], una["n"]) == (len(funnel["unanswerable"]["answered_ids"]),
                                        funnel["unanswerable"]["n"])  # fmt: skip
    # every MDE says what it assumes: a rate the assumed 20% discordance, a mean score a shift
    assert "assuming 20% of questions differ" in rows["correct"]["mde_assumption"]
    assert "shifts by it" in rows["ndcg"]["mde_assumption"]
    assert rows["latency_p95"]["mde"] is None and rows["latency_p95"]["mde_assumption"] == ""
    cost = rows["cost_per_question"]
    assert (cost["value"], cost["ci_low"], cost["ci_high"]) == (0.0, 0.0, 0.0)
    assert "offline" in cost["note"]
