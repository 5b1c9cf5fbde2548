"""The audit page's sections take their pieces from the shared builders (label-bias tables and
plot, compare's methods line, the comparison and configuration tables) and show them alike in
every form.  Expected values come from the single-purpose commands' JSON or text, or from
scipy, never from the page's own code."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import spearmanr

from ragaudit.reports.report import Report, Table, shown

from .conftest import cli


@pytest.fixture(scope="module")
def audit(bench: dict[str, Path]) -> Any:
    """The audit of the demo's k3 and k6 runs with chunk labels."""
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.audit import build_audit
    from ragaudit.labels.format import load_chunk_labels

    runs = [load_saved_run(bench["k3"]), load_saved_run(bench["k6"])]
    return build_audit(runs, labels=load_chunk_labels(bench["labels"]))


@pytest.fixture(scope="module")
def report(audit: Any) -> Report:
    from ragaudit.reports.audit_page import audit_report

    return audit_report(audit)


def _section(report: Report, title: str, end: str = "") -> Any:
    return next(s for s in report.sections if s.title.startswith(title) and s.title.endswith(end))


def _bias_json(bench: dict[str, Path], run: str) -> dict[str, Any]:
    return json.loads(
        cli("labels", "bias", str(bench[run]), "--labels", str(bench["labels"]),
            "--format", "json")
    )  # fmt: skip


def test_label_bias_rows_are_the_questions_labels_bias_calls_different(
    bench: dict[str, Path], report: Report
):
    for run in ("k3", "k6"):
        data = _bias_json(bench, run)
        expected = [q["id"] for q in data["questions"] if q["verdict"]]
        section = _section(report, f"{run} (k=", "questions with chunk labels)")
        tables = [b for b in section.blocks if isinstance(b, Table)]
        summary, differ = tables  # the full table sits in a drill-down
        assert [row[0] for row in differ.rows] == expected
        assert summary.rows[1][0] == f"recall@{data['k']}"
        assert float(summary.rows[1][3]) == pytest.approx(
            data["summary"]["recall"]["inflation"], abs=5e-4
        )


def test_scatter_caption_is_part_of_the_figure_in_every_format(
    bench: dict[str, Path], report: Report
):
    from ragaudit.reports.renderer import render

    forms = {f: render(report, f) for f in ("html", "markdown", "latex")}
    for run in ("k3", "k6"):
        data = _bias_json(bench, run)
        x = [q["n_candidate_chunks"] for q in data["questions"]]
        y = [q["doc_recall"] - q["chunk_recall"] for q in data["questions"]]
        rho = spearmanr(x, y).statistic
        caption = f"Spearman rho (candidate chunks vs recall inflation): {rho:+.3f}"
        page = forms["html"]
        at = page.index(f"Recall inflation vs chunks in the gold document(s) (k={data['k']})")
        figure = page[page.rindex("<figure", 0, at) : page.index("</figure>", at)]
        assert figure.endswith(f'</svg>\n<figcaption class="note">{caption}</figcaption>\n')
        assert caption in forms["markdown"] and caption in forms["latex"]
        assert page.count(caption) == 1  # not also printed beside the figure


def test_page_methods_line_is_the_one_compare_prints(bench: dict[str, Path], report: Report):
    from ragaudit.reports.renderer import render

    text = cli("compare", str(bench["k3"]), str(bench["k6"]), "--full", "--questions", "answerable",
               "--metric", "recall@k")  # fmt: skip
    methods = text.splitlines()[1]
    assert methods.startswith("seed 0 | interval: ")
    assert f'<p class="note">{escape(methods)}</p>' in render(report, "html")
    assert "\n" + methods.replace(" | ", " \\| ") + "  \n" in render(report, "markdown")


def test_configuration_is_one_table_for_every_form(report: Report):
    (table,) = _section(report, "Configuration").blocks
    assert isinstance(table, Table) and table.only == () and table.cls == "config"
    from ragaudit.reports.renderer import render

    assert "<td><code>chunk_size</code></td><td>800</td><td>800</td>" in render(report, "html")
    assert "| chunk_size | 800 | 800 |" in render(report, "markdown")
    assert "chunk_size,800,800" in render(report, "csv")


def test_tables_shown_off_the_page_keep_every_field_of_their_builder(
    bench: dict[str, Path], audit: Any, report: Report
):
    """Outside HTML the comparison is the builder's table with only ``only`` changed (a
    rebuild to set ``only`` dropped its typed values: CSV showed rounded text)."""
    from ragaudit.reports.audit_tables import comparison_table
    from ragaudit.reports.renderer import render

    section = _section(report, "B = k6 vs A = k3")
    (table,) = [b for b in shown(section.blocks, "csv") if isinstance(b, Table)]
    assert replace(table, only=()) == comparison_table(audit.pairs[0])
    compare = json.loads(
        cli("compare", str(bench["k3"]), str(bench["k6"]), "--questions", "answerable",
            "--metric", "recall@k", "--metric", "ndcg@k", "--metric", "precision@k",
            "--metric", "correct", "--format", "json")
    )  # fmt: skip
    rows = list(csv.reader(io.StringIO(render(report, "csv"))))
    start = rows.index(["section", *table.columns])
    body = [line[1:] for line in rows[start + 1 : start + 1 + len(compare["metrics"])]]
    for line, row in zip(body, compare["metrics"], strict=True):
        assert line[:2] == [row["metric"], str(row["n"])]
        assert float(line[4]) == pytest.approx(row["diff"], rel=1e-12, abs=1e-15)
        assert float(line[7]) == pytest.approx(row["p_value"], rel=1e-12)


