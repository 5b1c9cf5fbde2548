"""Retrieved items absent from the corpus, counted by the audit (issue 24, item 4).

The expected counts are by hand: the demo's k=3 run with some of its retrieved chunk ids
replaced by ids the corpus does not have, so exactly those are absent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.diagnose.unjudged import absent_items, run_judged


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, copy_demo: Callable[[Path], Path]) -> Path:
    # a copy of the session's demo run (tests/conftest.py; issue 32, CPU budget)
    return copy_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    from ragaudit.cli.demo import benchmark_paths
    from ragaudit.pipeline.corpus import chunk_texts

    with benchmark_paths() as (corpus, _):
        return chunk_texts(corpus, {"chunker": "fixed", "chunk_size": 800, "chunk_overlap": 100})


def broken(demo: Path, tmp: Path) -> Path:
    """The k=3 run with q01's rank-2 chunk and q02's rank-1 and rank-3 chunks renamed."""
    doc = json.loads((demo / "k3_cs800.json").read_text())
    rename = {("q01", 2), ("q02", 1), ("q02", 3)}
    for row in doc["rows"]:
        for hit in row["retrieved"]:
            if (row["id"], hit["rank"]) in rename:
                hit["chunk_id"] = f"gone-{row['id']}-{hit['rank']}"
    path = tmp / "k3_cs800.json"
    path.write_text(json.dumps(doc))
    return path


def test_absent_items_counted_by_hand(demo, texts, tmp_path):
    path = broken(demo, tmp_path)
    run = load_saved_run(path)
    absent = absent_items(run, texts, 3)
    assert absent.items == (("q01", "gone-q01-2"), ("q02", "gone-q02-1"), ("q02", "gone-q02-3"))
    assert absent.questions == ("q01", "q02")
    # every distinct chunk in each of the 60 questions' top 3
    rows = json.loads(path.read_text())["rows"]
    by_hand = sum(
        len({h["chunk_id"] for h in sorted(r["retrieved"], key=lambda h: h["rank"])[:3]})
        for r in rows
    )
    assert absent.n_checked == by_hand
    assert absent.message().startswith(f"k3_cs800: 3 of the {by_hand} items in the top 3 (2 ")
    # the demo's own run: every item is in the corpus, no warning
    clean = run_judged(load_saved_run(demo / "k3_cs800.json"), corpus_chunks=texts.keys())
    assert clean.absent is not None and clean.absent.items == () and not clean.absent.message()
    assert clean.to_dict()["absent"] is None  # the JSON of a clean run is that without a corpus


def test_the_audit_counts_them_with_a_corpus(demo, texts, tmp_path):
    path = broken(demo, tmp_path)
    audit = build_audit([path], chunk_texts=texts, n_resamples=50)
    judged = audit.runs[0].judged
    assert judged is not None and judged.absent is not None
    assert len(judged.absent.items) == 3
    assert judged.absent.message() in judged.warnings()
    data = audit.to_dict()["runs"][0]["judged"]["absent"]
    assert (data["n_absent"], data["questions"]) == (3, ["q01", "q02"])
    # without a corpus nothing is checked
    assert build_audit([path], n_resamples=50).runs[0].judged.absent is None


def test_a_differently_chunked_run_is_not_checked(demo, texts, tmp_path):
    first = load_saved_run(demo / "k3_cs800.json")
    doc = json.loads((demo / "k6_cs800.json").read_text())
    doc["config"]["chunk_size"] = 400  # chunk ids of another chunking: nothing to check
    other = SavedRun.from_dict(doc)
    audit = build_audit([first, other], chunk_texts=texts, n_resamples=50, compare_resamples=50,
                        allow_different_data=True)  # fmt: skip
    assert audit.runs[0].judged.absent is not None and audit.runs[1].judged.absent is None


def test_report_prints_the_count(demo, tmp_path):
    from ragaudit.cli.demo import benchmark_paths

    path = broken(demo, tmp_path)
    with benchmark_paths() as (corpus, _):
        result = CliRunner().invoke(
            main, ["report", str(path), "--corpus", str(corpus), "--format", "markdown",
                   "--out", str(tmp_path / "r.md")],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = " ".join((tmp_path / "r.md").read_text().split())
    assert "3 of the" in page and "are not in the corpus as chunked for this run" in page


def test_funnel_prints_judged_and_counts_absent_items(demo, tmp_path):
    """``funnel RUN --corpus``: judged@3 by hand from the file (the top 3 chunks lifted to
    their documents, the share that is a gold document) and the three renamed chunks."""
    from ragaudit.cli.demo import benchmark_paths

    path = broken(demo, tmp_path)
    shares = []
    for row in json.loads(path.read_text())["rows"]:
        if not row.get("answerable", True) or not row.get("gold_docs"):
            continue
        top = sorted(row["retrieved"], key=lambda h: h["rank"])[:3]
        docs = list(dict.fromkeys(h["doc_id"] for h in top))
        shares.append(sum(d in row["gold_docs"] for d in docs) / min(3, len(docs)))
    with benchmark_paths() as (corpus, _):
        args = ["funnel", str(path), "--corpus", str(corpus)]
        result = CliRunner().invoke(main, [*args, "--format", "json"])
        table = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    judged = json.loads(result.stdout)["judged"]
    assert judged["doc"]["mean"] == pytest.approx(sum(shares) / len(shares), abs=1e-12)
    assert judged["doc"]["n"] == len(shares) == 54
    assert judged["absent"]["n_absent"] == 3 and judged["chunk"] is None
    assert f"document level {sum(shares) / len(shares):.3f} (n=54)" in table.stdout
    assert "3 of the" in table.stdout and "not in the corpus" in table.stdout
