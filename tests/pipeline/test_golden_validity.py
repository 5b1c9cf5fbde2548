"""The validity checks of ``ragaudit golden check`` (issue 36): the planted fixture, the bundled
golden set, the hand-made paraphrase pairs, the design effect of coverage skew and the
closed-book leak against a scripted server on 127.0.0.1.

Fixtures: ``tests/fixtures/golden_audit`` (README there says who wrote what, and when).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

import ragaudit
from ragaudit._text import REFUSAL
from ragaudit.cli import main
from ragaudit.data.golden import GoldenQuestion, load_golden
from ragaudit.llm.testing import FakeChatServer, FakeReply
from ragaudit.pipeline.golden_check import check_corpus_golden
from ragaudit.pipeline.golden_validity import (
    PARAPHRASE,
    answer_in_question,
    coverage,
    paraphrase_similarity,
)
from ragaudit.stats.clustered import clustered_mean

HERE = Path(__file__).parents[1] / "fixtures" / "golden_audit"
BENCHMARK = Path(ragaudit.__file__).parent / "benchmark"


def _flagged(check):
    found = defaultdict(set)
    for f in check.findings:
        found[f.check].add(f.qid)
    return found


@pytest.fixture(scope="module")
def planted():
    return check_corpus_golden(HERE / "golden.yaml", HERE / "corpus")


def test_every_planted_item_is_flagged_and_nothing_else(planted):
    found = _flagged(planted)
    assert found["answer in question"] == {f"q{i:02d}" for i in range(1, 11)}
    assert found["paraphrase duplicate"] == {f"q{i}" for i in range(21, 26)}
    assert found["conflict"] == {"q26", "q27", "q28"}
    # the ten leaking questions have nothing left to look for in the corpus: notes, not problems
    assert {f.qid for f in planted.problems} == {f"q{i:02d}" for i in range(1, 11)}
    # each paraphrase names its twin
    twins = {
        f.qid: f.detail.split()[3] for f in planted.findings if f.check == "paraphrase duplicate"
    }
    assert twins == {f"q{i}": f"q{i - 10}" for i in range(21, 26)}


def test_the_planted_document_holds_40_percent(planted):
    cov = planted.coverage
    assert (cov.n, cov.largest, cov.largest_share) == (30, "handbook", 0.4)
    # by hand: sizes 12, 5, 4, 3, 3, 3 -> sum m^2 / n = (144+25+16+9+9+9) / 30
    assert cov.weighted_size == pytest.approx(212 / 30)
    icc, deff, neff = cov.design_effects[1]
    assert (icc, deff, neff) == pytest.approx((0.2, 1 + (212 / 30 - 1) * 0.2, 30 / deff))
    # Clopper-Pearson 12/30 from scipy's beta quantiles
    from scipy.stats import beta

    assert (cov.low, cov.high) == pytest.approx((beta.ppf(0.025, 12, 19), beta.ppf(0.975, 13, 18)))


def test_every_check_reports_its_n_interval_and_method(planted):
    rows = {s.check: s for s in planted.summaries}
    assert (rows["answer in question"].n, rows["answer in question"].flagged) == (30, 10)
    assert (rows["paraphrase duplicate"].n, rows["paraphrase duplicate"].flagged) == (435, 5)
    assert rows["conflict"].flagged == 3
    for s in rows.values():
        assert s.method and s.low is not None and s.low <= s.flagged / s.n <= s.high


def test_the_bundled_golden_set_flags_only_what_the_docs_explain():
    check = check_corpus_golden(BENCHMARK / "golden.yaml", BENCHMARK / "corpus")
    found = _flagged(check)
    assert check.ok
    assert found["answer in question"] == set()
    # docs/guide/harness.md explains each: q42 and q45 ask q35's and q28's question again as
    # the second half of a two-part question; q14 and q16 are the benchmark's real FAQ/policy
    # conflicts; q18, q34 and q36 are false positives (another fact with the same unit)
    assert found["paraphrase duplicate"] == {"q42", "q45"}
    assert found["conflict"] == {"q14", "q16", "q18", "q34", "q36"}


def test_the_paraphrase_threshold_on_the_hand_made_pairs():
    pairs = yaml.safe_load((HERE / "pairs.yaml").read_text(encoding="utf-8"))
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    index = {t: i for i, t in enumerate(texts)}
    sim = paraphrase_similarity(texts)
    hits = {True: 0, False: 0}
    for same, a, b in pairs:
        hits[same] += bool(sim[index[a], index[b]] >= PARAPHRASE)
    # measured (module docstring): 9 of 12 paraphrases found, 3 of 12 distinct pairs flagged
    assert (hits[True], hits[False]) == (9, 3)


def test_similarity_is_symmetric_and_bounded():
    sim = paraphrase_similarity(["How long are backups kept?", "Where are backups kept?",
                                 "Who signs contracts?", ""])  # fmt: skip
    assert np.allclose(sim, sim.T) and sim.min() >= 0 and sim.max() <= 1
    assert sim[2, 3] == 0 and sim[3, 3] == 1


# Written after the answer-in-question rule was loosened (module docstring): new cases.
AFTER = [
    (
        "Refund requests are accepted for 14 days; for how many days are refunds accepted?",
        "14 days.",
        True,
    ),
    ("The VPN is called Wren. What is the VPN called?", "Wren VPN.", True),
    ("With badges costing 12 EUR, what does a replacement badge cost?", "12 EUR.", True),
    ("How many days are refund requests accepted?", "14 days.", False),
    ("Is the 14-day refund window extended for annual plans?", "Yes, to 30 days.", False),
    ("Which VPN do staff use?", "Wren VPN, with two-factor login.", False),
]


@pytest.mark.parametrize(("question", "answer", "leaks"), AFTER)
def test_answer_in_question_cases_written_after_the_rule(question, answer, leaks):
    found, _ = answer_in_question([GoldenQuestion("q", question, answer, ())])
    assert bool(found) is leaks


def test_the_design_effect_is_the_variance_ratio_of_the_mean():
    """Kish's deff is Var(mean) over its value for independent questions; the oracle is a
    simulation of the one-way random-effects model with the planted cluster sizes (seed 36)."""
    sizes = [12, 5, 4, 3, 3, 3]
    qs = [GoldenQuestion(f"q{i}", "Q?", "A.", (f"d{g}",))
          for g, m in enumerate(sizes) for i in range(m)]  # fmt: skip
    cov = coverage(qs)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    rng = np.random.default_rng(36)
    for icc, deff, _ in cov.design_effects:
        y = (rng.normal(0, np.sqrt(icc), (20_000, len(sizes)))[:, labels]
             + rng.normal(0, np.sqrt(1 - icc), (20_000, labels.size)))  # fmt: skip
        assert y.mean(axis=1).var() * labels.size == pytest.approx(deff, rel=0.05)
    # what `compare --cluster-by` prints (CR1) tracks it with many clusters: 40 of 5, icc 0.2
    labels = np.repeat(np.arange(40), 5)
    y = rng.normal(0, np.sqrt(0.2), (300, 40))[:, labels] + rng.normal(0, np.sqrt(0.8), (300, 200))
    cr1 = [clustered_mean(row, labels) for row in y]
    ratio = np.mean([r.standard_error**2 for r in cr1]) / np.mean(
        [r.naive_standard_error**2 for r in cr1]
    )
    assert ratio == pytest.approx(1 + 4 * 0.2, rel=0.1)


# ------------------------------------------------------------------ closed-book leak


def _known(golden, ids):
    answers = {q.question: q.answer for q in golden if q.id in ids}

    def respond(request):
        text = request.messages[-1]["content"]
        for question, answer in answers.items():
            if question in text:
                return FakeReply(answer)
        return FakeReply(REFUSAL)

    return respond


def test_closed_book_flags_the_questions_answered_without_context(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    golden = load_golden(HERE / "golden.yaml")
    known = {"q11", "q14", "q19"}
    with FakeChatServer(responder=_known(golden, known)) as server:
        result = CliRunner().invoke(main, [
            "golden", "check", "--golden", str(HERE / "golden.yaml"), "--corpus",
            str(HERE / "corpus"), "--closed-book", "--llm-base-url", server.base_url,
            "--llm-model", "scripted", "--no-cache", "--format", "json",
        ], catch_exceptions=False)  # fmt: skip
        sent = server.requests
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert sorted(data["closed_book"]["leaked"]) == sorted(known)
    leaks = {f["id"] for f in data["findings"] if f["check"] == "closed-book leak"}
    assert leaks == known
    # every answerable question was asked once, each with no passage
    assert len(sent) == 30
    assert all("(no passages)" in r.messages[-1]["content"] for r in sent)
    row = next(c for c in data["checks"] if c["check"] == "closed-book leak")
    assert (row["n"], row["flagged"]) == (30, 3) and row["ci_low"] < 0.1 < row["ci_high"]


def test_closed_book_counts_failed_requests_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    golden = load_golden(HERE / "golden.yaml")
    answer = _known(golden, {"q12"})

    def respond(request):
        if (
            "q13" in request.messages[-1]["content"]
            or "Lindgate" in request.messages[-1]["content"]
        ):
            return FakeReply(status=400, content="bad request")
        return answer(request)

    with FakeChatServer(responder=respond) as server:
        result = CliRunner().invoke(main, [
            "golden", "check", "--golden", str(HERE / "golden.yaml"), "--corpus",
            str(HERE / "corpus"), "--closed-book", "--llm-base-url", server.base_url,
            "--llm-model", "scripted", "--no-cache", "--llm-max-retries", "0",
        ], catch_exceptions=False)  # fmt: skip
    # q13 and q23 both ask about the Lindgate office: two failed requests, never counted
    assert "failed requests: 2" in result.stdout
    assert "1/28 decided answers correct without retrieval" in result.stdout