def test_every_form_states_k_unit_and_averaging_of_the_dashboard(report: Report):
    from ragaudit.reports.renderer import render

    html, md, text = (render(report, f) for f in ("html", "markdown", "table"))
    # runs with different k: each run's column says its k (the rows say @k)
    assert "<th>k3 (k=3)</th>" in html.replace(' class="r"', "")
    assert "| number | k3 (k=3) | k6 (k=6) | MDE |" in md
    assert "number" in text and "k3 (k=3)" in text and "k6 (k=6)" in text
    for label in ("nDCG@k, document level", "precision@k, document level",
                  "recall@k, chunk level", "judged@k: labelled share of the top k"):  # fmt: skip
        assert label in html and label in md and label in text
    assert "context precision" not in md  # the row is precision@k, not RAGAS's measure
    averaging = "averaging: macro, a mean over the n questions beside each number"
    assert averaging in html and averaging in md and averaging in text
    rows = md.split("| number |")[1].split("\n\n")[0].splitlines()[2:]
    assert len(rows) == 11 and "The chapter's six numbers, each gameable alone" in md


def test_terminal_gap_names_its_interval_method(bench: dict[str, Path], report: Report):
    from ragaudit.reports.renderer import render

    text = render(report, "table")
    for run in ("k3", "k6"):
        f = json.loads(cli("funnel", str(bench[run]), "--format", "json"))
        low, high = f["gap_ci"]
        line = f"[{low:+.3f}, {high:+.3f}] ({f['gap_ci_method']}, paired)"
        assert f"gap hit rate@{f['k']} -> correct: {f['gap']:+.3f} {line}" in text


def test_page_names_only_the_resamples_it_used(bench: dict[str, Path], tmp_path: Path):
    """--resamples feeds only the funnel's bootstrap columns, which the page does not show
    (the clustered intervals bet over clusters, no resampling); the comparison uses
    compare's 10,000.  The byline claimed --resamples for "wherever an interval is
    bootstrapped"."""
    args = [str(bench["k3"]), str(bench["k6"]), "--resamples", "1234"]
    plain, clustered = tmp_path / "plain.md", tmp_path / "clustered.md"
    cli("report", *args, "--format", "markdown", "--out", str(plain))
    cli("report", *args, "--cluster-by", "source", "--format", "markdown", "--out",
        str(clustered))  # fmt: skip
    assert "1234" not in plain.read_text(encoding="utf-8")
    text = clustered.read_text(encoding="utf-8")
    assert "1234" not in text
    assert "resamples of whole clusters" not in text
    assert "the sign-flip test inverted" in text


def test_terminal_comparison_shows_the_p_its_verdict_uses(report: Report):
    """The verdict is compare's, on the unadjusted p: the short terminal table shows that p
    beside the Holm one (it showed only p (Holm))."""
    from ragaudit.reports.renderer import render

    text = render(report, "table")
    lines = text.split("COMPARISON (")[1].splitlines()
    assert lines[1].strip() == "differs: k (3 vs 6)"  # one design variable: no warning
    header = lines[2].split()
    assert header[:9] == ["metric", "B", "-", "A", "95%", "CI", "CI", "method", "p"]
    assert header[9:] == ["p", "(Holm)", "p", "method", "verdict"]


def test_csv_dashboard_cells_carry_no_terminal_padding(report: Report):
    from ragaudit.reports.renderer import render

    rows = [line[1:] for line in csv.reader(io.StringIO(render(report, "csv")))]
    assert rows[0] == ["number", "k3 (k=3)", "k6 (k=6)", "MDE"]
    data = report.data  # the audit's JSON: the numbers before any formatting
    assert isinstance(data, dict)
    for i, line in enumerate(rows[1:8]):
        for run, cell in zip(data["runs"], line[1:3], strict=True):
            row = run["dashboard"][i]
            if row["value"] is None:
                assert cell == "n/a"
                continue
            size = f"{row['count']}/{row['n']}" if row["count"] is not None else f"n={row['n']}"
            if row.get("decided"):  # a judged number: its decided share beside it (issue 31)
                size += f" decided {row['decided']['n']}/{row['decided']['of']}"
            assert cell == f"{row['value']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] {size}"


def test_summary_names_the_method_of_each_interval_it_quotes(
    bench: dict[str, Path], report: Report
):
    compare = json.loads(
        cli("compare", str(bench["k3"]), str(bench["k6"]), "--questions", "answerable",
            "--metric", "precision@k", "--format", "json")
    )  # fmt: skip
    (row,) = compare["metrics"]
    assert row["ci_method"] == "sign-flip inversion"
    quoted = (
        f"precision@k {row['diff']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] "
        "(95% CI, sign-flip)"
    )
    assert isinstance(report.data, dict)
    assert f"moved for real: {quoted};" in report.data["summary"][0]


def test_csv_per_run_tables_say_which_run_they_belong_to(report: Report):
    # The funnel, where-questions-die and label-bias tables repeat once per run with identical
    # headers; the CSV dropped every heading, so nothing said which run a table was.
    from ragaudit.reports.renderer import render

    tables = [list(csv.reader(io.StringIO(part))) for part in render(report, "csv").split("\n\n")]
    by_header: dict[tuple[str, ...], list[str]] = {}
    for table in tables:
        assert table[0][0] == "section"
        (section,) = {line[0] for line in table[1:]}  # one section per table
        by_header.setdefault(tuple(table[0]), []).append(section)
    repeated = {h: s for h, s in by_header.items() if len(s) > 1}
    assert {h[1] for h in repeated} >= {"stage", "metric", "id"}  # funnel, die, label bias
    for sections in repeated.values():
        assert len(set(sections)) == len(sections)
        assert [("k3" in s, "k6" in s) for s in sections] == [(True, False), (False, True)]
