"""The client against a scripted local server: cache, retries, timeouts, accounting."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragaudit.llm import LLMClient, LLMConfig, PlannedCall, PriceTable
from ragaudit.llm.replies import InvalidReply, LLMRequestError, LLMUnavailableError
from ragaudit.llm.testing import FakeChatServer, FakeReply, RecordedRequest

from .conftest import SENTINEL_KEY, SleepRecorder

MSG = [{"role": "user", "content": "What is 2 + 2?"}]
MakeClient = Callable[..., LLMClient]


def test_request_shape_and_usage(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("four", usage=(12, 3)))
    result = make_client().chat(MSG, prompt_version="t-v1", json_mode=True)
    assert (result.text, result.input_tokens, result.output_tokens, result.cached) == (
        "four", 12, 3, False,
    )  # fmt: skip
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["messages"] == MSG
    assert request.body["temperature"] == 0.0
    assert request.body["seed"] == 0
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.headers["authorization"] == f"Bearer {SENTINEL_KEY}"


def test_seed_none_and_max_tokens(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("x"))
    make_client(seed=None, max_tokens=64).chat(MSG, prompt_version="t-v1")
    body = server.requests[0].body
    assert "seed" not in body and "response_format" not in body
    assert body["max_tokens"] == 64


def test_second_run_is_free_and_identical(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("four", usage=(12, 3)))
    first = make_client().chat(MSG, prompt_version="t-v1")
    rerun_client = make_client()
    second = rerun_client.chat(MSG, prompt_version="t-v1")
    assert len(server.requests) == 1
    assert (second.text, second.input_tokens, second.output_tokens) == (
        first.text, first.input_tokens, first.output_tokens,
    )  # fmt: skip
    assert second.cached and not first.cached
    summary = rerun_client.usage_summary()
    assert (summary["calls"], summary["cache_hits"], summary["http_requests"]) == (1, 1, 0)
    assert (summary["input_tokens"], summary["cost_usd"]) == (0, 0.0)
    assert summary["cached_input_tokens"] == 12
    # what the result cost to produce does not depend on the cache
    cost = rerun_client.run_cost()
    assert (cost["calls"], cost["input_tokens"], cost["output_tokens"]) == (1, 12, 3)
    assert cost["cost_usd"] == pytest.approx(12 * 0.15e-6 + 3 * 0.60e-6)


def test_no_cache_sends_again(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("a"), FakeReply("b"))
    make_client().chat(MSG, prompt_version="t-v1")
    assert make_client(use_cache=False).chat(MSG, prompt_version="t-v1").text == "b"
    assert len(server.requests) == 2


def test_repeat_index_is_a_separate_call(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("r0"), FakeReply("r1"))
    client = make_client()
    assert client.chat(MSG, prompt_version="v", repeat=0).text == "r0"
    assert client.chat(MSG, prompt_version="v", repeat=1).text == "r1"
    assert client.chat(MSG, prompt_version="v", repeat=1).text == "r1"  # cached
    assert [r.body["seed"] for r in server.requests] == [0, 1]


def test_prompt_version_is_part_of_the_key(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("a"), FakeReply("b"))
    client = make_client()
    client.chat(MSG, prompt_version="judge-v1")
    assert client.chat(MSG, prompt_version="judge-v2").text == "b"


@pytest.mark.parametrize(
    ("headers", "expected_wait"),
    [({"Retry-After": "0.25"}, 0.25), ({"retry-after-ms": "40"}, 0.04)],
)
def test_429_honours_retry_after(
    server: FakeChatServer,
    make_client: MakeClient,
    sleeps: SleepRecorder,
    headers: dict[str, str],
    expected_wait: float,
) -> None:
    server.add(FakeReply("slow down", status=429, headers=headers), FakeReply("ok"))
    client = make_client()
    assert client.chat(MSG, prompt_version="v").text == "ok"
    assert sleeps.waits == [pytest.approx(expected_wait)]
    assert len(server.requests) == 2
    assert client.usage_summary()["retries"] == 1


def test_5xx_backoff_follows_the_seeded_formula(
    server: FakeChatServer, make_client: MakeClient, sleeps: SleepRecorder
) -> None:
    server.add(FakeReply(status=500), FakeReply(status=503), FakeReply("ok"))
    client = make_client(max_retries=3, backoff_base=0.1, backoff_max=0.15)
    assert client.chat(MSG, prompt_version="v").text == "ok"
    # wait_a = min(backoff_max, backoff_base * 2**a) * u,  u in [0.5, 1]
    caps = [min(0.15, 0.1 * 2**a) for a in range(2)]
    assert len(sleeps.waits) == 2
    for wait, cap in zip(sleeps.waits, caps, strict=True):
        assert 0.5 * cap <= wait <= cap


def test_jitter_is_reproducible_and_seed_dependent(server: FakeChatServer) -> None:
    def waits(seed: int) -> list[float]:
        recorder = SleepRecorder()
        server.add(*[FakeReply(status=500)] * 3, FakeReply("ok"))
        cfg = LLMConfig(
            base_url=server.base_url,
            model="m",
            use_cache=False,
            seed=seed,
            max_retries=3,
            backoff_base=1.0,
            backoff_max=10.0,
        )
        with LLMClient(cfg, sleep=recorder) as client:
            client.chat(MSG, prompt_version="v")
        return recorder.waits

    assert waits(0) == waits(0)
    assert waits(0) != waits(1)


def test_timeout_is_retried(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("late", delay=1.0), FakeReply("on time"))
    client = make_client(timeout=0.2)
    started = time.perf_counter()
    assert client.chat(MSG, prompt_version="v").text == "on time"
    assert time.perf_counter() - started < 0.9  # did not wait for the slow reply
    assert len(server.requests) == 2


def test_retries_exhausted_is_an_item_error(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(*[FakeReply(status=500)] * 3)
    client = make_client(max_retries=2)
    with pytest.raises(LLMRequestError, match=r"failed after 3 attempts: HTTP 500"):
        client.chat(MSG, prompt_version="v")
    assert len(server.requests) == 3
    assert client.usage_summary()["failed_calls"] == 1


def test_sdk_retries_are_disabled(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply(status=500), FakeReply("would be a hidden retry"))
    with pytest.raises(LLMRequestError, match="after 1 attempts"):
        make_client(max_retries=0).chat(MSG, prompt_version="v")
    assert len(server.requests) == 1


def test_bad_request_is_not_retried(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("context too long", status=400))
    with pytest.raises(LLMRequestError, match=r"HTTP 400 from http://127\.0\.0\.1:\d+/v1"):
        make_client().chat(MSG, prompt_version="v")
    assert len(server.requests) == 1


def test_bad_request_in_json_mode_hints_at_the_flag(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply("unknown field response_format", status=400))
    with pytest.raises(LLMRequestError, match=r"response_format.*pass --no-llm-json-mode"):
        make_client().chat(MSG, prompt_version="v", json_mode=True)


@pytest.mark.parametrize(("status", "match"), [(401, "refused the request"), (404, "HTTP 404")])
def test_auth_and_not_found_abort(
    server: FakeChatServer, make_client: MakeClient, status: int, match: str
) -> None:
    server.add(FakeReply(status=status))
    with pytest.raises(LLMUnavailableError, match=match) as info:
        make_client().chat(MSG, prompt_version="v")
    assert SENTINEL_KEY not in str(info.value)
    assert len(server.requests) == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_unreachable_server_fails_fast_with_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    cfg = LLMConfig(
        base_url=url,
        model="m",
        api_key=SENTINEL_KEY,
        use_cache=False,
        max_retries=2,
        backoff_base=0.001,
        backoff_max=0.002,
        timeout=2.0,
    )
    started = time.perf_counter()
    with LLMClient(cfg) as client, pytest.raises(LLMUnavailableError) as info:
        client.chat(MSG, prompt_version="v")
    assert time.perf_counter() - started < 2.0
    message = str(info.value)
    assert f"cannot reach the LLM endpoint {url}" in message
    assert "--llm-base-url" in message
    assert SENTINEL_KEY not in message


def test_missing_usage_falls_back_to_chars_over_4(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply("abcdefghi", usage=None))
    result = make_client().chat(MSG, prompt_version="v")
    assert result.input_tokens == math.ceil(len("What is 2 + 2?") / 4)
    assert result.output_tokens == math.ceil(9 / 4)


def test_cost_from_default_and_custom_price_tables(
    server: FakeChatServer, make_client: MakeClient, tmp_path: Path
) -> None:
    server.add(FakeReply("a", usage=(1000, 200)), FakeReply("b", usage=(1000, 200)))
    client = make_client(use_cache=False)
    client.chat(MSG, prompt_version="v")
    # shipped table: gpt-4o-mini = 0.15 / 0.60 USD per 1M tokens
    assert client.usage_summary()["cost_usd"] == pytest.approx(1000 * 0.15e-6 + 200 * 0.60e-6)
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o-mini: {input: 1.0, output: 2.0}\n")
    custom = make_client(use_cache=False, prices_path=str(prices))
    custom.chat(MSG, prompt_version="v")
    assert custom.usage_summary()["cost_usd"] == pytest.approx(1000 * 1e-6 + 200 * 2e-6)


def test_unknown_model_cost_is_none(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply("a"))
    client = make_client(model="my-local-model")
    client.chat(MSG, prompt_version="v")
    assert client.usage_summary()["cost_usd"] is None


def test_estimate_uses_chars_over_4_and_skips_cached(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply("a"))
    client = make_client()
    client.chat(MSG, prompt_version="v")  # now cached
    calls = [
        PlannedCall(tuple(MSG), "v", expected_output_tokens=7),  # cached: costs nothing
        PlannedCall(({"role": "user", "content": "x" * 10},), "v", expected_output_tokens=7),
        PlannedCall(
            ({"role": "system", "content": "y" * 8}, {"role": "user", "content": "z"}),
            "v",
            expected_output_tokens=5,
        ),
    ]
    estimate = client.estimate(calls)
    assert (estimate.calls, estimate.cached_calls) == (3, 1)
    assert estimate.input_tokens == math.ceil(10 / 4) + math.ceil(8 / 4) + math.ceil(1 / 4)
    assert estimate.output_tokens == 7 + 5
    assert estimate.cost_usd == pytest.approx(6 * 0.15e-6 + 12 * 0.60e-6)
    assert len(server.requests) == 1  # the estimate sent nothing
    assert estimate.to_dict()["new_calls"] == 2


# -- structured output ------------------------------------------------------------------------


def parse_answer(value: Any) -> int:
    if not isinstance(value.get("answer"), int):
        raise InvalidReply("answer: expected an integer")
    return int(value["answer"])


def test_invalid_json_is_retried_with_the_error(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(
        FakeReply("four, I think"), FakeReply('{"answer": "four"}'), FakeReply('{"answer": 4}')
    )
    outcome = make_client(schema_retries=2).chat_json(MSG, parse_answer, prompt_version="v")
    assert (outcome.value, outcome.error, outcome.attempts) == (4, None, 3)
    # Each retry is a repair request: the question, then the rejected reply and its error.
    second, third = server.requests[1].messages, server.requests[2].messages
    assert len(second) == len(third) == 1
    assert second[0]["content"].startswith(MSG[0]["content"] + "\n\nREPAIR:")
    assert "not valid JSON" in second[0]["content"] and "four, I think" in second[0]["content"]
    assert '{"answer": "four"}' in third[0]["content"]
    assert "answer: expected an integer" in third[0]["content"]


def test_schema_budget_exhausted_gives_an_error(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(*[FakeReply("nope")] * 2)
    outcome = make_client(schema_retries=1).chat_json(MSG, parse_answer, prompt_version="v")
    assert outcome.value is None
    assert outcome.error is not None and outcome.error.startswith("invalid reply after 2 attempts")
    assert len(server.requests) == 2
    # The rerun replays the same conversation from the cache: same outcome, no request.
    again = make_client(schema_retries=1).chat_json(MSG, parse_answer, prompt_version="v")
    assert again == outcome
    assert len(server.requests) == 2


def test_fenced_json_is_accepted(server: FakeChatServer, make_client: MakeClient) -> None:
    server.add(FakeReply('```json\n{"answer": 4}\n```'))
    assert make_client().chat_json(MSG, parse_answer, prompt_version="v").value == 4


def test_request_failure_becomes_an_outcome_error(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply(status=400))
    outcome = make_client().chat_json(MSG, parse_answer, prompt_version="v")
    assert outcome.value is None and outcome.error is not None
    assert outcome.error.startswith("request failed: HTTP 400")


# -- concurrency ------------------------------------------------------------------------------


class InFlight:
    """A responder that echoes the prompt and records the peak number of parallel requests."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.current = self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> FakeReply:
        with self.lock:
            self.current += 1
            self.peak = max(self.peak, self.current)
        time.sleep(self.delay)
        with self.lock:
            self.current -= 1
        return FakeReply("echo:" + request.messages[-1]["content"])


