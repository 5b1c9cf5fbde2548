"""The LLM generator and the LLM labeller against the scripted server."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import InputError, JudgeError
from ragaudit.judges.prompts import GENERATOR, LABELLER
from ragaudit.labels.llm import LLMLabeller
from ragaudit.labels.protocol import Labeller
from ragaudit.llm import LLMClient
from ragaudit.llm.testing import FakeChatServer, FakeReply
from ragaudit.pipeline.generators import REFUSAL, Generator
from ragaudit.pipeline.llm_generator import LLMGenerator, make_generator

MakeClient = Callable[..., LLMClient]
CONTEXT = [
    Chunk("c-a", "travel", 0, "Flights are booked at least 14 days before departure."),
    Chunk("c-b", "travel", 1, "Hotels are capped at 150 EUR per night."),
]


def test_generator_protocol_and_prompt(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("Book 14 days ahead [1]. Hotels cost up to 150 EUR. [2]", usage=(90, 12)))
    generator = LLMGenerator(make_client())
    assert isinstance(generator, Generator)
    generation = generator.generate("When are flights booked?", CONTEXT)
    assert generation.answer == "Book 14 days ahead [1]. Hotels cost up to 150 EUR. [2]"
    assert (generation.abstained, generation.citations, generation.error) == (False, [1, 2], None)
    assert generation.usage == {
        "input_tokens": 90,
        "output_tokens": 12,
        "cached": False,
        "model": "gpt-4o-mini",
        # the shipped price table's gpt-4o-mini: USD 0.15 / 1M input, 0.60 / 1M output tokens
        "cost_usd": pytest.approx(90 * 0.15 / 1e6 + 12 * 0.60 / 1e6, abs=1e-12),
    }
    system, user = (m["content"] for m in server.requests[0].messages)
    assert system == GENERATOR.system and REFUSAL in system
    assert '<chunk n="1">\nFlights are booked' in user and '<chunk n="2">\nHotels' in user
    assert user.endswith("<question>\nWhen are flights booked?\n</question>")
    assert "response_format" not in server.requests[0].body


def test_generator_refusal(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply(f"  {REFUSAL}\n"))
    generation = LLMGenerator(make_client()).generate("Who is the CEO?", CONTEXT)
    assert (generation.answer, generation.abstained, generation.citations) == (REFUSAL, True, [])


def test_generator_failure_is_recorded_not_raised(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(*[FakeReply(status=503)] * 3)
    generation = LLMGenerator(make_client(max_retries=2)).generate("Q?", CONTEXT)
    assert generation.error is not None and "HTTP 503" in generation.error
    assert generation.answer == "" and generation.usage is None


def test_generate_many_keeps_order_and_caches(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server._responder = lambda request: FakeReply(
        "A: " + request.messages[1]["content"].rsplit("<question>\n", 1)[1].split("\n")[0]
    )
    questions = [(f"question {i}?", CONTEXT) for i in range(6)]
    answers = [g.answer for g in LLMGenerator(make_client()).generate_many(questions)]
    assert answers == [f"A: question {i}?" for i in range(6)]
    again = LLMGenerator(make_client()).generate_many(questions)
    assert [g.answer for g in again] == answers and all(
        g.usage and g.usage["cached"] for g in again
    )
    assert len(server.requests) == 6


def test_make_generator_needs_an_endpoint() -> None:
    with pytest.raises(InputError, match=r"LLM generator needs an endpoint: pass --llm-base-url"):
        make_generator(seed=0)


def test_make_generator_from_environment(
    server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "env-model")
    server.add(FakeReply("fine [1]."))
    generator = make_generator(seed=7)
    try:
        generator.generate("Q?", CONTEXT)
    finally:
        generator.close()
    assert server.requests[0].body["model"] == "env-model"
    assert server.requests[0].body["seed"] == 7


# -- labeller -----------------------------------------------------------------------------------

CANDIDATES = [Chunk(f"c{i}", "travel", i, f"chunk text {i}") for i in range(4)]


def test_labeller_grades_every_candidate(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply(json.dumps({"answer_chunks": [2], "supporting_chunks": [1, 2]})))
    labeller = LLMLabeller(make_client())
    assert isinstance(labeller, Labeller)
    grades = labeller.label("Q?", "Ref.", ["kw"], CANDIDATES)
    # chunk 2 is in both lists: answer wins; chunks 3 and 4 are explicit zeros
    assert grades == {"c0": 1, "c1": 2, "c2": 0, "c3": 0}
    system, user = (m["content"] for m in server.requests[0].messages)
    assert system == LABELLER.system
    assert '<chunk n="4">\nchunk text 3\n</chunk>' in user
    assert "<keywords>\nkw\n</keywords>" in user


def test_labeller_out_of_range_is_retried(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(
        FakeReply(json.dumps({"answer_chunks": [0, 5]})),
        FakeReply(json.dumps({"answer_chunks": [4]})),
    )
    grades = LLMLabeller(make_client()).label("Q?", "Ref.", [], CANDIDATES)
    assert grades == {"c0": 0, "c1": 0, "c2": 0, "c3": 2}
    feedback = server.requests[1].messages[-1]["content"]
    assert "chunk numbers out of range (there are 4 chunks, numbered 1 to 4): 0, 5" in feedback


def test_labeller_gives_up_with_judge_error(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(*[FakeReply(json.dumps({"answer_chunks": [9]}))] * 3)
    labeller = LLMLabeller(make_client(schema_retries=2))
    with pytest.raises(JudgeError, match=r"no valid labels for 'Q\?': invalid reply after 3"):
        labeller.label("Q?", "Ref.", [], CANDIDATES)
    assert "Q?" in labeller.errors
    assert len(server.requests) == 3


def test_label_many_returns_errors_in_place(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    def respond(request: object) -> FakeReply:
        user = request.messages[1]["content"]  # type: ignore[attr-defined]
        return FakeReply(json.dumps({"answer_chunks": [9 if "bad" in user else 1]}))

    server._responder = respond
    results = LLMLabeller(make_client(schema_retries=0)).label_many(
        [
            ("good?", "r", [], CANDIDATES),
            ("bad?", "r", [], CANDIDATES),
            ("no candidates", "r", [], []),
        ]
    )
    assert results[0] == {"c0": 2, "c1": 0, "c2": 0, "c3": 0}
    assert isinstance(results[1], JudgeError)
    assert results[2] == {}


def test_labeller_dry_run(make_client: MakeClient) -> None:
    estimate = LLMLabeller(make_client()).dry_run(
        [("Q?", "Ref.", [], CANDIDATES), ("Q2?", "Ref.", [], [])]
    )
    assert (estimate.calls, estimate.output_tokens) == (1, LABELLER.expected_output_tokens)
