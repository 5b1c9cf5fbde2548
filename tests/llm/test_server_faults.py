"""Server faults are never answers: every malformed HTTP-200 reply is retried, never cached,
and ends as a counted generation error / judge_error / unlabelled question, never a score.

The catalogue of malformed replies is ``ragaudit.llm.testing.MALFORMED`` (empty choices, null
message, an HTML page, a body that is not JSON, ``choices: "nope"``, ``prompt_tokens:
"lots"``, a body cut short, ...).  Each one is sent to the client directly and to ``ragaudit
run``, ``judge`` and ``labels build``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ragaudit.llm import LLMClient
from ragaudit.llm.replies import LLMRequestError
from ragaudit.llm.testing import MALFORMED, FakeChatServer, FakeReply

from .conftest import SleepRecorder
from .test_run_integration import (
    ANSWERABLE,
    CORPUS,
    GOLDEN,
    N_CALLS,
    FaultyModel,
    by_id,
    env,  # noqa: F401 - fixture
    invoke,
    load,
    model,  # noqa: F401 - fixture
    run_args,
)

MSG = [{"role": "user", "content": "What is 2 + 2?"}]
MakeClient = Callable[..., LLMClient]
KINDS = sorted(MALFORMED)


def cache_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM completions").fetchone()
    return int(count)


@pytest.mark.parametrize("kind", KINDS)
def test_a_malformed_reply_is_retried_then_fails_that_request_only(
    kind: str, server: FakeChatServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    server.add(*[MALFORMED[kind]] * 3)
    client = make_client(max_retries=2)
    with pytest.raises(LLMRequestError, match=r"failed after 3 attempts: (malformed|the server)"):
        client.chat(MSG, prompt_version="v1")
    assert len(server.requests) == 3 and len(sleeps.waits) == 2  # retried like a 5xx
    assert client.cache is not None and len(client.cache) == 0  # never cached
    usage = client.usage_summary()
    assert (usage["failed_calls"], usage["retries"], usage["input_tokens"]) == (1, 2, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_malformed_reply_then_a_good_one_caches_only_the_good_one(
    kind: str, server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(MALFORMED[kind], FakeReply("four", usage=(12, 3)))
    client = make_client(max_retries=2)
    assert client.chat(MSG, prompt_version="v1").text == "four"
    assert make_client().chat(MSG, prompt_version="v1").cached  # the good reply, from cache
    assert len(server.requests) == 2


def test_a_truncated_first_reply_is_not_an_unreachable_endpoint(
    server: FakeChatServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    # Before the first good reply a *refused* connection fails fast (one retry); a server
    # that answers with a body cut short is reachable, so it gets the whole retry budget.
    server.add(*[MALFORMED["truncated"]] * 5)
    client = make_client(max_retries=4)
    with pytest.raises(LLMRequestError, match="failed after 5 attempts: the server sent a broken"):
        client.chat(MSG, prompt_version="v1")
    assert len(server.requests) == 5


# -- the commands ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_run_judge_and_labels_build_count_each_malformed_reply_as_an_error(
    kind: str,
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    bad = MALFORMED[kind]
    model.faults[("generator", "q3")] = [bad]
    model.faults[("sufficiency", "q1")] = [bad]
    out = tmp_path / "out"
    result = invoke(run_args(out, "--llm-max-retries", "0"))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "cannot reach" not in result.output
    data = load(out / "llm.json")
    rows = by_id(data)
    # generation: a counted error that nulls the answer metrics, never an (empty) answer
    q3 = rows["q3"]
    assert q3["error"] and "failed after 1 attempts" in q3["error"]
    assert q3.get("answer") is None and q3.get("abstained") is None  # not an (empty) answer
    assert q3["metrics"]["correct"] is None and q3["metrics"]["answered"] is None
    assert data["summary"]["n_errors"] == 1
    # judging: a counted judge_error that nulls only that judge's metric
    q1 = rows["q1"]
    assert list(q1["judges"]["judge_errors"]) == ["sufficiency"]
    assert q1["metrics"]["sufficiency"] is None and q1["metrics"]["correct"] is not None
    assert data["summary"]["judge_errors"] == {"sufficiency": 1}
    # nothing of the faults was cached: every successful call is, and only those
    n_ok = N_CALLS - 1 - 5 - 1  # q3's generation and its 5 judge calls, q1's sufficiency
    assert cache_rows(env / "llm.sqlite") == n_ok

    # `judge` on the saved run: a malformed relevance reply for q1 is a judge_error
    model.faults[("relevance", "q1")] = [bad]
    judged = tmp_path / "judged.json"
    result = invoke(["judge", str(out / "llm.json"), "--corpus", str(CORPUS), "--out",
                     str(judged), "--judges", "relevance", "--llm-max-retries", "0",
                     "--no-cache"])  # fmt: skip
    assert result.exit_code == 0, result.output
    judged_rows = by_id(load(judged))
    assert list(judged_rows["q1"]["judges"]["judge_errors"]) == ["sufficiency", "relevance"]
    assert judged_rows["q1"]["metrics"]["answer_relevance"] is None
    assert judged_rows["q2"]["metrics"]["answer_relevance"] is not None

    # `labels build --labeller llm`: the question gets no labels, and is reported
    model.faults[("labeller", "q4")] = [bad]
    labels = tmp_path / "labels.yaml"
    result = invoke(["labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN),
                     "--chunk-size", "300", "--chunk-overlap", "0", "--labeller", "llm",
                     "--out", str(labels), "--llm-max-retries", "0"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 question(s) got no valid labels" in result.output and "q4 (" in result.output
    from ragaudit.labels.format import load_chunk_labels

    assert sorted(load_chunk_labels(labels).complete_questions()) == [
        q for q in ANSWERABLE if q != "q4"
    ]


def test_a_rerun_retries_exactly_the_faults(
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    model.faults[("generator", "q3")] = [MALFORMED["empty_choices"]]
    model.faults[("sufficiency", "q1")] = [MALFORMED["html"]]
    assert invoke(run_args(tmp_path / "out", "--llm-max-retries", "0")).exit_code == 0
    sent = len(server.requests)
    again = invoke(run_args(tmp_path / "out", "--llm-max-retries", "0"))
    assert again.exit_code == 0, again.output
    # q3: its generation and its 5 judge calls; q1: its sufficiency judge
    assert len(server.requests) - sent == 1 + 5 + 1
    rows = by_id(load(tmp_path / "out" / "llm.json"))
    assert rows["q3"]["error"] is None and rows["q1"]["metrics"]["sufficiency"] is not None


def test_the_malformed_catalogue_covers_the_reported_faults() -> None:
    reported = {"empty_choices", "null_message", "html", "not_json", "choices_not_list",
                "usage_not_int", "truncated"}  # fmt: skip
    assert reported <= set(MALFORMED)
    assert json.loads(json.dumps(MALFORMED["usage_not_int"].payload))["usage"] == {
        "prompt_tokens": "lots", "completion_tokens": 5,
    }  # fmt: skip
