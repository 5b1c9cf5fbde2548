"""The seven metric-illusion cases reproduce the chapter's numbers, through every engine.

Expected values are written as formulas from the metric definitions; the chapter prints them
at 3 decimals, which the ``chapter`` columns check separately.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragaudit.diagnose.illusions import (
    BLIND_SPOTS,
    K_TRADEOFF_RANKING,
    CaseTable,
    EngineCheck,
    IllusionsReport,
    compute_illusions,
)
from ragaudit.reports.metrics import case_table, engine_check_line, illusions_report
from ragaudit.reports.renderer import render

HERE = Path(__file__).parent
LOG2 = np.log2
IDCG_2 = 1 + 1 / LOG2(3)  # two relevant items, binary gains
IDCG_3 = 1 + 1 / LOG2(3) + 1 / LOG2(4)  # three relevant items


@pytest.fixture
def report(engine: Callable[..., Any]) -> IllusionsReport:
    return compute_illusions(engine)


def _systems(report: IllusionsReport, number: int) -> dict[str, dict[str, float]]:
    case = report.cases[number - 1]
    assert case.number == number
    return {s["name"]: s["metrics"] for s in case.data["systems"]}


def test_case1_identical_recall_precision_different_rank_metrics(report: IllusionsReport) -> None:
    got = _systems(report, 1)
    expected = {
        "top": dict(hit=1, recall=1, prec=2 / 5, mrr=1, map=1, ndcg=1, ctxp=1),
        "middle": dict(
            hit=1,
            recall=1,
            prec=2 / 5,
            mrr=1 / 2,
            map=(1 / 2 + 2 / 3) / 2,
            ndcg=(1 / LOG2(3) + 1 / LOG2(4)) / IDCG_2,
            ctxp=(1 / 2 + 2 / 3) / 2,
        ),
        "bottom": dict(
            hit=1,
            recall=1,
            prec=2 / 5,
            mrr=1 / 4,
            map=(1 / 4 + 2 / 5) / 2,
            ndcg=(1 / LOG2(5) + 1 / LOG2(6)) / IDCG_2,
            ctxp=(1 / 4 + 2 / 5) / 2,
        ),
    }
    names = dict(
        hit="hit@5",
        recall="recall@5",
        prec="precision@5",
        mrr="mrr@5",
        map="map@5",
        ndcg="ndcg@5",
        ctxp="context_precision@5",
    )
    for system, values in expected.items():
        for short, value in values.items():
            assert got[system][names[short]] == pytest.approx(value, abs=1e-12), (system, short)
    # the chapter's printed values (3 decimals)
    chapter = {
        "middle": (0.500, 0.583, 0.693, 0.583),
        "bottom": (0.250, 0.325, 0.501, 0.325),
    }
    for system, (mrr, ap, ndcg, ctxp) in chapter.items():
        row = got[system]
        assert (
            round(row["mrr@5"], 3),
            round(row["map@5"], 3),
            round(row["ndcg@5"], 3),
            round(row["context_precision@5"], 3),
        ) == (mrr, ap, ndcg, ctxp)
    spreads = report.cases[0].data["spreads"]
    assert spreads["recall@5"] == 0.0
    assert spreads["precision@5"] == 0.0
    assert spreads["mrr@5"] == pytest.approx(1 - 1 / 4)


def test_case2_identical_mrr_one_third_of_evidence(report: IllusionsReport) -> None:
    got = _systems(report, 2)
    complete, one_hit = got["complete"], got["one-hit"]
    assert complete == pytest.approx(
        {
            "hit@5": 1,
            "recall@5": 1,
            "precision@5": 3 / 5,
            "mrr@5": 1,
            "map@5": 1,
            "ndcg@5": 1,
            "context_precision@5": 1,
        }
    )
    assert one_hit == pytest.approx(
        {
            "hit@5": 1,
            "recall@5": 1 / 3,
            "precision@5": 1 / 5,
            "mrr@5": 1,
            "map@5": 1 / 3,
            "ndcg@5": 1 / IDCG_3,
            # RAGAS divides by the relevant items it found (1), so it is fooled as well
            "context_precision@5": 1,
        }
    )
    assert round(one_hit["ndcg@5"], 3) == 0.469


def test_case3_identical_hit_rate_with_a_fluke(report: IllusionsReport) -> None:
    got = _systems(report, 3)
    assert got["good"] == pytest.approx(
        {"hit@5": 1, "recall@5": 1, "precision@5": 3 / 5, "mrr@5": 1}
    )
    assert got["lucky"] == pytest.approx(
        {"hit@5": 1, "recall@5": 1 / 3, "precision@5": 1 / 5, "mrr@5": 1 / 5}
    )


def test_case4_k_tradeoff_matches_chapter_table(report: IllusionsReport) -> None:
    by_k = report.cases[3].data["by_k"]
    # relevant A, B, C at ranks 1, 3 and 6 of the ranking
    assert [i + 1 for i, item in enumerate(K_TRADEOFF_RANKING.split()) if item in "ABC"] == [
        1,
        3,
        6,
    ]
    dcg_2 = 1 + 1 / LOG2(4)
    expected = {
        "1": (1 / 3, 1 / 1, 2 * (1 / 3) * 1 / (1 / 3 + 1), 1 / 1),
        "3": (2 / 3, 2 / 3, 2 / 3, dcg_2 / IDCG_3),
        "5": (2 / 3, 2 / 5, 2 * (2 / 3) * (2 / 5) / (2 / 3 + 2 / 5), dcg_2 / IDCG_3),
        "8": (3 / 3, 3 / 8, 2 * 1 * (3 / 8) / (1 + 3 / 8), (dcg_2 + 1 / LOG2(7)) / IDCG_3),
    }
    chapter = {
        "1": (0.333, 1.000, 0.500, 1.000),
        "3": (0.667, 0.667, 0.667, 0.704),
        "5": (0.667, 0.400, 0.500, 0.704),
        "8": (1.000, 0.375, 0.545, 0.871),
    }
    assert sorted(by_k) == sorted(expected)
    for k, values in expected.items():
        row = by_k[k]
        got = (row["recall"], row["precision"], row["f1"], row["ndcg"])
        assert got == pytest.approx(values, abs=1e-12), k
        assert tuple(round(v, 3) for v in got) == chapter[k], k


def test_case5_whiteboard_numbers_and_engine_agree(report: IllusionsReport) -> None:
    data = report.cases[4].data
    dcg = 1 / LOG2(3) + 1 / LOG2(5)
    assert data["ndcg_derivation"]["totals"]["dcg"] == pytest.approx(dcg)
    assert data["ndcg_derivation"]["totals"]["idcg"] == pytest.approx(IDCG_2)
    assert data["ndcg_derivation"]["value"] == pytest.approx(dcg / IDCG_2)
    assert data["ap_derivation"]["value"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert data["evaluate"]["ndcg@5"] == pytest.approx(dcg / IDCG_2)
    assert data["evaluate"]["dcg@5"] == pytest.approx(dcg)
    assert data["evaluate"]["map@5"] == pytest.approx(0.5)
    assert data["derivation_matches_evaluate"] is True
    assert (round(dcg, 4), round(IDCG_2, 4), round(dcg / IDCG_2, 4)) == (1.0616, 1.6309, 0.6509)
    discounts = data["discounts"]
    assert [round(discounts[str(r)], 2) for r in (1, 2, 3, 4, 5, 10)] == [
        1.00,
        0.63,
        0.50,
        0.43,
        0.39,
        0.29,
    ]
    assert discounts["10"] == pytest.approx(1 / np.log2(11))


def test_case6_binary_tie_graded_split(report: IllusionsReport) -> None:
    systems = {s["name"]: s for s in report.cases[5].data["systems"]}
    first, second = systems["answer-first"], systems["related-first"]
    assert first["binary_ndcg@5"] == pytest.approx(1.0)
    assert second["binary_ndcg@5"] == pytest.approx(1.0)
    assert first["graded_ndcg@5"] == pytest.approx(1.0)
    # related (grade 1) at rank 1, answer (grade 2) at rank 2; ideal is the reverse
    graded = (1 + 2 / LOG2(3)) / (2 + 1 / LOG2(3))
    assert second["graded_ndcg@5"] == pytest.approx(graded)
    assert round(graded, 3) == 0.860
    exp_gain = (1 + 3 / LOG2(3)) / (3 + 1 / LOG2(3))
    assert second["graded_ndcg_exp@5"] == pytest.approx(exp_gain)
    assert first["graded_ndcg_exp@5"] == pytest.approx(1.0)


def test_text_report_matches_hand_written_snapshot(report: IllusionsReport) -> None:
    expected = (HERE / "expected_illusions.txt").read_text(encoding="utf-8")
    assert render(illusions_report(report), "table") == expected


def test_json_holds_every_number_and_is_stable(engine: Callable[..., Any]) -> None:
    first = json.dumps(compute_illusions(engine).to_dict(), indent=2, allow_nan=False)
    again = json.dumps(compute_illusions(engine).to_dict(), indent=2, allow_nan=False)
    assert first == again
    parsed = json.loads(first)
    assert [c["number"] for c in parsed["cases"]] == [1, 2, 3, 4, 5, 6, 7]
    assert parsed["cases"][0]["systems"][2]["metrics"]["mrr@5"] == 0.25
    assert parsed["cases"][3]["by_k"]["8"]["precision"] == 3 / 8
    assert len(parsed["blind_spots"]) == len(BLIND_SPOTS) == 7


def test_markdown_tables_carry_the_numbers(report: IllusionsReport) -> None:
    markdown = render(illusions_report(report), "markdown")
    middle = (
        r"| middle | X \*A\* \*C\* Y Z | 1.000 | 1.000 | 0.400 | 0.500 | 0.583 | 0.693 | 0.583 |"
    )
    assert middle in markdown
    assert "| 8 | 1.000 | 0.375 | 0.545 | 0.871 |" in markdown
    assert "| related-first | B:1 A:2 X Y Z | 1.000 | 0.860 | 0.797 |" in markdown
    assert markdown.count("```") == 2  # the one derivation block
    assert (
        "| MRR | how early is the first relevant item? | everything after the first hit |"
        in markdown
    )


def test_blind_spot_table_names_every_metric_once() -> None:
    metrics = [b.metric for b in BLIND_SPOTS]
    assert metrics == [
        "hit@k",
        "recall@k",
        "precision@k",
        "MRR",
        "MAP",
        "nDCG@k",
        "context precision@k",
    ]
    assert all(b.answers.endswith("?") and b.blind_to for b in BLIND_SPOTS)


def test_case_table_aligns_text_left_and_numbers_right() -> None:
    table = case_table(CaseTable(("name", "value", "k"), (("a", 1.0, 1), ("long name", 0.25, 10))))
    assert table.align == "lrr"
    assert table.rows == (("a", "1.000", "1"), ("long name", "0.250", "10"))
    assert case_table(CaseTable(("x",), ((2 / 3,),)), decimals=2).rows == (("0.67",),)


def test_case_tables_hold_unrounded_numbers_and_csv_prints_them() -> None:
    report = compute_illusions()
    # Case 1, 'middle': MAP@5 = (1/2 + 2/3) / 2 = 7/12, which the table shows as 0.583.
    table = next(b for b in report.cases[0].blocks if isinstance(b, CaseTable))
    assert table.rows[1][0] == "middle"
    assert table.rows[1][6] == pytest.approx(7 / 12, abs=1e-15)
    assert case_table(table).rows[1][6] == "0.583"
    assert f",{table.rows[1][6]!r}," in render(illusions_report(report), "csv")


def test_engine_check_line_says_whether_the_engine_agrees() -> None:
    check = EngineCheck({"dcg@5": 1.0616, "map@5": 0.5}, agrees=False)
    assert engine_check_line(check) == (
        "evaluate(): dcg@5 = 1.0616, map@5 = 0.5000  (DIFFERS from the hand derivation)"
    )


def test_case7_labels_from_one_system_favour_it(report: IllusionsReport) -> None:
    got = _systems(report, 7)
    # labels: A, B relevant; X, Y, W judged not relevant (R = 2, N = 3); U, V unjudged.
    # pooled = X A Y B W: A at 2, B at 4.  new = U V A W B: A at 3, B at 5; condensed A W B.
    expected = {
        "pooled": {
            "judged@5": 5 / 5,
            "ndcg@5": (1 / LOG2(3) + 1 / LOG2(5)) / IDCG_2,
            "ndcg_condensed@5": (1 / LOG2(3) + 1 / LOG2(5)) / IDCG_2,  # nothing to remove
            # A: 1 judged non-relevant above (X); B: 2 (X, Y); each over min(N, R) = 2
            "bpref": ((1 - 1 / 2) + (1 - 2 / 2)) / 2,
        },
        "new": {
            "judged@5": 3 / 5,
            "ndcg@5": (1 / LOG2(4) + 1 / LOG2(6)) / IDCG_2,
            "ndcg_condensed@5": (1 + 1 / LOG2(4)) / IDCG_2,
            "bpref": (1 + (1 - 1 / 2)) / 2,  # A: none above; B: W above
        },
    }
    for system, values in expected.items():
        assert got[system] == pytest.approx(values, abs=1e-12), system
    # the stated orderings: nDCG one way, nDCG' and bpref the other
    assert got["pooled"]["ndcg@5"] > got["new"]["ndcg@5"]
    assert got["new"]["ndcg_condensed@5"] > got["pooled"]["ndcg_condensed@5"]
    assert got["new"]["bpref"] > got["pooled"]["bpref"]
