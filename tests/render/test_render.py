"""Renderers against hand-written expected text for tiny reports."""

from __future__ import annotations

import re

import pytest

from ragaudit.data.saved_run.summary import EndToEndCorrect
from ragaudit.diagnose.funnel import FunnelResult, Stage, Unanswerable
from ragaudit.diagnose.label_bias import BiasResult, CandidateGroup, QuestionBias, RankShift
from ragaudit.exceptions import InputError
from ragaudit.reports import Report, ScatterPlot, Section, Table, Text, render
from ragaudit.reports.funnel import funnel_report
from ragaudit.reports.label_bias import bias_report
from ragaudit.reports.renderer import render_html, render_markdown, render_text
from ragaudit.reports.svg import nice_ticks, scatter_svg

TINY = Report(
    "Tiny report",
    (
        Section(
            "Scores (k=2)",
            (
                Table(
                    ("id", "hit", "note"), (("q1", "1.00", "a|b"), ("q10", "0.50", "")), align="lrl"
                ),
                Text(("first line", "second line")),
            ),
        ),
        Section("Formula", (Text(("P = 1 x 2",), monospace=True),)),
    ),
    data={"k": 2},
)


def test_text_renderer():
    assert render_text(TINY) == (
        "Tiny report\n"
        "\n"
        "SCORES (k=2)\n"
        "  id    hit  note\n"
        "  q1   1.00  a|b\n"
        "  q10  0.50\n"
        "\n"
        "  first line\n"
        "  second line\n"
        "\n"
        "FORMULA\n"
        "  P = 1 x 2\n"
    )


def test_markdown_renderer():
    assert render_markdown(TINY) == (
        "# Tiny report\n"
        "\n"
        "## Scores (k=2)\n"
        "\n"
        "| id | hit | note |\n"
        "| :--- | ---: | :--- |\n"
        "| q1 | 1.00 | a\\|b |\n"
        "| q10 | 0.50 |   |\n"
        "\n"
        "first line  \n"
        "second line\n"
        "\n"
        "## Formula\n"
        "\n"
        "```\n"
        "P = 1 x 2\n"
        "```\n"
    )


def test_html_renderer_escapes_and_is_standalone():
    page = render_html(TINY)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert "<h2>Scores (k=2)</h2>" in page
    assert '<tr><th>id</th><th class="r">hit</th><th>note</th></tr>' in page
    assert '<tr><td>q1</td><td class="r">1.00</td><td>a|b</td></tr>' in page
    assert "<p>first line</p>\n<p>second line</p>" in page
    assert "<pre>P = 1 x 2</pre>" in page
    assert "Content-Security-Policy" in page  # scripts forbidden even if one slipped in
    csp = 'http-equiv="Content-Security-Policy"'
    assert "<script" not in page
    assert "http" not in page.replace("http://www.w3.org", "").replace(csp, "")


def test_render_dispatch_and_json():
    assert render(TINY, "json") == '{\n  "k": 2\n}\n'
    assert render(TINY, "table") == render_text(TINY)
    expected = r"format: expected one of table, json, csv, markdown, html, tsv, latex, found 'pdf'"
    with pytest.raises(InputError, match=expected):
        render(TINY, "pdf")


def test_table_shape_is_validated():
    with pytest.raises(InputError, match="table row 0: expected 2 cells, found 1"):
        Table(("a", "b"), (("x",),))
    with pytest.raises(InputError, match="table align: expected 2 of 'l'/'r', found 'lx'"):
        Table(("a", "b"), (), align="lx")


def funnel_result():
    stage = Stage
    return FunnelResult(
        run_name="tiny",
        k=3,
        run_k=3,
        n=4,
        stages=(
            stage("gold doc retrieved", 4, 1.0, 1.0, 1.0, 1.0, "re-computed at k=3"),
            stage("evidence in the context", 3, 0.75, 0.75, 0.25, 1.0, "re-computed at k=3"),
            stage("model answered", 2, 0.5, 2 / 3, 0.0, 1.0, "re-computed at k=3"),
            stage("answer correct", 2, 0.5, 1.0, 0.0, 1.0, "re-computed at k=3"),
        ),
        factors=(1.0, 0.75, 2 / 3, 1.0),
        p_correct=0.5,
        stage1_rate=1.0,
        correct_end_to_end=0.75,
        gap=0.25,
        gap_ci=(0.0, 0.75),
        died={"1-retrieval": (), "2-evidence": ("q2",), "3-refusal": ("q3",), "4-generation": ()},
        ok_ids=("q1", "q4"),
        lucky=("q2",),
        stage2_source="evidence_in_context",
        stage2_source_counts={"evidence_in_context": 4},
        unanswerable=Unanswerable(2, 1, 0.5, 0.0, 1.0, ("u2",)),
        unjudged=(),
        correct=EndToEndCorrect(3, 4),
        seed=7,
        n_resamples=100,
        confidence=0.95,
        notes=("a note",),
    )


