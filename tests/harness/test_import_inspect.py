"""``import --from inspect``: logs written by inspect_ai 0.3.285 with its offline mock model
(tests/fixtures/inspect/, scripts/make_inspect_fixtures.py) become saved runs whose exact
verdicts match scipy's binomial test on the discordant pairs counted from the raw logs.

The ``.json`` logs are read here as JSON (what inspect_ai's ``read_eval_log`` returns, dumped),
so the conversion is tested without inspect_ai installed; with it installed, its reader on the
``.eval`` and ``.json`` files gives the same rows.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.exceptions import FormatError
from ragaudit.pipeline.inspect_import import saved_run_from_log

from .conftest import exact_mcnemar_verdict

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def raw(name):
    return json.loads((LOGS / f"{name}.json").read_text(encoding="utf-8"))


def scores(log, scorer="match"):
    """``{sample id: 0/1}`` straight from the log's C/I values (epoch 1)."""
    return {s["id"]: {"C": 1, "I": 0}[s["scores"][scorer]["value"]] for s in log["samples"]}


def saved_file(tmp_path, name, **kw):
    made = saved_run_from_log(raw(name), f"{name}.json", name=name, **kw)
    return write_saved_run(tmp_path / f"{name}.json", made.saved).path


def test_compare_of_two_logs_is_the_exact_mcnemar_test(tmp_path):
    verdicts = set()
    files = {n: saved_file(tmp_path, n) for n in ("sys-a", "sys-b", "sys-d")}
    for a, b in (("sys-a", "sys-b"), ("sys-a", "sys-d"), ("sys-b", "sys-d")):
        left, right = scores(raw(a)), scores(raw(b))
        out = invoke("compare", files[a], files[b], "-m", "match", "--format", "json")
        assert out.exit_code == 0, out.output
        verdicts.add(exact_mcnemar_verdict(out.output, left, right))
    assert "SIGNIFICANT" in verdicts and len(verdicts) == 2  # both sides of the rule are seen


def test_epochs_are_stored_as_repeats_and_compare_pairs_their_means(tmp_path):
    """sys-c: 3 epochs per sample (inspect_ai's mock model).  Every epoch's score, answer and
    time is a repeat of its question, in epoch order; compare pairs the question means, which
    are what the log's own per-epoch scores average to."""
    log = raw("sys-c")
    made = saved_run_from_log(log, "sys-c.json", name="c")
    by_id: dict[str, dict[int, dict]] = {}
    for s in log["samples"]:
        by_id.setdefault(str(s["id"]), {})[s["epoch"]] = s
    saved = made.saved
    assert made.log.epochs == 3 and len(saved.rows) == 40 and saved.repeats == 3
    assert saved.config["inspect"]["epoch_aggregation"] == "repeats"
    assert saved.repeat_seeds == [] and saved.config["repeat_seeds"] is None
    outcomes = saved.repeat_outcomes("match")
    for i, qid in enumerate(saved.ids):
        epochs = by_id[qid]
        assert sorted(epochs) == [1, 2, 3]
        assert outcomes[i].tolist() == [
            {"C": 1, "I": 0}[epochs[e]["scores"]["match"]["value"]] for e in (1, 2, 3)
        ]
        for r, e in enumerate((1, 2, 3)):
            row = saved.repeat(r).rows[i] if r else saved.rows[i]
            content = epochs[e]["output"]["choices"][0]["message"]["content"]
            assert row["answer"] == (content if isinstance(content, str) else row["answer"])
            assert row["latency_ms"]["total"] == pytest.approx(epochs[e]["total_time"] * 1000)
    path = write_saved_run(tmp_path / "c.json", saved).path
    other = saved_file(tmp_path, "sys-a")
    out = invoke("compare", other, path, "-m", "match", "--format", "json")
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)["metrics"][0]
    assert shown["mean_b"] == pytest.approx(float(outcomes.mean()))


def test_a_failed_or_missing_epoch_is_a_generation_error_never_dropped():
    log = raw("sys-c")
    samples = log["samples"]
    failed = next(s for s in samples if s["epoch"] == 2)
    failed["error"] = {"message": "model timed out"}
    cut = next(s for s in samples if s["epoch"] == 3 and s["id"] != failed["id"])
    samples.remove(cut)
    saved = saved_run_from_log(log, "sys-c.json", name="c").saved
    ids = saved.ids
    i, j = ids.index(str(failed["id"])), ids.index(str(cut["id"]))
    outcomes = saved.repeat_outcomes("match")
    assert np.isnan(outcomes[i, 1]) and np.isnan(outcomes[j, 2])
    assert np.isfinite(np.delete(outcomes.ravel(), [i * 3 + 1, j * 3 + 2])).all()
    assert saved.repeat(1).questions[i].generation_error == "epoch 2: 'model timed out'"
    assert saved.repeat(2).questions[j].generation_error == "epoch 3: not in the log"


