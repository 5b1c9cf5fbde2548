"""``ragaudit labels verdicts``: a person grades a run's answers; ``calibrate`` reads the file.

Expected values come from the fixture (by hand), numpy's documented permutation (the order),
sklearn (confusion matrix, kappa) and ppi-python (PPI++), never from ragaudit's own output.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from ppi_py import ppi_mean_ci
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from ragaudit.cli import main
from ragaudit.data.human_grades import FORMAT, read_human_grades_file
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import FormatError, RagauditWarning
from ragaudit.labels.grading import sample_order

# q1..q8 judged (q8 unanswerable), q9 has no judged verdict: the population is q1..q8
JUDGE = {"q1": 1, "q2": 1, "q3": 0, "q4": 1, "q5": 0, "q6": 1, "q7": 1, "q8": 0, "q9": None}
SEED, N = 3, 5


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write_run(path, name="run", changed=()):
    rows = [
        {
            "id": qid,
            "question": f"question {qid}?",
            "answerable": qid != "q8",
            "reference_answer": f"reference {qid}",
            "answer": f"answer {qid}" + (" (regenerated)" if qid in changed else ""),
            "retrieved": [{"chunk_id": f"{qid}-c0", "doc_id": "doc"}],
            "judges": {} if verdict is None else {"correct": verdict},
            "metrics": {"correct": verdict},
        }
        for qid, verdict in JUDGE.items()
    ]
    write_saved_run(path, SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows}))
    return path


def _invoke(*args, input=None):
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagauditWarning)  # the CLI prints it on stderr
        return CliRunner().invoke(main, [str(a) for a in args], input=input)


def _shown(output):
    return re.findall(r"=== answer \d+ of \d+ \((q\d)\) ===", output)


@pytest.fixture
def run(tmp_path):
    return _write_run(tmp_path / "run.json")


def expected_order():
    population = [q for q, v in JUDGE.items() if v is not None]
    return [population[i] for i in np.random.default_rng(SEED).permutation(len(population))][:N]


def test_session_grades_skips_quits_resumes_in_the_seeded_order(run, tmp_path):
    out = tmp_path / "human.jsonl"
    order = expected_order()
    base = ("labels", "verdicts", run, "--out", out)
    # session 1: correct, wrong, a bad keystroke (asked again), a skip, then the input ends
    first = _invoke(*base, "--sample", N, "--seed", SEED, input="c\nw\nbogus\ns\n")
    assert first.exit_code == 0, first.output
    assert f"5 of 8 judged questions in a uniformly random order, seed {SEED}" in first.stderr
    assert "Error: 'bogus' is not one of 'c', 'w', 's', 'q'." in first.stdout
    assert _shown(first.stdout) == order[:4]  # the 4th was shown when the input ended
    assert "stopped: progress saved" in first.stdout
    header, *lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert header == {
        "format": FORMAT, "version": 1, "run": "run", "metric": "correct",
        "sample": {"random": True, "seed": SEED, "n": N, "of": 8},
    }  # fmt: skip
    assert lines == [
        {"id": order[0], "correct": True, "answer_sha256": _sha(f"answer {order[0]}")},
        {"id": order[1], "correct": False, "answer_sha256": _sha(f"answer {order[1]}")},
        {"id": order[2], "skipped": True, "answer_sha256": _sha(f"answer {order[2]}")},
    ]
    # session 2 (no --seed, no --sample: the file's) asks the 4th question; q quits at once
    second = _invoke(*base, input="q\n")
    assert second.exit_code == 0, second.output
    assert _shown(second.stdout) == [order[3]]
    assert len(out.read_text().splitlines()) == 4
    # session 3 finishes the sample
    third = _invoke(*base, input="w\nc\n")
    assert third.exit_code == 0, third.output
    assert _shown(third.stdout) == order[3:]
    assert "done: " in third.stdout and "4 verdict(s) and 1 skip(s) on 5 of 5" in third.stdout
    verdicts = read_human_grades_file(out)
    assert dict(verdicts) == {order[0]: 1.0, order[1]: 0.0, order[3]: 0.0, order[4]: 1.0}
    assert verdicts.skipped == (order[2],)
    # a finished sample asks nothing more
    fourth = _invoke(*base, input="")
    assert fourth.exit_code == 0 and _shown(fourth.stdout) == []


def test_a_larger_sample_with_the_same_seed_extends_it(run, tmp_path):
    out = tmp_path / "human.jsonl"
    _invoke("labels", "verdicts", run, "--out", out, "--sample", 2, "--seed", SEED, input="c\nc\n")
    more = _invoke("labels", "verdicts", run, "--out", out, "--sample", 4, input="w\nw\n")
    assert more.exit_code == 0, more.output
    order = expected_order()
    assert _shown(more.stdout) == order[2:4]
    assert [qid for qid, _ in read_human_grades_file(out).entries] == order[:4]
    assert read_human_grades_file(out).sample.n == 4


def test_the_order_is_a_uniformly_random_sample():
    # every question is in a sample of 2 of 5 with probability 2/5, every pair with 1/10
    ids = ["a", "b", "c", "d", "e"]
    draws = 3000
    firsts = [frozenset(sample_order(ids, seed)[:2]) for seed in range(draws)]
    for qid in ids:
        share = sum(qid in pair for pair in firsts) / draws
        assert abs(share - 0.4) < 4 * np.sqrt(0.4 * 0.6 / draws)
    pairs = {pair: firsts.count(pair) / draws for pair in set(firsts)}
    assert len(pairs) == 10
    assert all(abs(p - 0.1) < 4 * np.sqrt(0.1 * 0.9 / draws) for p in pairs.values())
    assert sample_order(ids, 7) == sample_order(ids, 7)  # deterministic


def test_judge_is_hidden_unless_asked(run, tmp_path):
    hidden = _invoke("labels", "verdicts", run, "--out", tmp_path / "a.jsonl", input="q\n")
    assert hidden.exit_code == 0, hidden.output
    assert "reference answer" in hidden.stdout and "answer q" in hidden.stdout
    judge_table = re.compile(r"^\s+judge\s+verdict\n\s+correct\s+[01]$", re.MULTILINE)
    assert not judge_table.search(hidden.stdout) and "stage" not in hidden.stdout
    assert not re.search(r"^\s+correct\s", hidden.stdout, re.MULTILINE)
    shown = _invoke(
        "labels", "verdicts", run, "--out", tmp_path / "b.jsonl", "--show-judge", input="q\n"
    )
    assert judge_table.search(shown.stdout), shown.stdout


def test_verdicts_round_trip_into_calibrate(run, tmp_path):
    out = tmp_path / "human.jsonl"
    typed = {"c": 1, "w": 0}
    keys = ["c", "w", "s", "w", "c"]
    result = _invoke(
        "labels", "verdicts", run, "--out", out, "--sample", N, "--seed", SEED,
        input="".join(k + "\n" for k in keys),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    order = expected_order()
    human = {q: typed[k] for q, k in zip(order, keys, strict=True) if k != "s"}
    cal = _invoke("calibrate", run, "--human", out, "--format", "json")
    assert cal.exit_code == 0, cal.output
    data = json.loads(cal.stdout)
    labelled = sorted(human)
    y = np.array([human[q] for q in labelled])
    yhat = np.array([JUDGE[q] for q in labelled])
    (tn, fp), (fn, tp) = confusion_matrix(y, yhat, labels=[0, 1])
    assert data["confusion"] == {
        "human1_judge1": tp, "human1_judge0": fn, "human0_judge1": fp, "human0_judge0": tn,
    }  # fmt: skip
    assert data["kappa"] == pytest.approx(cohen_kappa_score(y, yhat), abs=1e-12)
    assert (data["n_labeled"], data["n_unlabeled"]) == (4, 4)  # the skip is not a label
    rest = np.array([v for q, v in JUDGE.items() if v is not None and q not in human], float)
    low, high = ppi_mean_ci(y.astype(float), yhat.astype(float), rest, alpha=0.05)
    assert data["ppi"]["ci"] == pytest.approx([float(low[0]), float(high[0])], abs=1e-9)
    assert data["human_only"]["estimate"] == pytest.approx(y.mean())
    assert data["judge_only"]["estimate"] == pytest.approx(5 / 8)  # q1 q2 q4 q6 q7 of q1..q8
    assert data["sampling"] == (
        "human verdicts on a uniformly random sample of 5 of 8 judged questions (seed 3), 1 skipped"
    )
    assert f"1 sampled question(s) were skipped ({order[2]})" in cal.stderr


def test_calibrate_warns_when_the_file_says_the_sample_is_not_random(run, tmp_path):
    human = tmp_path / "picked.jsonl"
    header = {"format": FORMAT, "version": 1, "run": "other", "metric": "correct",
              "sample": {"random": False, "how": "the ones the judge got wrong"}}  # fmt: skip
    rows = [header, {"id": "q3", "correct": True}, {"id": "q5", "correct": False}]
    human.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = _invoke("calibrate", run, "--human", human)
    assert result.exit_code == 0, result.output
    assert "not a random sample (the ones the judge got wrong)" in result.stderr
    assert "made for run 'other', not 'run'" in result.stderr
    # a file that does not say keeps working, and the output says it is not recorded
    plain = tmp_path / "plain.yaml"
    plain.write_text("q3: true\nq5: false\n")
    again = _invoke("calibrate", run, "--human", plain)
    assert again.exit_code == 0, again.output
    assert "were chosen is not recorded" in again.stdout
    assert "sample" not in again.stderr and "run" not in again.stderr


def test_evidence_text_and_unanswerable_note_with_corpus(corpus, tmp_path):
    folder, golden = corpus
    made = _invoke(
        "run", "--corpus", folder, "--golden", golden, "--chunker", "markdown",
        "--chunk-size", 500, "--chunk-overlap", 0, "--k", 2, "--name", "tiny",
        "--out", tmp_path, "--no-timing",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    out = tmp_path / "h.jsonl"
    result = _invoke(
        "labels", "verdicts", tmp_path / "tiny.json", "--out", out, "--corpus", folder,
        input="c\n" * 5,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(_shown(result.stdout)) == ["q1", "q2", "q3", "q4", "q5"]
    assert "Employees receive twenty days of paid leave per year." in result.stdout
    assert result.stdout.count("unanswerable: correct means the model declined") == 1
    assert len(read_human_grades_file(out)) == 5


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--sample", 9), "--sample 9: expected at most the run's 8 judged 'correct' questions"),
        (("--metric", "faithful"), "no judged 'faithful' values"),
    ],
)
def test_bad_options_are_one_line_errors(run, tmp_path, extra, message):
    result = _invoke("labels", "verdicts", run, "--out", tmp_path / "h.jsonl", *extra)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_bad_files_are_one_line_errors(run, tmp_path):
    def error(*args, input=None):
        result = _invoke("labels", "verdicts", *args, input=input)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        return result.stderr

    missing = error(tmp_path / "nope.json", "--out", tmp_path / "h.jsonl")
    assert "nope.json: expected an existing file" in missing
    # --out under a regular file cannot be written
    assert f"{run}/h.jsonl: expected a writable path" in error(run, "--out", f"{run}/h.jsonl")
    assert "expected a .jsonl file" in error(run, "--out", tmp_path / "h.yaml")
    hand = tmp_path / "hand.jsonl"
    hand.write_text('{"id": "q1", "correct": true}\n')
    assert "expected the header `ragaudit labels verdicts` writes" in error(run, "--out", hand)
    out = tmp_path / "h.jsonl"
    _invoke("labels", "verdicts", run, "--out", out, "--seed", 1, input="c\n")
    assert "--seed 2: " in error(run, "--out", out, "--seed", 2)
    other = _write_run(tmp_path / "other.json", name="other")
    assert "expected verdicts on run 'other'" in error(other, "--out", out)


def test_reader_refuses_a_misplaced_header_and_a_skip_with_a_verdict(tmp_path):
    header = json.dumps({"format": FORMAT, "version": 1, "sample": {"random": True}})
    late = tmp_path / "late.jsonl"
    late.write_text('{"id": "q1", "correct": true}\n' + header + "\n")
    with pytest.raises(FormatError, match=r"late.jsonl:2: format: expected the header"):
        read_human_grades_file(late)
    both = tmp_path / "both.jsonl"
    both.write_text('{"id": "q1", "correct": true, "skipped": true}\n')
    with pytest.raises(FormatError, match=r"both.jsonl:1: correct: expected a verdict or"):
        read_human_grades_file(both)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"format": FORMAT, "version": 1, "sample": {"n": 3}}) + "\n")
    with pytest.raises(FormatError, match=r"bad.jsonl:1: sample: expected"):
        read_human_grades_file(bad, allow_empty=True)


def test_a_verdict_grades_one_answer_and_calibrate_refuses_another(run, tmp_path):
    out = tmp_path / "human.jsonl"
    graded = _invoke(
        "labels", "verdicts", run, "--out", out, "--sample", 3, "--seed", SEED, input="c\nw\nc\n"
    )
    assert graded.exit_code == 0, graded.output
    order = expected_order()[:3]
    # another run (another name) with the same answers: the verdicts apply, no warning
    same = _write_run(tmp_path / "same.json", name="rerun")
    ok = _invoke("calibrate", same, "--human", out)
    assert ok.exit_code == 0, ok.output
    assert "made for run" not in ok.stderr
    # the answer to the second graded question changed: that verdict grades another answer
    changed = _write_run(tmp_path / "changed.json", changed={order[1]})
    refused = _invoke("calibrate", changed, "--human", out)
    assert refused.exit_code == 2
    assert refused.output.count("\n") == 1 and "Traceback" not in refused.output
    expected = f"{out}:3: answer_sha256: expected the answer of run 'run' to {order[1]}"
    assert expected in refused.output
    # resuming the grading after the run changed is refused the same way
    write_changed = _write_run(tmp_path / "run.json", changed={order[0]})
    resumed = _invoke("labels", "verdicts", write_changed, "--out", out, "--sample", 5)
    assert resumed.exit_code == 2
    assert f"{out}:2: answer_sha256:" in resumed.output


def test_a_bad_answer_fingerprint_is_a_one_line_error(tmp_path):
    human = tmp_path / "h.jsonl"
    rows = [{"id": "q1", "correct": True}, {"id": "q2", "correct": True, "answer_sha256": "abc"}]
    human.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(FormatError, match=r"h\.jsonl:2: answer_sha256: expected 64 lowercase hex"):
        read_human_grades_file(human)


def test_labels_mark_the_answer_chunks_in_the_grading_view(corpus, tmp_path):
    folder, golden = corpus
    chunking = ("--chunker", "markdown", "--chunk-size", 500, "--chunk-overlap", 0)
    made = _invoke(
        "run", "--corpus", folder, "--golden", golden, *chunking, "--k", 2, "--name", "tiny",
        "--out", tmp_path, "--no-timing",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    labels = tmp_path / "labels.yaml"
    built = _invoke(
        "labels", "build", "--corpus", folder, "--golden", golden, *chunking,
        "--labeller", "heuristic", "--out", labels,
    )  # fmt: skip
    assert built.exit_code == 0, built.output
    answer_chunks = {
        qid: set(entry["answer_chunks"])
        for qid, entry in yaml.safe_load(labels.read_text())["questions"].items()
    }
    run_file = tmp_path / "tiny.json"
    retrieved = {
        row["id"]: [c["chunk_id"] for c in row["retrieved"][:2]]
        for row in json.loads(run_file.read_text())["rows"]
    }
    base = ("labels", "verdicts", run_file, "--sample", 5)
    plain = _invoke(*base, "--out", tmp_path / "a.jsonl", input="s\n" * 5)
    marked = _invoke(*base, "--out", tmp_path / "b.jsonl", "--labels", labels, input="s\n" * 5)
    assert plain.exit_code == 0 and marked.exit_code == 0, marked.output
    marks = re.compile(r"^\s+\d+\s+(\S+)\s+\S+\s+(?:yes|no|-)\s+(yes|no|-)$", re.MULTILINE)
    assert {mark for _, mark in marks.findall(plain.stdout)} == {"-"}
    expected = sorted(
        (chunk, "yes" if chunk in answer_chunks.get(qid, set()) else "no")
        for qid, chunks in retrieved.items()
        for chunk in chunks
    )
    assert sorted(marks.findall(marked.stdout)) == expected
    assert "yes" in {mark for _, mark in expected}  # the check can tell yes from no
