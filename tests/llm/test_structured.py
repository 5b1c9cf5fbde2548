"""Structured output against scripted servers on 127.0.0.1: the response_format each judge
sends, the fallback when a server refuses it, repair requests after an invalid reply, and
replies cut by the token cap."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from ragaudit.judges.llm import JudgeItem, LLMJudges
from ragaudit.judges.prompts import RELEVANCE, SUFFICIENCY
from ragaudit.judges.schemas import json_schema, parse_relevance
from ragaudit.llm import LLMClient
from ragaudit.llm.structured import REPAIR_MARKER
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

MakeClient = Callable[..., LLMClient]
MSG = [
    {"role": "system", "content": "Rate the answer 1-5."},
    {"role": "user", "content": "<question>Why?</question>"},
]
RELEVANCE_SCHEMA = json_schema("Relevance")
GOOD = '{"score": 4, "reason": "on topic"}'


def _format(request: RecordedRequest) -> str:
    """The response_format type a request asked for ("text" when none)."""
    fmt = request.body.get("response_format")
    return "text" if fmt is None else str(fmt["type"])


def _refusing(*refused: str) -> Callable[[RecordedRequest], FakeReply]:
    """A server that answers HTTP 400 to the given response_format types, like llama.cpp
    builds and gateways without structured output do."""

    def respond(request: RecordedRequest) -> FakeReply:
        kind = _format(request)
        if kind in refused:
            return FakeReply(f"response_format type {kind} is not supported", status=400)
        return FakeReply(GOOD)

    return respond


def _items(n: int) -> list[JudgeItem]:
    return [JudgeItem(f"q{i}", f"Question {i}?", f"Answer {i}.", ["ctx"]) for i in range(n)]


def test_a_server_that_accepts_json_schema_gets_it_strict_with_a_bounded_reply(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.respond_with(_refusing())
    client = make_client()
    rows = LLMJudges(client, ["relevance"]).judge(_items(3))
    assert [r["answer_relevance"] for r in rows] == [4, 4, 4]
    assert len(server.requests) == 3
    for request in server.requests:
        assert request.body["response_format"] == {
            "type": "json_schema",
            "json_schema": {
                "name": "relevance",
                "strict": True,
                "schema": RELEVANCE_SCHEMA["schema"],
            },
        }
        assert request.body["max_tokens"] == RELEVANCE.max_output_tokens
    structured = client.usage_summary()["structured"]
    assert structured["formats"] == {"json_schema": 3}
    assert structured["format_fallbacks"] == []
    # The saved run's cost record says which format answered (stable across reruns).
    assert client.run_cost()["structured"]["formats"] == {"json_schema": 3}


def test_a_refused_json_schema_falls_back_to_json_object_once_per_endpoint(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.respond_with(_refusing("json_schema"))
    client = make_client(max_concurrency=1)
    rows = LLMJudges(client, ["relevance"]).judge(_items(4))
    assert [r["answer_relevance"] for r in rows] == [4, 4, 4, 4]
    kinds = [_format(r) for r in server.requests]
    # One refusal, then the endpoint is remembered as json_object for the rest of the run.
    assert kinds == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
    structured = client.usage_summary()["structured"]
    assert structured["formats"] == {"json_object": 4}
    assert len(structured["format_fallbacks"]) == 1
    assert structured["format_fallbacks"][0].startswith("json_schema -> json_object: HTTP 400")
    assert "judge_error" not in rows[0]


def test_a_server_that_refuses_both_formats_gets_plain_text(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.respond_with(_refusing("json_schema", "json_object"))
    client = make_client(max_concurrency=1)
    rows = LLMJudges(client, ["relevance"]).judge(_items(2))
    assert [r["answer_relevance"] for r in rows] == [4, 4]
    assert [_format(r) for r in server.requests] == ["json_schema", "json_object", "text", "text"]
    assert client.usage_summary()["structured"]["formats"] == {"text": 2}


def test_a_bad_request_that_is_not_about_the_format_is_not_a_fallback(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply("this model's maximum context length is 4096 tokens", status=400))
    client = make_client()
    outcome = client.chat_json(
        MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA, max_tokens=50
    )
    assert outcome.value is None and outcome.error is not None
    assert "maximum context length" in outcome.error
    assert len(server.requests) == 1
    assert client.usage_summary()["structured"]["format_fallbacks"] == []


def test_no_json_mode_sends_no_response_format(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply(GOOD))
    outcome = make_client(json_mode=False).chat_json(
        MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA
    )
    assert outcome.value is not None and outcome.value.score == 4
    assert "response_format" not in server.requests[0].body


def test_a_retry_is_a_repair_request_never_the_same_bytes(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    invalid = '{"score": 9, "reason": "' + "very " * 200 + 'relevant"}'
    server.add(FakeReply(invalid), FakeReply(invalid), FakeReply(GOOD))
    client = make_client(schema_retries=2)
    outcome = client.chat_json(
        MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA, max_tokens=50
    )
    assert outcome.value is not None and (outcome.value.score, outcome.attempts) == (4, 3)
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.requests]
    assert len(set(bodies)) == 3  # the second and third differ although the replies were equal
    first, second, third = (r.messages for r in server.requests)
    assert first == MSG
    # The system message is kept; the repair section follows the original question.
    assert second[0] == MSG[0] and len(second) == 2
    repair = second[1]["content"]
    assert repair.startswith(MSG[1]["content"] + "\n\n" + REPAIR_MARKER)
    assert "attempt 1 of 3" in repair and "attempt 2 of 3" in third[1]["content"]
    assert "score: Input should be less than or equal to 5" in repair  # the parse error
    assert invalid[:300] in repair and invalid not in repair  # a truncated quote
    assert f"{len(invalid) - 300} more characters" in repair
    assert json.dumps(RELEVANCE_SCHEMA["schema"], separators=(",", ":"), sort_keys=True) in repair
    structured = client.usage_summary()["structured"]
    assert (structured["invalid_replies"], structured["repair_requests"]) == (2, 2)
    assert structured["repaired"] == 1


def test_a_repair_does_not_poison_the_original_cache_entry(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply('{"score": "high"}'), FakeReply(GOOD))
    client = make_client()
    outcome = client.chat_json(MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA)
    assert outcome.value is not None and outcome.value.score == 4
    original_key = client.key_for(MSG, "v", json_mode=True, schema=RELEVANCE_SCHEMA)
    repair_key = client.key_for(
        server.requests[1].messages, "v", json_mode=True, schema=RELEVANCE_SCHEMA
    )
    assert client.cache is not None and original_key != repair_key
    original, repaired = client.cache.get(original_key), client.cache.get(repair_key)
    assert original is not None and original.text == '{"score": "high"}'
    assert repaired is not None and repaired.text == GOOD
    # A rerun replays the invalid reply and its repair from the cache, sending nothing.
    rerun = make_client()
    again = rerun.chat_json(MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA)
    assert again == outcome
    assert len(server.requests) == 2
    assert rerun.usage_summary()["cache_hits"] == 2


@pytest.mark.parametrize(
    "cut",
    [
        '{"facts": [{"fact": "Refunds take 30 days", "in_context": true}, {"fact": "Refu',
        # Even a reply that happens to parse is cut: the list it holds may be incomplete.
        '{"facts": [{"fact": "Refunds take 30 days", "in_context": true}]}',
    ],
)
def test_a_reply_cut_at_the_token_cap_is_repaired_and_counted(
    server: FakeChatServer, make_client: MakeClient, cut: str
) -> None:
    good = '{"facts": [{"fact": "30 days", "in_context": true}]}'
    server.add(FakeReply(cut, finish_reason="length", usage=(40, 512)), FakeReply(good))
    client = make_client()
    item = JudgeItem("q1", "How long?", "30 days.", ["Refunds take 30 days."], "30 days.")
    (row,) = LLMJudges(client, ["sufficiency"]).judge([item])
    assert row["sufficiency"] is True and "judge_error" not in row
    first, second = server.requests
    assert first.body["max_tokens"] == SUFFICIENCY.max_output_tokens
    assert "cut at the token limit after 512 tokens" in second.messages[1]["content"]
    structured = client.usage_summary()["structured"]
    assert (structured["cut_at_length"], structured["invalid_replies"]) == (1, 1)
    assert structured["repaired"] == 1


def test_an_explicit_max_tokens_overrides_the_judge_cap(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply(GOOD))
    make_client(max_tokens=1000).chat_json(
        MSG, parse_relevance, prompt_version="v", schema=RELEVANCE_SCHEMA, max_tokens=50
    )
    assert server.requests[0].body["max_tokens"] == 1000


def test_the_dry_run_sees_a_cached_structured_call(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.respond_with(_refusing())
    item = JudgeItem("q1", "How long?", "30 days.", ["Refunds take 30 days."], "30 days.")
    judges = LLMJudges(make_client(), ["relevance"])
    assert judges.dry_run([item]).cached_calls == 0
    judges.judge([item])
    assert LLMJudges(make_client(), ["relevance"]).dry_run([item]).cached_calls == 1


def test_every_judge_schema_is_valid_and_accepts_what_its_parser_accepts() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    examples: dict[str, dict[str, Any]] = {
        "Sufficiency": {"facts": [{"fact": "30 days", "in_context": True}]},
        "Correctness": {
            "verdict": "correct",
            "completeness": 1.0,
            "numbers_match": True,
            "reason": "same",
        },
        "Faithfulness": {"claims": []},
        "Citations": {"verdicts": [{"sentence": 1, "chunk": 2, "supported": False}]},
        "Relevance": {"score": 5, "reason": "exact"},
        "Labels": {"answer_chunks": [1], "supporting_chunks": []},
    }
    for name, example in examples.items():
        schema = json_schema(name)["schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(example, schema)
        # strict mode: every object closes its properties and requires all of them
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"score": 6, "reason": ""}, json_schema("Relevance")["schema"])
    too_many = {"facts": [{"fact": "x", "in_context": True}] * 13}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(too_many, json_schema("Sufficiency")["schema"])