def test_map_is_bounded_ordered_and_reports_progress(tmp_path: Path) -> None:
    responder = InFlight()
    progress: list[tuple[int, int]] = []
    with FakeChatServer(responder=responder) as srv:
        cfg = LLMConfig(base_url=srv.base_url, model="m", use_cache=False, max_concurrency=3)
        with LLMClient(cfg) as client:
            prompts = [f"p{i}" for i in range(9)]
            results = client.map(
                lambda p: client.chat([{"role": "user", "content": p}], prompt_version="v").text,
                prompts,
                lambda done, total: progress.append((done, total)),
            )
    assert results == [f"echo:p{i}" for i in range(9)]
    assert 2 <= responder.peak <= 3
    assert progress == [(i, 9) for i in range(1, 10)]


def test_unavailable_endpoint_aborts_the_batch(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(*[FakeReply(status=401)] * 20)
    client = make_client(max_concurrency=1)
    with pytest.raises(LLMUnavailableError):
        client.map(
            lambda p: client.chat([{"role": "user", "content": p}], prompt_version="v"),
            [f"p{i}" for i in range(20)],
        )
    assert len(server.requests) < 20  # the rest was cancelled


def _wait_for_workers() -> None:
    deadline = time.monotonic() + 5
    while any(t.name.startswith("ragaudit-llm") for t in threading.enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_interrupt_keeps_completed_calls_in_the_cache(tmp_path: Path) -> None:
    cache = str(tmp_path / "llm.sqlite")
    prompts = [f"p{i}" for i in range(6)]
    with FakeChatServer(responder=InFlight(delay=0.01)) as srv:
        cfg = LLMConfig(base_url=srv.base_url, model="m", cache_path=cache, max_concurrency=1)

        def interrupt_after_two(done: int, total: int) -> None:
            if done == 2:
                raise KeyboardInterrupt

        with LLMClient(cfg) as client:
            ask = lambda p: client.chat([{"role": "user", "content": p}], prompt_version="v")  # noqa: E731
            with pytest.raises(KeyboardInterrupt):
                client.map(ask, prompts, interrupt_after_two)
            _wait_for_workers()
        first_run = len(srv.requests)
        assert 2 <= first_run < len(prompts)
        with LLMClient(cfg) as client:
            ask = lambda p: client.chat([{"role": "user", "content": p}], prompt_version="v")  # noqa: E731
            results = client.map(ask, prompts)
            assert client.usage_summary()["cache_hits"] == first_run
        # nothing was paid for twice
        assert len(srv.requests) == len(prompts)
        assert sorted(r.messages[-1]["content"] for r in srv.requests) == prompts
    assert [r.text for r in results] == [f"echo:{p}" for p in prompts]


def test_usage_summary_is_json_and_secret_free(
    server: FakeChatServer, make_client: MakeClient
) -> None:
    server.add(FakeReply("a"))
    client = make_client()
    client.chat(MSG, prompt_version="v")
    text = json.dumps(client.usage_summary())
    assert SENTINEL_KEY not in text
    assert PriceTable.load().lookup("gpt-4o-mini") is not None


def test_connection_lost_after_success_uses_the_full_budget(
    make_client: MakeClient, server: FakeChatServer, sleeps: SleepRecorder
) -> None:
    server.add(FakeReply("first"))
    client = make_client(max_retries=3)
    assert client.chat(MSG, prompt_version="v").text == "first"
    server.stop()
    with pytest.raises(LLMUnavailableError, match="cannot reach the LLM endpoint"):
        client.chat([{"role": "user", "content": "again"}], prompt_version="v")
    assert len(sleeps.waits) == 3  # all retries used; before any success only one is


def test_never_reached_endpoint_retries_once(tmp_path: Path, sleeps: SleepRecorder) -> None:
    cfg = LLMConfig(
        base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m", use_cache=False, max_retries=4
    )
    with LLMClient(cfg, sleep=sleeps) as client, pytest.raises(LLMUnavailableError):
        client.chat(MSG, prompt_version="v")
    assert len(sleeps.waits) == 1


def test_fake_server_rejects_unknown_routes(server: FakeChatServer) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(server.base_url + "/embeddings", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request)
    assert info.value.code == 404
    info.value.close()
