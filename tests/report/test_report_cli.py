"""``ragaudit report`` without a browser: determinism, configuration, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

from .conftest import cli


def test_same_inputs_give_byte_identical_pages(bench: dict[str, Path], tmp_path: Path):
    args = [str(bench["k3"]), str(bench["k6"]), "--labels", str(bench["labels"]),
            "--corpus", str(bench["corpus"])]  # fmt: skip
    for fmt, ext in (("html", "html"), ("markdown", "md")):
        again = tmp_path / f"again.{ext}"
        cli("report", *args, "--format", fmt, "--out", str(again))
        assert again.read_bytes() == bench[ext].read_bytes()


def test_page_names_version_seed_and_configuration(bench: dict[str, Path]):
    page = bench["html"].read_text(encoding="utf-8")
    from ragaudit import __version__

    assert f"ragaudit {__version__}" in page and "seed 0" in page
    for key in ("chunk_size", "chunk_overlap", "retriever", "generator", "judges"):
        assert f"<code>{key}</code>" in page


def test_bad_run_file_is_one_line_exit_2(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "ragaudit.run"', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ragaudit: error: {bad}:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def test_one_run_without_labels_or_corpus(bench: dict[str, Path], tmp_path: Path):
    out = tmp_path / "one.html"
    cli("report", str(bench["k3"]), "--out", str(out))
    page = out.read_text(encoding="utf-8")
    assert "id=compare" not in page and "id=labels" not in page  # nothing to compare with
    assert 'data-metric="recall_chunk">n/a' in page  # no chunk labels: shown as missing
    assert "chunk text not available (pass --corpus DIR)" in page
    md = tmp_path / "one.md"
    cli("report", str(bench["k3"]), "--format", "markdown", "--out", str(md))
    assert "| recall@3, chunk level | n/a |" in md.read_text(encoding="utf-8")


def test_markdown_drops_whole_drilldowns_to_fit(bench: dict[str, Path]):
    from ragaudit.data.records import load_saved_run
    from ragaudit.diagnose.audit import build_audit
    from ragaudit.labels.format import load_chunk_labels
    from ragaudit.reports.audit_page import audit_report
    from ragaudit.reports.renderer import render_markdown

    runs = [load_saved_run(bench["k3"]), load_saved_run(bench["k6"])]
    audit = build_audit(runs, labels=load_chunk_labels(bench["labels"]), n_resamples=200)
    full = render_markdown(audit_report(audit), limit=1_000_000)
    # the limit is below the whole page and above its fixed part (dashboard, funnels, the
    # comparison and the funnels compared): only drill-downs can be dropped
    small = render_markdown(audit_report(audit), limit=16_000)
    assert len(small) < 16_000 < len(full)
    assert small.count("<details>") == small.count("</details>")  # none cut in half
    assert small.count("<details>") < full.count("<details>")
    assert "more drill-down(s) in the HTML report (size limit)" in small


def test_comparison_rows_and_holm_match_compare_and_statsmodels(bench: dict[str, Path]):
    from statsmodels.stats.multitest import multipletests

    # faithfulness: the offline judges measure it since issue 20
    compare = json.loads(
        cli("compare", str(bench["k3"]), str(bench["k6"]), "--questions", "answerable",
            "--metric", "recall@k", "--metric", "ndcg@k", "--metric", "precision@k",
            "--metric", "correct", "--metric", "faithfulness", "--format", "json")
    )  # fmt: skip
    rows = compare["metrics"]
    holm = multipletests([r["p_value"] for r in rows], method="holm")[1]
    text = bench["md"].read_text(encoding="utf-8")
    table = text[text.index("| metric | n | mean A") :].split("\n\n")[0].splitlines()[2:]
    assert len(table) == len(rows)
    for line, row, p_holm in zip(table, rows, holm, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        p_shown = "<0.001" if p_holm < 0.001 else f"{p_holm:.3f}"
        assert cells[0] == row["metric"]
        assert cells[4] == f"{row['diff']:+.3f}"
        assert cells[5] == f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
        short = {
            "McNemar exact inverted": "exact",
            "betting (Waudby-Smith-Ramdas)": "betting",
            "bootstrap percentile": "bootstrap",
            "sign-flip inversion": "sign-flip",
            "sign-flip inversion widened to betting (too few differ)": "sign-flip+betting",
        }
        assert cells[6] == short[row["ci_method"]]
        assert cells[8] == p_shown and cells[10] == row["verdict"]
        assert cells[9] == ("exact" if row["p_method"].startswith("exact") else "MC")
    moved = [r["metric"] for r, p in zip(rows, holm, strict=True)
             if p < 0.05 and (r["ci_low"] > 0 or r["ci_high"] < 0)]  # fmt: skip
    assert moved == ["precision@k"]
    assert "moved for real: precision@k" in text


def test_runs_with_too_few_common_questions_get_a_note_not_a_crash(
    bench: dict[str, Path], tmp_path: Path
):
    data = json.loads(bench["k6"].read_text(encoding="utf-8"))
    data["rows"] = data["rows"][:5]  # 5 of k3's 60 questions: compare refuses the pair
    few = tmp_path / "few.json"
    few.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "r.html"
    cli("report", str(bench["k3"]), str(few), "--out", str(out))
    page = out.read_text(encoding="utf-8")
    assert "id=compare" not in page
    assert "not compared with k3" in page


def test_faithfulness_from_llm_judges_equals_compare(bench: dict[str, Path], tmp_path: Path):
    paths = []
    for name, offset in (("k3", 0), ("k6", 1)):
        data = json.loads(bench[name].read_text(encoding="utf-8"))
        data["config"]["judges"] = "offline+llm"
        data["config"]["llm_judges"] = {  # what judges.llm records (never the key)
            "model": "judge-model-x", "endpoint": "http://127.0.0.1:9/v1",
            "judges": ["faithfulness"], "versions": {"faithfulness": "faithfulness-v1"},
        }  # fmt: skip
        for i, row in enumerate(data["rows"]):
            # supported claims / claims, as the LLM faithfulness judge writes it
            row["metrics"]["faithfulness"] = ((i + offset) % 4) / 4 if row["answerable"] else None
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    out = tmp_path / "r.html"
    cli("report", str(paths[0]), str(paths[1]), "--out", str(out))
    page = out.read_text(encoding="utf-8")
    compare = json.loads(
        cli("compare", str(paths[0]), str(paths[1]), "--questions", "answerable",
            "--metric", "faithfulness", "--format", "json")
    )  # fmt: skip
    row = compare["metrics"][0]
    for run, side in (("k3", "mean_a"), ("k6", "mean_b")):
        found = re.search(
            rf'data-run="{run}" data-metric="faithfulness" data-value="([^"]+)" data-n="(\d+)"',
            page,
        )
        assert found is not None
        assert float(found.group(1)) == pytest.approx(row[side], abs=1e-12)
        assert int(found.group(2)) == row["n"]
    assert "<td>faithfulness</td>" in page  # a row of the paired comparison too
    # the configuration names the judge model and its prompt version
    assert "judge-model-x" in page and "faithfulness-v1" in page


def test_json_csv_and_table_carry_the_page_numbers(bench: dict[str, Path], tmp_path: Path):
    """--format json|csv|table: the same audit through the one renderer (the HTML page's
    numbers: its dashboard cells carry the value and interval as data attributes)."""
    args = [str(bench["k3"]), str(bench["k6"]), "--labels", str(bench["labels"])]
    for fmt in ("json", "csv", "table"):
        cli("report", *args, "--format", fmt, "--out", str(tmp_path / f"r.{fmt}"))
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    page = bench["html"].read_text(encoding="utf-8")
    table = (tmp_path / "r.table").read_text(encoding="utf-8")
    for run in data["runs"]:
        for row in run["dashboard"]:
            if row["value"] is None:
                continue
            cell = (
                f'data-run="{run["name"]}" data-metric="{row["key"]}" '
                f'data-value="{row["value"]!r}" data-n="{row["n"]}"'
            )
            assert cell in page, (run["name"], row["key"])
            if row["unit"] == "usd":  # dollars: $0 offline (no model was called)
                assert row["value"] == 0.0 and "$0 [$0, $0]" in table
                continue
            assert f"{row['value']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]" in table
    (pair,) = data["comparisons"]
    assert (pair["run_a"], pair["run_b"]) == ("k3", "k6")
    assert "COMPARISON (B = k6 vs A = k3;" in table
    assert (
        (tmp_path / "r.csv")
        .read_text(encoding="utf-8")
        .startswith("section,number,k3 (k=3),k6 (k=6),MDE")
    )


def _discordant_runs(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """Two runs of eight questions; correctness flips on q2, q5 and q7 (and on no other)."""
    flipped = ["q2", "q5", "q7"]
    paths = []
    for name in ("a", "b"):
        rows = []
        for i in range(8):
            qid = f"q{i}"
            correct = (i % 2 == 0) != (name == "b" and qid in flipped)
            rows.append({
                "id": qid, "question": f"question {qid} <i>?", "answerable": True,
                "gold_docs": ["G"], "keywords": ["EUR"],
                "retrieved": [{"chunk_id": "G#0", "doc_id": "G", "rank": 1}],
                "answer": f"{name} says 5 EUR <b>{qid}</b>", "reference_answer": "8 EUR",
                "judges": {"abstained": False, "correct": correct, "evidence_in_context": True},
                "metrics": {"correct": float(correct), "recall@k": 1.0},
            })  # fmt: skip
        data = {"format": "ragaudit.run", "format_version": 1, "name": f"run_{name}",
                "config": {"k": 1}, "rows": rows, "summary": {}}  # fmt: skip
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1], flipped


def test_discordant_questions_open_to_both_answers(tmp_path: Path):
    a, b, flipped = _discordant_runs(tmp_path)
    page, md = tmp_path / "r.html", tmp_path / "r.md"
    common = [str(a), str(b), "--resamples", "50"]
    cli("report", *common, "--out", str(page))
    cli("report", *common, "--format", "markdown", "--out", str(md))
    html = page.read_text(encoding="utf-8")
    shown = re.findall(r'<details class="discordant" data-qid="([^"]+)">', html)
    assert shown == flipped
    assert f"Discordant questions on correctness: {len(flipped)}</strong>" in html
    for qid in flipped:  # both answers side by side, escaped, the keyword highlighted
        for run in ("a", "b"):
            assert f"{run} says 5 <mark>EUR</mark> &lt;b&gt;{qid}&lt;/b&gt;" in html
    assert html.count('<ul class="pair">\n<li><strong>run_a: ') == len(flipped)
    assert "<b>" not in html and "<i>" not in html
    text = md.read_text(encoding="utf-8")
    assert f"Discordant questions on correctness: {len(flipped)}**" in text
    bodies = re.findall(
        r"<details><summary>(q\d) question.*?</summary>\n<pre>(.*?)</pre>", text, re.S
    )
    assert [qid for qid, _ in bodies if qid in flipped] == flipped
    for qid, body in bodies:
        if qid in flipped:
            assert "run_a: " in body and f"b says 5 EUR &lt;b&gt;{qid}&lt;/b&gt;" in body
    assert "<b>" not in text and "<i>" not in text
