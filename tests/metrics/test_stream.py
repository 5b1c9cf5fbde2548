"""Streaming evaluation gives trec_eval's numbers batch by batch, whatever the batch size.

Expected values come from pytrec_eval on the same files; batches as small as a few lines make
questions straddle batch boundaries, which the carry-over must join.
"""

from __future__ import annotations

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
