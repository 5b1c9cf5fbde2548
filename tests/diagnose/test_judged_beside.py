"""judged@k beside the retrieval metrics of ``compare`` (saved runs), ``compare --all``,
``funnel A B``, ``labels bias`` and ``baseline update``.

Expected values come from ir_measures' ``Judged@k`` on the rankings each saved run was scored
on (its top k chunks lifted to documents, each at its first chunk; the gold documents are the
only labels), read from the runs' JSON files, or by hand where the formula is written
(``judged@k = |labelled documents in the top k| / min(k, |documents in the top k|)``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.judged_beside import runs_judged
from ragaudit.exceptions import InputError, UnjudgedWarning
from ragaudit.reports.renderer import render

ir_measures = pytest.importorskip("ir_measures")

K3, K6 = "k3_cs800", "k6_cs800"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, copy_demo: Callable[[Path], Path]) -> Path:
    # a copy of the session's demo run (tests/conftest.py; issue 32, CPU budget)
    return copy_demo(tmp_path_factory.mktemp("demo"))


def ir_judged(path: Path, k: int) -> dict[str, float]:
    """ir_measures' Judged@k of a saved-run file, per question with gold documents."""
    doc = json.loads(path.read_text())
    qrels, run = [], []
    for row in doc["rows"]:
        if not row.get("answerable", True) or not row.get("gold_docs"):
            continue
        qrels += [ir_measures.Qrel(row["id"], d, 1) for d in row["gold_docs"]]
        hits = sorted(row["retrieved"], key=lambda h: h["rank"])[:k]
        docs = list(dict.fromkeys(h["doc_id"] for h in hits))
        run += [ir_measures.ScoredDoc(row["id"], d, float(len(docs) - i)) for i, d in
                enumerate(docs)]  # fmt: skip
    measure = ir_measures.Judged @ k
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


def mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values)


def saved(name: str, rankings: list[list[str]], k: int) -> SavedRun:
    """Questions q0, q1...: gold document G, the given documents retrieved (one chunk each)."""
    rows = [
        {"id": f"q{i}", "gold_docs": ["G"],
         "retrieved": [{"chunk_id": f"{d}#0", "doc_id": d, "rank": r + 1}
                       for r, d in enumerate(docs)],
         "metrics": {"correct": 1.0, "hit@k": float("G" in docs)}}
        for i, docs in enumerate(rankings)
    ]  # fmt: skip
    return SavedRun.from_dict({"name": name, "config": {"k": k}, "rows": rows})


def test_runs_judged_equals_ir_measures_on_the_demo(demo: Path):
    paths = [demo / f"{n}.json" for n in (K3, K6)]
    judged = runs_judged([ragaudit.load_saved_run(p) for p in paths])
    for run, path, k in zip(judged.runs, paths, (3, 6), strict=True):
        expected = ir_judged(path, k)
        assert run.doc is not None and run.doc.n_queries == len(expected) == 54
        assert run.doc.mean == pytest.approx(mean(expected), abs=1e-12)
        assert set(run.doc.below) == {q for q, v in expected.items() if v < 0.5}
    pair = judged.pairs[0]  # the common depth: 3
    assert (pair.a.k, pair.b.k) == (3, 3)
    assert pair.a.mean == pytest.approx(mean(ir_judged(paths[0], 3)), abs=1e-12)
    assert pair.b.mean == pytest.approx(mean(ir_judged(paths[1], 3)), abs=1e-12)


def test_gap_and_warnings_by_hand():
    # a: q0 G,X -> 1/2; q1 X,Y -> 0/2: mean 1/4.  b: q0 G,X -> 1/2; q1 G,G -> 1/1: mean 3/4
    a = saved("a", [["G", "X"], ["X", "Y"]], 2)
    b = saved("b", [["G", "X"], ["G", "G"]], 2)
    judged = runs_judged([a, b], margin=0.1)
    assert [r.doc.mean for r in judged.runs if r.doc] == [1 / 4, 3 / 4]
    assert judged.pairs[0].gap == pytest.approx(3 / 4 - 1 / 4)
    messages = judged.warnings()
    assert messages[0].startswith("a: judged@2 (document level) is 0.250 on average; 1 of 2 ")
    assert ": q1; " in messages[0]  # the question named
    assert messages[1].startswith("judged@2 (document level) differs by 0.500 between a (0.250)")
    assert "favours b" in messages[1]
    assert runs_judged([a, b], margin=0.5).warnings() == messages[:1]  # not more than 0.5
    assert runs_judged([a, b], threshold=0.0, margin=0.5).warnings() == ()
    with pytest.raises(InputError, match="judged margin: expected a share in"):
        runs_judged([a, b], margin=1.5)


