"""A Parquet run read a batch at a time, keeping only the columns the statistics read, gives
the same `funnel`, `compare` and dashboard numbers as the run read whole.

Oracle: the same commands on the same runs read whole (every column, one batch), the path
that the rest of the suite checks against hand-computed values.  The runs are generated here
from a seeded generator (seed 33, written for this test): 61 questions, some unanswerable,
judges that decide, fail or are absent, so that every stage and the unjudged list are used.
A batch of 7 rows makes 9 batches, the last one partial.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ragaudit.cli import main as cli
from ragaudit.data.records import load_saved_run, numbers_only, write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.diagnose.audit import build_audit
from ragaudit.exceptions import FormatError

N = 61


def _run(seed: int, name: str) -> SavedRun:
    """Run a (seed 33) lists its retrieved entries in rank order, run b (seed 34) in reverse
    (ranks 4, 3, 2, 1): ``compare`` keeps the top k of a only."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(N):
        gold = f"d{rng.integers(8)}"
        docs = [f"d{d}" for d in rng.permutation(8)[:4]]
        verdict = [True, False, None][rng.integers(3)]
        judges = {"abstained": bool(rng.random() < 0.2), "correct": verdict,
                  "sufficiency": bool(rng.random() < 0.6)}  # fmt: skip
        rows.append({
            "id": f"q{i}", "question": f"question {i} " * 3, "answerable": bool(i % 9),
            "reference_answer": "because", "gold_docs": [gold],
            "retrieved": [{"chunk_id": f"{d}#0", "doc_id": d, "score": 1.0 / (r + 1),
                           "rank": r + 1} for r, d in enumerate(docs)],
            "context_ids": [f"{d}#0" for d in docs[:2]], "answer": f"answer {i}",
            "judges": judges,
            "metrics": {"hit@k": float(gold in docs[:2]), "correct": verdict,
                        "recall@k": float(gold in docs)},
        })  # fmt: skip
        if seed == 34:
            rows[-1]["retrieved"].reverse()
    return SavedRun.from_dict({"name": name, "config": {"k": 2}, "rows": rows})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch")
    paths = []
    for seed, name in ((33, "a"), (34, "b")):
        for suffix in ("json", "parquet"):
            write_saved_run(folder / f"{name}.{suffix}", _run(seed, name))
        paths.append(str(folder / f"{name}.parquet"))
    return paths


def _json(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    return result.exit_code, result.stdout


@pytest.mark.parametrize("command", [["funnel"], ["compare"], ["funnel", "--seed", "5"]])
def test_batches_of_7_give_the_json_of_one_batch(runs, command):
    one_run = command[0] == "funnel" and "--seed" not in command
    paths = runs[:1] if one_run else runs
    whole = _json([*command, *paths, "--batch-rows", "100000"])
    batched = _json([*command, *paths, "--batch-rows", "7"])
    as_json = _json([*command, *(p.replace(".parquet", ".json") for p in paths)])
    assert whole[0] == batched[0] == as_json[0] == 0, whole[1]
    assert json.loads(batched[1]) == json.loads(whole[1])
    assert batched[1] == as_json[1].replace(".json", ".parquet")  # the JSON file read whole


def test_the_dashboard_numbers_are_the_same(runs):
    whole = [load_saved_run(p) for p in runs]
    with numbers_only(batch_rows=7):
        batched = [load_saved_run(p) for p in runs]
    assert batched[0].table["question"].null_count == N  # the text was not kept
    assert whole[0].table["question"].null_count == 0
    first = build_audit(whole, seed=0, n_resamples=50)
    second = build_audit(batched, seed=0, n_resamples=50)
    numbers = [[row for row in run.dashboard] for run in first.runs]
    assert [[row for row in run.dashboard] for run in second.runs] == numbers
    assert len(numbers[0]) >= 6


def test_bad_row_in_a_late_batch_is_named_and_nothing_is_written(tmp_path, runs):
    table = pq.read_table(runs[0])
    rows = table.to_pylist()
    rows[58]["retrieved"][0]["rank"] = 0  # row 58: the 9th batch of 7
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.from_pylist(rows, table.schema), bad, row_group_size=7)
    expected = f"{bad}: rows[58].retrieved[0].rank"
    with pytest.raises(FormatError) as whole:
        load_saved_run(bad)
    with numbers_only(batch_rows=7), pytest.raises(FormatError) as batched:
        load_saved_run(bad)
    assert str(batched.value) == str(whole.value)
    assert str(whole.value).startswith(expected)
    for command in (["funnel", str(bad)], ["compare", str(bad), runs[1]]):
        result = CliRunner().invoke(cli, [*command, "--batch-rows", "7"])
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.strip() == f"ragaudit: error: {whole.value}"


def test_an_id_repeated_across_batches_is_refused_as_whole(tmp_path, runs):
    table = pq.read_table(runs[0])
    rows = table.to_pylist()
    rows[60]["id"] = "q1"  # batch 9 repeats an id of batch 1
    bad = tmp_path / "dup.parquet"
    pq.write_table(table.from_pylist(rows, table.schema), bad)
    with numbers_only(batch_rows=7), pytest.raises(FormatError, match=r"rows\[60\]\.id: dup"):
        load_saved_run(bad)