def test_a_missing_middle_epoch_keeps_every_epoch_in_its_place():
    """Epoch 2 of one sample cut from the log: repeat 1 of that question is the missing
    epoch (a generation error), repeat 2 still epoch 3's own answer, not shifted down."""
    log = raw("sys-c")
    samples = log["samples"]
    cut = next(s for s in samples if s["epoch"] == 2)
    samples.remove(cut)
    third = next(s for s in samples if s["id"] == cut["id"] and s["epoch"] == 3)
    saved = saved_run_from_log(log, "sys-c.json", name="c").saved
    i = saved.ids.index(str(cut["id"]))
    assert saved.repeat(1).questions[i].generation_error == "epoch 2: not in the log"
    assert saved.repeat(2).questions[i].generation_error is None
    third_answer = third["output"]["choices"][0]["message"]["content"]
    assert saved.repeat(2).questions[i].answer == third_answer
    expected = {"C": 1, "I": 0}[third["scores"]["match"]["value"]]
    assert saved.repeat_outcomes("match")[i, 2] == expected


def test_cluster_by_a_metadata_key_feeds_compare_cluster_by_tag(tmp_path):
    a = saved_file(tmp_path, "sys-a", cluster_by="topic")
    d = saved_file(tmp_path, "sys-d", cluster_by="topic")
    topics = {s["id"]: s["metadata"]["topic"] for s in raw("sys-a")["samples"]}
    rows = json.loads(Path(a).read_text())["rows"]
    assert {r["id"]: r["tags"] for r in rows} == {i: [t] for i, t in topics.items()}
    out = invoke("compare", a, d, "-m", "match", "--cluster-by", "tag", "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["clustered"] is not None
    with pytest.raises(FormatError, match="no such metadata key"):
        saved_run_from_log(raw("sys-a"), "sys-a.json", name="x", cluster_by="nope")


BAD = [
    ("no samples", lambda log: log.update(samples=[]), "samples"),
    (
        "epoch twice",
        lambda log: log["samples"][1].update(id=log["samples"][0]["id"]),
        "samples[1].id",
    ),
    (
        "bad score",
        lambda log: log["samples"][3]["scores"]["match"].update(value="maybe"),
        "samples[3].scores.match.value",
    ),
    ("no id", lambda log: log["samples"][2].pop("id"), "samples[2].id"),
    ("epoch 0", lambda log: log["samples"][0].update(epoch=0), "samples[0].epoch"),
]


@pytest.mark.parametrize(("case", "break_it", "field"), BAD, ids=[b[0] for b in BAD])
def test_a_malformed_log_is_refused_naming_the_field(case, break_it, field):
    log = raw("sys-a")
    break_it(log)
    with pytest.raises(FormatError) as error:
        saved_run_from_log(log, "sys-a.json", name="x")
    assert f"sys-a.json: {field}:" in str(error.value)


def test_without_inspect_ai_the_message_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    out = invoke("import", "--from", "inspect", LOGS / "sys-a.eval", "--out", tmp_path)
    assert out.exit_code == 2
    assert out.output.strip() == (
        "ragaudit: error: --from inspect: reading inspect_ai logs needs inspect_ai: "
        "pip install 'ragaudit[inspect]' (or pip install inspect-ai)"
    )


def test_retrieval_options_are_refused_with_inspect(tmp_path):
    out = invoke("import", "--from", "inspect", LOGS / "sys-a.eval", "--corpus", tmp_path)
    assert out.exit_code == 2
    assert out.output.strip() == (
        "ragaudit: error: --corpus: not used with --from inspect (a log has no retrieval)"
    )


# --- with inspect_ai installed (the `inspect` extra): its own reader on both formats ---------


@pytest.mark.slow  # importing inspect_ai takes seconds
@pytest.mark.parametrize("name", ["sys-a", "sys-c"])
def test_inspects_reader_gives_the_same_rows_for_eval_and_json(tmp_path, name):
    pytest.importorskip("inspect_ai")
    from ragaudit.pipeline.inspect_import import import_inspect_log

    expected = saved_run_from_log(raw(name), f"{name}.json", name=name).saved.rows
    from_json = import_inspect_log(LOGS / f"{name}.json", out_dir=tmp_path / "json")
    assert from_json.saved.rows == expected
    # the .eval log is another run of the same task (same answers and scores, its own clock)
    from_eval = import_inspect_log(LOGS / f"{name}.eval", out_dir=tmp_path / "eval")
    assert [{**r, "latency_ms": None} for r in from_eval.saved.rows] == [
        {**r, "latency_ms": None} for r in expected
    ]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["eval", "json"])
def test_a_truncated_log_is_refused_in_one_line(tmp_path, suffix):
    pytest.importorskip("inspect_ai")
    data = (LOGS / f"sys-a.{suffix}").read_bytes()
    cut = tmp_path / f"cut.{suffix}"
    cut.write_bytes(data[: len(data) // 2])
    out = invoke("import", "--from", "inspect", cut, "--out", tmp_path / "out")
    assert out.exit_code == 2
    [line] = out.output.strip().splitlines()
    assert line.startswith(f"ragaudit: error: {cut}: inspect_ai cannot read this log")