def test_funnel_terminal_snapshot():
    expected = """\
ragaudit funnel: tiny

THE FUNNEL (k=3, n=4 answerable questions)
  stage                      kept   of n   95% CI (of n)  conditional  bar
  0 asked                       4  1.000                               ####################
  1 gold doc retrieved          4  1.000  [1.000, 1.000]        1.000  ####################  <- what recall@k / hit@k report
  2 evidence in the context     3  0.750  [0.250, 1.000]        0.750  ###############.....
  3 model answered              2  0.500  [0.000, 1.000]        0.667  ##########..........
  4 answer correct              2  0.500  [0.000, 1.000]        1.000  ##########..........  <- what the user experiences

  P(correct) = 1.000 x 0.750 x 0.667 x 1.000 = 0.500
  stage-1 success (hit rate@3):   1.000
  end-to-end correct:             3/4 = 0.750
    = correct through the funnel (stage 4) 2 (0.500) + correct by luck 1 (0.250)
  the gap hit rate cannot see:    +0.250   95% CI [+0.000, +0.750]
  stage 2 decided by: the offline evidence-in-context judge
  intervals: stage and abstention rates Clopper-Pearson exact; the gap Tango score (paired)

WHERE QUESTIONS DIE
  stage            n  ids  fix
  1-retrieval      0
  2-evidence       1  q2   right document, wrong chunk: revisit chunk size and overlap, add a reranker
  3-refusal        1  q3   evidence present, model refused: relax the refusal instruction in the prompt
  4-generation     0
  unjudged         0
  ok               2
  correct by luck  1  q2   failed stage 1 or 2, answered right anyway (counted as died above)

UNANSWERABLE QUESTIONS (n=2)
  correct abstention: 1/2 = 0.500   95% CI [0.000, 1.000]
  answered where the right output was "I don't know": u2

NOTES
  a note
"""  # noqa: E501
    assert render_text(funnel_report(funnel_result())) == expected


def test_funnel_markdown_has_the_same_numbers():
    md = render_markdown(funnel_report(funnel_result()))
    assert "## The funnel (k=3, n=4 answerable questions)" in md
    assert "| 2 evidence in the context | 3 | 0.750 | [0.250, 1.000] | 0.750 |" in md
    assert "P(correct) = 1.000 x 0.750 x 0.667 x 1.000 = 0.500" in md


def bias_result():
    q = QuestionBias
    return BiasResult(
        run_name="tiny",
        k=2,
        n=2,
        questions=(
            q(
                "q1",
                1.0,
                1.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.2,
                0.1,
                3,
                "doc-level says HIT, the answer chunk is absent",
            ),
            q("q2", 1.0, 1.0, 1.0, 0.5, 1.0, 0.8, 0.9, 0.95, 6, "doc-level optimistic"),
        ),
        doc_hit_rate=1.0,
        chunk_hit_rate=0.5,
        doc_recall=1.0,
        chunk_recall=0.25,
        hit_inflation=0.5,
        recall_inflation=0.75,
        phantom_hits=("q1",),
        by_candidates=(CandidateGroup(3, 1, 1.0, 1.0), CandidateGroup(6, 1, 0.0, 0.5)),
        spearman=None,
        ndcg_binary=0.4,
        ndcg_graded=0.55,
        ndcg_exp=0.525,
        rank_shifts=(RankShift("q1", 0.0, 0.1, 2.0, 2.0, 0.0),),
    )


BIAS_SUMMARY = """\
PER QUESTION (k=2)
  id  doc hit  doc rec  chunk hit  chunk rec  chunk MRR  verdict
  q1     1.00     1.00       0.00       0.00       0.00  <- doc-level says HIT, the answer chunk is absent
  q2     1.00     1.00       1.00       0.50       1.00  doc-level optimistic

OPTIMISM BIAS OF DOCUMENT-LEVEL LABELS (k=2, n=2 questions)
  metric      doc-level  chunk-level  inflation
  hit rate@2      1.000        0.500     +0.500
  recall@2        1.000        0.250     +0.750

  document labels report a retrieval that never happened (doc hit, answer chunk absent): q1
"""  # noqa: E501


def test_bias_terminal_snapshot_of_the_summary():
    text = render_text(bias_report(bias_result()))
    assert BIAS_SUMMARY in text
    assert (
        """\
INFLATION BY GOLD-DOCUMENT SIZE
  candidate chunks  questions  mean hit inflation  mean recall inflation
                 3          1              +1.000                 +1.000
                 6          1              +0.000                 +0.500

  Spearman rho (candidate chunks vs recall inflation): undefined (no variation)
"""
        in text
    )
    assert "svg" not in text


def test_bias_html_has_an_inline_scatter_plot_with_one_point_per_question():
    page = render_html(bias_report(bias_result()))
    svg = re.search(r"<svg.*?</svg>", page, re.S)
    assert svg is not None
    assert svg.group(0).count("<circle") == 2
    assert "<title>q1: (3, 1)</title>" in svg.group(0)
    assert "<title>q2: (6, 0.5)</title>" in svg.group(0)


def test_nice_ticks_and_svg_coordinates():
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(3, 13) == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
    assert nice_ticks(-0.5, 1) == [-0.5, 0.0, 0.5, 1.0]
    plot = ScatterPlot("t & u", "x", "y", ((0.0, 0.0), (1.0, 1.0)), ("a<b", "c"))
    svg = scatter_svg(plot)
    # plot area: x from 64 to 500 (520 - 20), y from 36 to 288 (340 - 52)
    assert '<circle cx="64.0" cy="288.0"' in svg
    assert '<circle cx="500.0" cy="36.0"' in svg
    assert "t &amp; u" in svg and "a&lt;b" in svg
    assert scatter_svg(plot) == svg


def test_tsv_renderer_gives_one_line_per_row():
    table = Table(
        ("id", "text", "x"), (("c1", "a\tb\nc", "0.5"),), values=(("c1", "a\tb\nc", 0.5),)
    )
    report = Report("T", (Section("S", (Text(("skipped",)), table, table)),))
    one = "section\tid\ttext\tx\nS\tc1\ta b c\t0.5\n"
    assert render(report, "tsv") == one + "\n" + one


def test_no_submodule_shadows_the_render_function():
    # A module named like the exported function let pytest's importlib mode replace
    # ragaudit.reports.render (the function) with the module when it collected that file first.
    import importlib.util

    import ragaudit.reports

    assert importlib.util.find_spec("ragaudit.reports.render") is None
    assert callable(ragaudit.reports.render)
