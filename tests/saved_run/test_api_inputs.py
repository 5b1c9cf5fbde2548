"""The public API a notebook user can guess (issue 23 item 4, issue 25 item 9): wrong types are
an InputError naming the argument, a saved run given to load_run says which loader reads it, a
single metric string is one metric, and plan() defaults as the CLI does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import ragaudit
from ragaudit.exceptions import FormatError, InputError
from ragaudit.stats.power import planning_table


def _saved(tmp_path: Path, name: str, correct: list[bool]) -> Path:
    rows = [
        {"id": f"q{i}", "gold_docs": ["D"], "metrics": {"correct": c, "recall@k": 1.0},
         "retrieved": [{"chunk_id": "D#0", "doc_id": "D", "rank": 1, "score": 2.0},
                       {"chunk_id": "E#0", "doc_id": "E", "rank": 2, "score": 1.0}]}
        for i, c in enumerate(correct)
    ]  # fmt: skip
    saved = ragaudit.SavedRun.from_dict({"name": name, "config": {"k": 2}, "rows": rows})
    from ragaudit.data.records import write_saved_run

    return Path(write_saved_run(tmp_path / f"{name}.json", saved).path or "")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ragaudit.load_run(None), r"^path: expected a file path .* found NoneType$"),
        (lambda: ragaudit.load_run(b"p"), r"^path: expected a file path .* found bytes b'p'$"),
        (lambda: ragaudit.load_run(123), r"^path: expected a file path .* found int 123$"),
        (lambda: ragaudit.load_qrels(None), r"^path: expected a file path .* found NoneType$"),
        (lambda: ragaudit.load_saved_run({"rows": []}), r"^path: expected a file path .*dict"),
        (lambda: ragaudit.plan("abc", [0.1]), r"^ns: expected a list of golden-set sizes"),
        (lambda: ragaudit.plan(5, [0.1]), r"^ns: expected a list of golden-set sizes.*found 5$"),
        (lambda: ragaudit.plan([50], 0.1), r"^disagree: expected a list of disagreement rates"),
        (lambda: ragaudit.plan([0], [0.1]), r"^ns\[\]: expected an integer >= 1, found 0$"),
        (lambda: ragaudit.plan([50], [1.5]), r"^disagree\[\]: expected a number strictly"),
        (lambda: ragaudit.compare_runs(None, None), r"^run_a: expected a saved run, a file path"),
        (lambda: ragaudit.compare_runs(3, 4), r"^run_a: expected .* found int$"),
        (lambda: ragaudit.audit(None), r"^runs: expected a saved run, a path or a list"),
    ],
)
def test_a_wrong_type_is_an_input_error_naming_the_argument(call, message) -> None:
    with pytest.raises(InputError, match=message):
        call()


def test_load_run_never_reads_a_file_descriptor(tmp_path: Path) -> None:
    read, write = os.pipe()
    try:
        os.write(write, b"q1 Q0 d1 1 1.0 x\n")
        with pytest.raises(InputError, match="found int"):
            ragaudit.load_run(read)
        assert os.read(read, 4) == b"q1 Q"  # the descriptor was not read
    finally:
        os.close(read)
        os.close(write)


def test_load_run_on_a_saved_run_names_the_loader(tmp_path: Path) -> None:
    path = _saved(tmp_path, "k2", [True, False])
    for load in (ragaudit.load_run, ragaudit.load_qrels):
        with pytest.raises(FormatError, match=r"found a ragaudit saved run: read it with "
                           r"ragaudit\.load_saved_run\(path\), then \.to_run\(\)"):  # fmt: skip
            load(path)
    # a JSON run that is no saved run keeps its own message
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something else", "rows": []}), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        ragaudit.load_run(other)
    assert "saved run" not in str(caught.value)


def test_saved_run_to_run_and_to_qrels_evaluate_as_the_run_says(tmp_path: Path) -> None:
    saved = ragaudit.load_saved_run(_saved(tmp_path, "k2", [True, False]))
    run, qrels = saved.to_run(unit="doc"), saved.to_qrels()
    assert run["q0"] == ["D", "E"] and qrels.to_dict() == {"q0": {"D": 1}, "q1": {"D": 1}}
    assert saved.to_run()["q0"] == ["D#0", "E#0"] and saved.to_run(k=1)["q0"] == ["D#0"]
    # recall@2 of the doc-level ranking against the gold documents: 1 per question, as saved
    ev = ragaudit.evaluate(qrels, run, ["recall@2"])
    assert ev.means["recall@2"] == 1.0 == saved.questions[0].metric("recall@k")


def test_one_metric_string_is_one_metric(tmp_path: Path) -> None:
    a = _saved(tmp_path, "a", [True] * 8)
    b = _saved(tmp_path, "b", [i < 2 for i in range(8)])
    result = ragaudit.compare_runs(a, b, "correct")
    assert [m.metric for m in result.metrics] == ["correct"]
    from ragaudit.testing import assert_not_worse

    with pytest.raises(AssertionError, match=r"significantly worse .* on correct"):
        assert_not_worse(a, b, metrics="correct")


def test_compare_runs_takes_evaluations() -> None:
    qrels = ragaudit.Qrels({f"q{i}": {"A": 1} for i in range(8)})
    good = ragaudit.evaluate(qrels, ragaudit.Run({f"q{i}": ["A"] for i in range(8)}), ["hit@1"])
    bad = ragaudit.evaluate(qrels, ragaudit.Run({f"q{i}": ["B"] for i in range(8)}), ["hit@1"])
    row = ragaudit.compare_runs(good, bad, "hit@1").metrics[0]
    # all 8 questions lose the hit: diff -1, exact sign-flip p = 2 / 2^8
    assert (row.statistic, row.pvalue) == (-1.0, 2 / 2**8)


def test_compare_runs_has_an_explicit_signature() -> None:
    import inspect

    params = inspect.signature(ragaudit.compare_runs).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert {"questions", "seed", "method", "confidence", "n_resamples"} <= set(params)


def test_plan_defaults_are_the_clis() -> None:
    from click.testing import CliRunner

    from ragaudit.cli import main

    out = CliRunner().invoke(main, ["plan", "--format", "json"], catch_exceptions=False)
    rows = ragaudit.plan().to_dict()["rows"]
    assert rows == json.loads(out.stdout)
    expected = planning_table([20, 42, 100, 300, 1000], [0.1, 0.2, 0.3])
    assert [r["mde"] for r in rows] == [r.mde for r in expected]
