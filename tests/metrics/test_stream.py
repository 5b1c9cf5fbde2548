"""Streaming evaluation gives trec_eval's numbers batch by batch, whatever the batch size.

Expected values come from pytrec_eval on the same files; batches as small as a few lines make
questions straddle batch boundaries, which the carry-over must join.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ragaudit.data.formats import read_trec_qrels
from ragaudit.exceptions import InputError
from ragaudit.metrics import evaluate_stream

pytrec_eval = pytest.importorskip("pytrec_eval")
MEASURES = {"ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100", "P@5": "P_5", "mrr": "recip_rank"}


def _files(tmp_path, seed, n_questions=40):
    rng = np.random.default_rng(seed)
    run_lines, qrel_lines = [], []
    for q in range(n_questions):
        docs = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
        scores = np.round(rng.random(len(docs)) * 4, 1)  # ties are common
        run_lines += [f"q{q} Q0 d{d} 1 {s} t\n" for d, s in zip(docs, scores, strict=True)]
        if q % 7 != 3:  # some run questions have no labels
            labelled = rng.choice(60, size=5, replace=False)
            grades = rng.integers(0, 3, size=5)
            grades[0] = 2  # at least one relevant label
            qrel_lines += [f"q{q} 0 d{d} {g}\n" for d, g in zip(labelled, grades, strict=True)]
    qrel_lines += ["unretrieved 0 dx 1\n"]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(run_lines))
    qrels.write_text("".join(qrel_lines))
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("batch_bytes", [40, 333, 1 << 20])
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_stream_matches_pytrec_eval(tmp_path, seed, batch_bytes, missing):
    qrels_path, run_path = _files(tmp_path, seed)
    with open(qrels_path) as handle:
        trec_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        trec_run = pytrec_eval.parse_run(handle)
    expected = pytrec_eval.RelevanceEvaluator(trec_qrels, set(MEASURES.values())).evaluate(trec_run)
    with pytest.warns(Warning):
        ev = evaluate_stream(
            read_trec_qrels(qrels_path),
            run_path,
            list(MEASURES),
            missing=missing,
            batch_bytes=batch_bytes,
        )
    labelled_in_run = [q for q in trec_qrels if q in trec_run]
    assert list(ev.query_ids) == (list(trec_qrels) if missing == "zero" else labelled_in_run)
    for name, measure in MEASURES.items():
        ours = dict(zip(ev.query_ids, ev.per_query[name].tolist(), strict=True))
        for qid in ev.query_ids:
            want = expected[qid][measure] if qid in expected else 0.0
            assert ours[qid] == pytest.approx(want, abs=1e-12), (name, qid)
        assert ev.means[name] == pytest.approx(np.mean(list(ours.values())), abs=1e-12)


def test_a_question_met_twice_is_an_error(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 c 2 0.5 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    for batch_bytes in (10, 1 << 20):
        with pytest.raises(InputError, match=r"question 'q1' appears in two separate places"):
            evaluate_stream(read_trec_qrels(qrels), run, ["mrr"], batch_bytes=batch_bytes)


def test_cli_stream_prints_the_same_means_as_pytrec_eval(tmp_path):
    import json

    from click.testing import CliRunner

    from ragaudit.cli import main

    qrels_path, run_path = _files(tmp_path, 5)
    with open(qrels_path) as handle:
        trec_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path) as handle:
        trec_run = pytrec_eval.parse_run(handle)
    expected = pytrec_eval.RelevanceEvaluator(trec_qrels, {"recip_rank"}).evaluate(trec_run)
    args = ["evaluate", "--qrels", str(qrels_path), "--run", str(run_path), "-m", "mrr"]
    result = CliRunner().invoke(main, [*args, "--stream", "--missing", "skip", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["metrics"]["mrr"] == pytest.approx(
        np.mean([v["recip_rank"] for v in expected.values()]), abs=1e-12
    )


# --------------------------------------------------------------------------------------------
# The columnar streaming path against memory mode (exact equality) and pytrec_eval, with
# batches of a few lines: labels in another order than the run, labels not grouped by
# question, labels built in Python, ties, item ids of every length, duplicates.
# --------------------------------------------------------------------------------------------
from ragaudit.data.formats import read_trec_run  # noqa: E402
from ragaudit.data.qrels import Qrels  # noqa: E402
from ragaudit.data.runs import Run  # noqa: E402
from ragaudit.exceptions import FormatError  # noqa: E402
from ragaudit.metrics import evaluate  # noqa: E402

_ITEMS = ["d{}", "document-with-a-long-shared-prefix-{:04d}", "doc-é-{}", "12345678{}", "D{:07d}"]


def _mixed_files(tmp_path, seed, qrels_layout):
    """A run (questions grouped) and qrels laid out as ``qrels_layout`` says."""
    rng = np.random.default_rng(seed)
    run_lines, labels = [], []
    for q in range(30):
        qid = f"question-{q}" if q % 3 else f"q{q}"  # ids shorter and longer than 8 bytes
        n = int(rng.integers(1, 25))
        docs = rng.choice(50, size=n, replace=False)
        names = [_ITEMS[int(d) % 5].format(int(d)) for d in docs]
        scores = np.round(rng.normal(size=n), 1)  # ties are common
        run_lines += [f"{qid} Q0 {d} 1 {s} t\n" for d, s in zip(names, scores, strict=True)]
        if q % 5 != 2:  # some run questions have no labels
            picked = rng.choice(50, size=6, replace=False)
            grades = rng.integers(0, 4, size=6) * (q != 4)  # q4: no relevant item
            labels += [(qid, _ITEMS[int(d) % 5].format(int(d)), int(g))
                       for d, g in zip(picked, grades, strict=True)]  # fmt: skip
    labels += [("never-retrieved", "x", 1), ("no-relevant", "y", 0)]
    if qrels_layout == "shuffled questions":  # grouped, questions in another order
        by_q: dict[str, list] = {}
        for label in labels:
            by_q.setdefault(label[0], []).append(label)
        order = rng.permutation(len(by_q))
        groups = list(by_q.values())
        labels = [label for i in order for label in groups[i]]
    elif qrels_layout == "interleaved":  # a question's labels spread over the file
        labels = [labels[i] for i in rng.permutation(len(labels))]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(run_lines), encoding="utf-8")
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in labels), encoding="utf-8")
    return qrels, run


def _expected(qrels_path, run_path, measures):
    with open(qrels_path, encoding="utf-8") as handle:
        trec_qrels = pytrec_eval.parse_qrel(handle)
    with open(run_path, encoding="utf-8") as handle:
        trec_run = pytrec_eval.parse_run(handle)
    return pytrec_eval.RelevanceEvaluator(trec_qrels, set(measures)).evaluate(trec_run)


def _caught(function):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = function()
    return result, [(w.category, str(w.message)) for w in seen]


@pytest.mark.parametrize("layout", ["run order", "shuffled questions", "interleaved"])
@pytest.mark.parametrize("batch_bytes", [1, 57, 400, 1 << 20])
@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("python_labels", [False, True])
def test_stream_equals_memory_mode_and_pytrec_eval(
    tmp_path, layout, batch_bytes, missing, python_labels
):
    qrels_path, run_path = _mixed_files(tmp_path, 3, layout)
    qrels = read_trec_qrels(qrels_path)
    if python_labels:  # a Qrels built from dicts, not columns
        qrels = Qrels(qrels.to_dict())
    metrics = list(MEASURES)
    memory, memory_warnings = _caught(
        lambda: evaluate(qrels, read_trec_run(run_path), metrics, missing=missing)
    )
    streamed, stream_warnings = _caught(
        lambda: evaluate_stream(qrels, run_path, metrics, missing=missing, batch_bytes=batch_bytes)
    )
    assert streamed.query_ids == memory.query_ids
    for name in metrics:
        assert streamed.per_query[name].tolist() == memory.per_query[name].tolist(), name
        assert streamed.means[name] == memory.means[name]
    assert (streamed.tied_groups, streamed.float32_tied_groups) == (
        memory.tied_groups,
        memory.float32_tied_groups,
    )
    assert streamed.tied_groups > 0
    assert stream_warnings == memory_warnings  # the same texts, in the same order
    assert len(stream_warnings) == (3 if missing == "zero" else 2)
    expected = _expected(qrels_path, run_path, MEASURES.values())
    for name, measure in MEASURES.items():
        for qid, value in zip(streamed.query_ids, streamed.per_query[name].tolist(), strict=True):
            want = expected[qid][measure] if qid in expected else 0.0
            assert value == pytest.approx(want, abs=1e-12), (name, qid)


@pytest.mark.parametrize("batch_bytes", [1, 45, 1 << 20])
def test_duplicates_in_a_stream_as_in_memory_mode(tmp_path, batch_bytes):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 2 t\nq2 Q0 d 2 1 t\nq2 Q0 c 3 0.5 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 b 1\nq2 0 c 1\nq2 0 d 2\n")
    labels = read_trec_qrels(qrels)
    with pytest.raises(InputError, match=r"question 'q2': item 'c' appears more than once"):
        evaluate_stream(labels, run, ["mrr"], batch_bytes=batch_bytes)
    first = evaluate_stream(labels, run, ["mrr", "ndcg@3"], duplicates="first",
                            batch_bytes=batch_bytes)  # fmt: skip
    memory = evaluate(labels, read_trec_run(run, duplicates="first"), ["mrr", "ndcg@3"])
    assert first.per_query["mrr"].tolist() == [0.5, 1.0]  # by hand
    for name in ("mrr", "ndcg@3"):
        assert first.per_query[name].tolist() == memory.per_query[name].tolist()


@pytest.mark.parametrize(
    ("text", "again"),
    [
        ("q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 c 2 0.5 t\n", "q1"),  # labelled, met again
        ("q1 Q0 a 1 1 t\nzz Q0 b 1 1 t\nq2 Q0 b 1 1 t\nzz Q0 c 2 0.5 t\n", "zz"),  # unlabelled
        ("q1 Q0 a 1 1 t\nq1 Q0 b 1 1 t\nq2 Q0 b 1 1 t\nq2 Q0 c 1 1 t\nq1 Q0 c 2 0.5 t\n", "q1"),
    ],
)
@pytest.mark.parametrize("batch_bytes", [1, 14, 30, 1 << 20])
def test_a_question_in_two_places_is_refused_at_any_batch_size(tmp_path, text, again, batch_bytes):
    run = tmp_path / "run.txt"
    run.write_text(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n")
    with pytest.raises(InputError, match=rf"question '{again}' appears in two separate places"):
        evaluate_stream(read_trec_qrels(qrels), run, ["mrr"], batch_bytes=batch_bytes)


@pytest.mark.parametrize("batch_bytes", [1, 40, 1 << 20])
def test_a_bad_line_is_named_by_file_and_line(tmp_path, batch_bytes):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1 t\nq1 Q0 b 2 0.5 t\nq2 Q0 c 1 1 t\nq2 Q0 d 2 high t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 c 1\n")
    with pytest.raises(FormatError, match=rf"{run}:4: score: expected a number, found 'high'"):
        evaluate_stream(read_trec_qrels(qrels), run, ["mrr"], batch_bytes=batch_bytes)


def test_the_label_lookup_walks_every_id_sharing_a_hash():
    from ragaudit.data.formats.strings import Strings
    from ragaudit.metrics._stream_labels import LabelColumns

    labels = LabelColumns(Qrels({"a": {"x": 1}, "bb": {"x": 1}, "ccc": {"x": 1}}))
    # Make every id share one hash: the lookup must check each candidate's bytes.
    labels.sorted_hashes = np.zeros(3, dtype=np.uint64)
    names = Strings.from_list(["ccc", "zz", "a", "bb"])
    found = labels.codes(names, np.zeros(4, dtype=np.uint64))
    assert found.tolist() == [2, -1, 0, 1]
    assert labels.codes(names, np.ones(4, dtype=np.uint64)).tolist() == [-1] * 4


@pytest.mark.parametrize("batch_bytes", [1, 400, 1 << 20])
def test_file_order_rankings_stream_as_in_memory_mode(tmp_path, batch_bytes):
    qrels_path, run_path = _mixed_files(tmp_path, 4, "shuffled questions")
    qrels = read_trec_qrels(qrels_path)
    metrics = list(MEASURES)
    memory, _ = _caught(lambda: evaluate(qrels, read_trec_run(run_path, order="given"), metrics))
    streamed, _ = _caught(
        lambda: evaluate_stream(qrels, run_path, metrics, order="given", batch_bytes=batch_bytes)
    )
    by_score, _ = _caught(lambda: evaluate_stream(qrels, run_path, metrics))
    assert streamed.query_ids == memory.query_ids
    for name in metrics:
        assert streamed.per_query[name].tolist() == memory.per_query[name].tolist(), name
    assert streamed.tied_groups == memory.tied_groups > 0
    assert streamed.per_query["mrr"].tolist() != by_score.per_query["mrr"].tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qrels": {"q1": {"a": 1}}}, "qrels: expected a ragaudit Qrels, found dict"),
        ({"metrics": []}, "metrics: expected at least one metric name"),
        ({"missing": "drop"}, "missing: expected 'zero' or 'skip'"),
    ],
)
def test_arguments_are_checked_as_evaluate_checks_them(tmp_path, kwargs, message):
    # evaluate_stream shares evaluate's argument checks: a plain dict of labels is refused by
    # name, as evaluate refuses it, not scored as if it were a Qrels.
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1.0 t\n")
    call = {"qrels": Qrels({"q1": {"a": 1}}), "metrics": ["mrr"], "missing": "zero"} | kwargs
    with pytest.raises(InputError, match=message):
        evaluate_stream(call["qrels"], run, call["metrics"], missing=call["missing"])
    with pytest.raises(InputError, match=message):
        evaluate(call["qrels"], Run({"q1": {"a": 1.0}}), call["metrics"], missing=call["missing"])
