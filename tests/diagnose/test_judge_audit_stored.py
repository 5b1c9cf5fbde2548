"""``judges audit`` (issue 36, second part): the position test with pairwise judges, the
repeat-noise row over R repeats, the cost of both shown first, and the audit stored in a run.

Fixtures are the 60-question synthetic run of ``test_judge_audit`` (templates written by
hand there; every third answer states a wrong price).  Expected counts follow from how the
planted judges are written; p-values are checked against scipy's binomial test (McNemar
exact is a sign test on the flips) and intervals against scipy's Clopper-Pearson
(``binomtest(...).proportion_ci(method="exact")``).  LLM paths use the scripted server on
127.0.0.1.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from scipy.stats import binomtest

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.diagnose.judge_audit import OfflineAuditJudge, audit_judge
from ragaudit.diagnose.judge_audit_position import position_pairs
from ragaudit.judges.pairwise import OfflinePairwiseJudge, PairItem
from ragaudit.llm.testing import FakeChatServer, FakeReply
from ragaudit.stats.verdicts import TOO_FEW

from .test_judge_audit import N, _synthetic


class FirstWins:
    """Planted position bias: always prefers the answer shown first."""

    name, model = "first-wins", None

    def prefer(self, items, repeat=0):
        return ["A" for _ in items]


class Constant:
    """A judge that calls every answer correct: the cheap base judge of the position tests
    (their row reads only the pairwise judge)."""

    name, model, metrics, context_metrics = "constant", None, ("correct",), ()

    def verdicts(self, items, repeat=0):
        return [{"correct": 1.0} for _ in items]


def _row(audit, test):
    return next(r for r in audit.rows if r.test == test)


def test_a_pairwise_judge_preferring_position_a_is_caught_at_n_60():
    run, chunks = _synthetic()
    row = _row(audit_judge(run, chunks, Constant(), pairwise=FirstWins()), "position")
    c = row.comparison
    # every answer differs from its reference: 60 pairs, each won by A in both orders
    assert (c.n, c.mcnemar.a_only, c.mcnemar.b_only) == (N, N, 0)
    assert c.pvalue == pytest.approx(binomtest(N, N).pvalue) and c.pvalue < 0.01
    assert c.verdict == "SIGNIFICANT" and c.statistic == -1.0
    assert c.confidence_interval.high < 0


def test_the_offline_pairwise_judge_never_flips():
    run, chunks = _synthetic()
    row = _row(audit_judge(run, chunks, Constant(), pairwise=OfflinePairwiseJudge()), "position")
    c = row.comparison
    # 20 wrong answers: the reference wins in both orders (0, 0); 40 right: a tie, left out
    assert (c.n, c.excluded, c.n_differing) == (20, 40, 0)
    assert c.mean_a == c.mean_b == 0.0
    assert c.verdict == TOO_FEW  # no flip at all: the rule's words for nothing to test


def test_offline_pairwise_verdicts_by_hand():
    judge = OfflinePairwiseJudge()
    right, wrong = "It costs 101 EUR per unit.", "It costs 108 EUR per unit."
    item = PairItem("q", "How much?", right, wrong, reference_answer="101 EUR per unit.")
    both = PairItem("q", "How much?", right, right, reference_answer="101 EUR per unit.")
    assert judge.prefer([item, item.swapped(), both]) == ["A", "B", "tie"]


def test_position_pairs_leave_out_abstentions_unanswerable_and_copies():
    run, chunks = _synthetic(n=6)
    doc = run.to_dict()
    doc["rows"][0]["answer"] = "I don't know."
    doc["rows"][1]["answerable"] = False
    doc["rows"][2]["answer"] = doc["rows"][2]["reference_answer"]
    doc["rows"][3]["reference_answer"] = ""
    from ragaudit.data.saved_run import SavedRun
    from ragaudit.diagnose.judge_audit import audit_items

    items = audit_items(SavedRun.from_dict(doc), chunks)
    assert [p.question_id for p in position_pairs(items)] == ["q04", "q05"]


# ------------------------------------------------------------------ LLM judges


def _scripted(request):
    """Correctness: correct when the answer states the reference's number; sufficiency: the
    first chunk holds the number.  Pairwise: the first-shown answer wins (a planted position
    bias).  Repeat 2 (seed 2) flips correctness on q00-q03 (planted repeat noise)."""
    text = request.messages[-1]["content"]
    if 'label="A"' in text:
        return FakeReply(json.dumps({"winner": "A", "reason": "first"}))
    reference = re.search(r"<reference>\s*(\d+)", text)
    number = reference.group(1) if reference else ""
    if "<answer>" in text:
        answer = text.split("<answer>")[1].split("</answer>")[0]
        good = number in answer
        if request.body.get("seed") == 2 and re.search(r"\bR[0-3] meter", text):
            good = not good
        body = {"verdict": "correct" if good else "wrong", "completeness": float(good),
                "numbers_match": good}  # fmt: skip
    else:
        first = text.split('<chunk n="1">')[1].split("</chunk>")[0]
        body = {"facts": [{"fact": number, "in_context": number in first}]}
    return FakeReply(json.dumps(body))


@pytest.fixture
def run_file(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("RAGAUDIT_LLM_BASE_URL", "OPENAI_BASE_URL", "RAGAUDIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    run, chunks = _synthetic(n=20)
    return write_saved_run(tmp_path / "run.json", run), chunks, tmp_path


def _audit_llm(run, chunks, tmp_path, server, repeats):
    from ragaudit.diagnose.judge_audit_llm import LLMAuditJudge, audit_cost
    from ragaudit.judges.llm import LLMJudges
    from ragaudit.judges.pairwise import LLMPairwiseJudge
    from ragaudit.llm import LLMClient, LLMConfig

    config = LLMConfig(base_url=server.base_url, model="scripted",
                       cache_path=str(tmp_path / "llm.sqlite"))  # fmt: skip
    with LLMClient(config) as client:
        judge = LLMAuditJudge(LLMJudges(client, ["correctness", "sufficiency"]))
        pairwise = LLMPairwiseJudge(client)
        cost = audit_cost(run, chunks, judge, seed=0, pairwise=pairwise, repeats=repeats)
        audit = audit_judge(run, chunks, judge, seed=0, pairwise=pairwise, repeats=repeats)
    return cost, audit


def test_llm_position_and_three_repeats_through_the_cached_client(run_file):
    run, chunks, tmp_path = run_file
    with FakeChatServer(responder=_scripted) as server:
        cost, audit = _audit_llm(run, chunks, tmp_path, server, repeats=3)
        sent = len(server.requests)
    # by hand: originals 20 x 2; verbosity 20 correctness; order 20 sufficiency; refusal 0
    # (both wordings judged without a call); repeats 1 and 2: 20 x 2 each; position 20 x 2
    assert cost.calls == sent == 40 + 20 + 20 + 80 + 40 and cost.cached_calls == 0
    position = _row(audit, "position").comparison
    assert (position.n, position.mcnemar.a_only, position.mcnemar.b_only) == (20, 20, 0)
    assert position.verdict == "SIGNIFICANT"
    noise = _row(audit, "repeat noise")
    assert noise.comparison.n_differing == 0  # repeat 1 agrees with repeat 0
    agreement = noise.agreement
    # repeat 2 flips q00-q03: 16 of 20 questions agree over the three repeats
    assert (agreement["repeats"], agreement["n"], agreement["value"]) == (3, 20, 16 / 20)
    ci = binomtest(16, 20).proportion_ci(method="exact")
    assert (agreement["ci_low"], agreement["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert audit.repeats == 3 and audit.pairwise_judge == "llm pairwise (scripted)"


# ------------------------------------------------------------------ the audit in a run


@pytest.fixture(scope="module")
def audited():
    """A 6-question run carrying its offline audit (the document judges audit --save stores)."""
    run, chunks = _synthetic(n=6)
    audit = audit_judge(run, chunks, OfflineAuditJudge(), pairwise=OfflinePairwiseJudge())
    return run.replace(judge_audit=audit.to_dict())


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_the_audit_round_trips_through_both_formats_and_convert(audited, tmp_path, suffix):
    first = write_saved_run(tmp_path / f"a{suffix}", audited)
    back = load_saved_run(first.path)
    assert back.judge_audit == audited.judge_audit and back.rows == audited.rows
    other = ".parquet" if suffix == ".json" else ".json"
    result = CliRunner().invoke(main, ["convert", first.path, str(tmp_path / f"b{other}")])
    assert result.exit_code == 0, result.output
    again = CliRunner().invoke(main, ["convert", str(tmp_path / f"b{other}"),
                                      str(tmp_path / f"c{suffix}")])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert load_saved_run(tmp_path / f"c{suffix}").judge_audit == audited.judge_audit
    if suffix == ".json":  # a run-level key of the JSON header, after the summary
        keys = list(json.loads(first_text(first.path)))
        assert keys.index("judge_audit") == keys.index("summary") + 1


def first_text(path):
    from pathlib import Path

    return Path(path).read_text(encoding="utf-8")


def test_a_run_without_an_audit_reads_as_before(tmp_path):
    run, _ = _synthetic(n=3)
    path = write_saved_run(tmp_path / "old.json", run).path
    assert "judge_audit" not in json.loads(first_text(path))  # files stay as they were
    assert load_saved_run(path).judge_audit is None
    doc = json.loads(first_text(path))
    doc["judge_audit"] = None  # null is "none" too
    (tmp_path / "null.json").write_text(json.dumps(doc), encoding="utf-8")
    assert load_saved_run(tmp_path / "null.json").judge_audit is None


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda a: a["rows"][0].pop("ci_low"), "judge_audit.rows[0].ci_low",
         "expected the key 'ci_low', found none"),
        (lambda a: a["rows"][0].update(n="60"), "judge_audit.rows[0].n",
         'expected an integer, found "60"'),
        (lambda a: a.pop("seed"), "judge_audit", "missing required key 'seed'"),
        (lambda a: a["rows"][0].update(p_value=1.5), "judge_audit.rows[0].p_value",
         "expected a value between 0 and 1, found 1.5"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_a_bad_stored_audit_gets_one_line_with_file_and_field(
    audited, tmp_path, change, field, message, suffix
):
    doc = audited.to_dict()
    change(doc["judge_audit"])
    path = tmp_path / f"bad{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(doc), encoding="utf-8")
    else:  # a header ragaudit would not write: the Parquet file made by hand with pyarrow
        import pyarrow.parquet as pq

        from ragaudit.data.saved_run.parquet import HEADER_KEY

        write_saved_run(tmp_path / "good.parquet", audited)
        table = pq.read_table(tmp_path / "good.parquet")
        header = {k: v for k, v in doc.items() if k != "rows"}
        pq.write_table(table.replace_schema_metadata({HEADER_KEY: json.dumps(header)}), path)
    result = CliRunner().invoke(main, ["report", str(path), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"{path}: {field}: {message}" in lines[0], result.output
    assert not (tmp_path / "r.html").exists()


def test_save_never_overwrites_the_input(audited, tmp_path):
    path = write_saved_run(tmp_path / "run.json", audited).path
    before = first_text(path)
    result = CliRunner().invoke(main, ["judges", "audit", path, "--corpus", str(tmp_path),
                                       "--save", str(tmp_path / "./run.json")])  # fmt: skip
    assert result.exit_code == 2 and "--save" in result.output
    assert "not an input" in result.output and first_text(path) == before
    dry = CliRunner().invoke(main, ["judges", "audit", path, "--corpus", str(tmp_path),
                                    "--judge", "llm", "--dry-run", "--save",
                                    str(tmp_path / "x.json")])  # fmt: skip
    assert dry.exit_code == 2 and "no audit to --save" in dry.output


def test_an_invalid_pairwise_reply_is_repaired_once_then_counted_as_no_verdict(tmp_path):
    from ragaudit.judges.pairwise import LLMPairwiseJudge
    from ragaudit.llm import LLMClient, LLMConfig

    pair = PairItem("q1", "How much?", "101 EUR.", "108 EUR.", ("It costs 101 EUR.",))
    with FakeChatServer(responder=lambda r: FakeReply(json.dumps({"winner": "C"}))) as server:
        config = LLMConfig(base_url=server.base_url, model="m", use_cache=False)
        with LLMClient(config) as client:
            assert LLMPairwiseJudge(client).prefer([pair]) == [None]
        assert len(server.requests) >= 2  # the first reply and at least one repair turn
        text = server.requests[0].messages[-1]["content"]
    assert '<answer label="A">\n101 EUR.\n</answer>' in text  # the answers sent as data
    assert '<answer label="B">\n108 EUR.\n</answer>' in text