def test_many_questions_below_are_capped():
    run = saved("r", [["X", "Y"]] * 8, 2)  # every question 0/2
    (message,) = runs_judged([run]).warnings()
    assert "8 of 8 questions" in message and "q0, q1, q2, q3, q4, ... (3 more)" in message


def test_compare_saved_runs_carries_judged_in_json_and_table(demo: Path):
    a, b = str(demo / f"{K3}.json"), str(demo / f"{K6}.json")
    args = ["compare", a, b, "-m", "ndcg@k", "--resamples", "200", "--permutations", "200"]
    cli = CliRunner().invoke(main, [*args, "--format", "json"])
    assert cli.exit_code == 0, cli.output
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ragaudit.compare_runs(a, b, "ndcg@k", n_resamples=200, n_permutations=200)
    library = json.loads(render(result.to_report(), "json"))
    assert library == json.loads(cli.stdout)  # the command renders the library's result
    judged = library["judged"]
    issued = [str(w.message) for w in caught if w.category is UnjudgedWarning]
    assert judged["warnings"] == issued and len(issued) == 2  # both runs have questions below
    assert cli.stderr.splitlines() == [f"ragaudit: warning: {m}" for m in issued]
    own = [mean(ir_judged(Path(a), 3)), mean(ir_judged(Path(b), 6))]
    assert [r["doc"]["mean"] for r in judged["runs"]] == pytest.approx(own, abs=1e-12)
    pair = judged["pairs"][0]
    common = [mean(ir_judged(Path(p), 3)) for p in (a, b)]
    assert [pair["mean_a"], pair["mean_b"]] == pytest.approx(common, abs=1e-12)
    assert pair["k"] == 3 and pair["warning"] is None  # the k=6 run's top 3 is the k=3 run's
    text = CliRunner().invoke(main, [*args, "--full"]).stdout
    row = next(line for line in text.splitlines() if line.startswith("judged@3 (doc)"))
    assert row.split()[2:6] == ["54", f"{common[0]:.3f}", f"{common[1]:.3f}", "+0.000"]
    assert f"{K6}: judged@6, the share of each top 6 that carries a label: document level " \
        f"{own[1]:.3f} (n=54)" in text
    # a metric that is not a retrieval metric: no judged@k
    quiet = CliRunner().invoke(main, [*args[:3], "-m", "correct", "--format", "json"])
    assert "judged" not in json.loads(quiet.stdout) and "judged@" not in quiet.stderr


def test_compare_gap_row_and_markdown_note(tmp_path: Path):
    # a: mean judged@2 1/4, b: 3/4 (by hand above), 12 questions each alternating
    a = saved("a", [["G", "X"], ["X", "Y"]] * 6, 2)
    b = saved("b", [["G", "X"], ["G", "G"]] * 6, 2)
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, run in zip(paths, (a, b), strict=True):
        write_saved_run(path, run)
    args = ["compare", *map(str, paths), "-m", "hit@k", "--resamples", "100",
            "--permutations", "100"]  # fmt: skip
    text = CliRunner().invoke(main, args)
    row = next(line for line in text.stdout.splitlines() if line.startswith("judged@2"))
    assert row.split()[2:6] == ["12", "0.250", "0.750", "+0.500"]
    assert "judged@2 (document level) differs by 0.500 between a (0.250) and b (0.750)" \
        in text.stderr
    markdown = CliRunner().invoke(main, [*args, "--format", "markdown"]).stdout
    assert "unjudged: judged@2 (document level) differs by 0.500" in markdown
    wide = CliRunner().invoke(main, [*args, "--judged-margin", "0.6", "--judged-threshold", "0",
                                     "--format", "json"])  # fmt: skip
    assert json.loads(wide.stdout)["judged"]["warnings"] == [] and wide.stderr == ""


def test_compare_qrels_json_carries_the_judged_warnings(tmp_path: Path):
    """compare --qrels compares judged@k as a metric; its warnings are in the JSON too."""
    data = Path(__file__).parents[1] / "data" / "metrics"
    # a second run: every question's ranking reversed
    rows = [line.split() for line in (data / "run.txt").read_text().splitlines() if line]
    second = tmp_path / "reversed.txt"
    second.write_text("".join(f"{q} Q0 {d} {r} {-float(s)} rev\n" for q, _, d, r, s, _ in rows))
    args = ["compare", "--qrels", data / "qrels.txt", data / "run.txt", second, "-m", "ndcg@2",
            "--resamples", "100", "--format", "json"]  # fmt: skip
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    judged = json.loads(result.stdout)["judged"]
    assert judged["runs"] == [] and judged["warnings"]
    unjudged = [m.removeprefix("ragaudit: warning: ") for m in result.stderr.splitlines()
                if "judged@" in m]  # fmt: skip
    assert judged["warnings"] == unjudged
    assert any("judged@2 is" in w for w in unjudged)
