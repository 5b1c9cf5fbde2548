"""The README's speed tables are rendered over saved rounds (benchmarks/_rounds.py, issue 25):
times and ratios are ranges over rounds, and a ragaudit variant slower than a peer is named.
Expected cells are computed by hand from the rows below."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks._rounds import VERSION, load_rounds, render_rounds

FILES = {"run_lines": 10_000, "run_bytes": 300_000, "qrels_lines": 5_000, "qrels_bytes": 100_000}


def _round(start: str, load: float, ragaudit: float, pytrec: float, startup: float) -> dict:
    def row(tool: str, median: float, peak: float, up: float | None) -> dict:
        # the evaluation step: a tenth of the process for ragaudit, a fifth for pytrec_eval
        share = 0.1 if tool == "ragaudit" else 0.2
        return {"tool": tool, "median_s": median, "peak_mb": peak, "startup_s": up,
                "eval_s": median * share, "means": {"ndcg@10": 0.5}}  # fmt: skip

    return {
        "version": VERSION, "sizes_asked": "1000x10", "tools": ["ragaudit", "pytrec_eval"],
        "metric_set": "standard", "seed": 0, "repeats": 3, "machine": "test box",
        "started": f"2026-12-01T{start}:00+00:00", "ended": f"2026-12-01T{start}:30+00:00",
        "load_at_start": load, "load_at_end": load + 1,
        "sizes": {"1000x10": [row("ragaudit", ragaudit, 80.0, startup),
                              row("pytrec_eval", pytrec, 40.0, None)]},
        "files": {"1000x10": FILES},
    }  # fmt: skip


def test_ranges_over_rounds_and_the_slower_bullet(tmp_path: Path) -> None:
    quiet, busy = _round("07:00", 0.5, 0.20, 0.12, 0.15), _round("18:00", 7.0, 0.50, 0.40, 0.35)
    for i, saved in enumerate((busy, quiet)):
        (tmp_path / f"bench_metrics_{i}.json").write_text(json.dumps(saved))
    other = dict(quiet, metric_set="incomplete")  # another command: not a round of this one
    (tmp_path / "bench_metrics_9.json").write_text(json.dumps(other))
    rounds = load_rounds(tmp_path, quiet)
    assert [r["started"][11:16] for r in rounds] == ["07:00", "18:00"]  # oldest first
    text = render_rounds(rounds, "bench_metrics.py --sizes 1000x10")
    assert "07:00-07:00 at load 0.5 → 1.5; 18:00-18:00 at load 7.0 → 8.0" in text
    # run 10,000 lines of 300,000 B = 30 B per line; qrels 100,000 / 5,000 = 20 B; 0.4 MB
    # times: medians 0.20 and 0.50 (ragaudit), 0.12 and 0.40 (pytrec_eval);
    # ratios 0.12 / 0.20 = 0.60 and 0.40 / 0.50 = 0.80; evaluation step only 0.024 / 0.020
    # = 1.20 and 0.080 / 0.050 = 1.60; peak 80 MB of 0.4 MB = 200x
    assert ("| 1,000 × 10 | run 10,000 lines × 30 B, qrels 5,000 × 20 B (0.4 MB) | 0.20-0.50 "
            "| 0.12-0.40 | 0.60-0.80x | 1.20-1.60x | 80 (200x) |") in text  # fmt: skip
    assert ("1,000 × 10: **ragaudit is slower** than pytrec_eval (pytrec_eval / ragaudit "
            "0.60-0.80x); of its 0.20-0.50 s, 0.15-0.35 s are start-up") in text  # fmt: skip
    assert "ragaudit 0.0e+00" in text  # the means agree with pytrec_eval's


def test_no_slower_bullet_when_ragaudit_is_faster_in_every_round(tmp_path: Path) -> None:
    rounds = [_round("07:00", 0.5, 2.0, 8.0, 0.2), _round("08:00", 3.0, 3.0, 10.0, 0.3)]
    text = render_rounds(rounds, "cmd")
    assert "slower" not in text and "| 3.33-4.00x | 6.67-8.00x |" in text  # 10/3, 8/2; x2


def _paired(start: str, times: dict[str, tuple[float, float]]) -> dict:
    """A paired round: tool [set] -> (whole process s, evaluation step s)."""
    rows = [
        {"tool": label, "median_s": whole, "eval_s": step, "peak_mb": 100.0, "startup_s": None,
         "means": {"bpref": 0.25} if "incomplete" in label else {"ndcg@10": 0.5}}
        for label, (whole, step) in times.items()
    ]  # fmt: skip
    return dict(
        _round(start, 1.0, 1.0, 1.0, 0.1),
        metric_set=["standard", "incomplete"],
        sizes={"1000x10": rows},
    )


def test_paired_rounds_give_each_sets_ratio_and_the_ratio_of_ratios(tmp_path: Path) -> None:
    first = _paired("07:00", {"ragaudit [standard]": (2.0, 0.5),
                              "pytrec_eval [standard]": (6.0, 2.0),
                              "ragaudit [incomplete]": (2.5, 0.8),
                              "pytrec_eval [incomplete]": (6.0, 2.4)})  # fmt: skip
    second = _paired("08:00", {"ragaudit [standard]": (3.0, 1.0),
                               "pytrec_eval [standard]": (9.0, 4.0),
                               "ragaudit [incomplete]": (3.0, 1.0),
                               "pytrec_eval [incomplete]": (9.0, 4.0)})  # fmt: skip
    # The second round saved each pass's times: the ratios within it are taken pass by pass.
    walls = {
        "ragaudit [standard]": [3.0, 6.0, 2.0],
        "ragaudit [incomplete]": [3.3, 3.0, 2.2],
        "pytrec_eval [standard]": [9.0] * 3,
        "pytrec_eval [incomplete]": [9.0] * 3,
    }
    for row in second["sizes"]["1000x10"]:
        row.update(walls=walls[row["tool"]], evals=[None] * 3)  # no evaluation step per pass
    second["rotated"] = True  # its passes rotated the order of the sets
    for i, saved in enumerate((first, second)):
        (tmp_path / f"bench_metrics_{i}.json").write_text(json.dumps(saved))
    (tmp_path / "bench_metrics_9.json").write_text(json.dumps(_round("07:30", 1, 1, 1, 0.1)))
    rounds = load_rounds(tmp_path, first)
    assert len(rounds) == 2  # the single-set round is another command
    text = render_rounds(rounds, "cmd")
    # standard: 6/2 = 3.00 and 9/3 = 3.00; evaluation step 2/0.5 = 4.00, 4/1 = 4.00
    assert "| 1,000 × 10 | `standard`: ndcg@10 | 2.00-3.00 | 6.00-9.00 | 3.00x | 4.00x | 100 |" in (
        text
    )
    # incomplete: 6/2.5 = 2.40 and 9/3 = 3.00; evaluation step 2.4/0.8 = 3.00, 4/1 = 4.00
    assert "| `incomplete`: bpref | 2.50-3.00 | 6.00-9.00 | 2.40-3.00x | 3.00-4.00x |" in text
    # within the first round (medians): ragaudit 2.5/2 = 1.25, pytrec_eval 1.00, ratio of
    # ratios 2.40/3.00 = 0.80, evaluation step 3/4 = 0.75.  Within the second, pass by pass:
    # ragaudit 3.3/3, 3/6, 2.2/2 = 1.1, 0.5, 1.1 -> median 1.10 (its medians give 3/3 = 1.00);
    # ratio of ratios (9/3.3)/(9/3) = 3/3.3, 6/3, 2/2.2 -> median 0.909; the evaluation step
    # has no per-pass times: its medians, 4/1 / (4/1) = 1.00
    assert ("| `incomplete` ÷ `standard`, within each round | 1.10-1.25x | 1.00x | 0.80-0.91x "
            "| 0.75-1.00x | - |") in text  # fmt: skip
    assert "`incomplete`: largest |mean - pytrec_eval mean|" in text
    assert "(standard, incomplete, in that order in the rounds before 08:00, rotated from" in text
    later = load_rounds(tmp_path, first, since="2026-12-01T07:30")
    assert [r["started"][11:16] for r in later] == ["08:00"]
