"""Secrets never reach a stored error, the saved run or the cache; the cache is user-only;
judge repeats are independent requests."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from ragaudit.judges.llm import JudgeItem, LLMJudges
from ragaudit.llm import LLMCache, LLMClient, LLMConfig
from ragaudit.llm.cache import CachedReply
from ragaudit.llm.config import redact_url
from ragaudit.llm.replies import LLMRequestError
from ragaudit.llm.testing import FakeChatServer, FakeReply
from ragaudit.llm.transport import redact_secrets

from .conftest import SENTINEL_KEY
from .test_run_integration import (
    FaultyModel,
    by_id,
    env,  # noqa: F401 - fixture
    invoke,
    load,
    model,  # noqa: F401 - fixture
    run_args,
)

MSG = [{"role": "user", "content": "hi"}]
MakeClient = Callable[..., LLMClient]


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("API key provided: sk-abc...wxyz", [], "API key provided: sk-abc...wxyz"),
        (f"Incorrect API key provided: {SENTINEL_KEY}.", [SENTINEL_KEY],
         "Incorrect API key provided: [redacted]."),
        ("invalid key my-own-key-1", ["my-own-key-1"], "invalid key [redacted]"),
        ("header Authorization: Bearer eyJhbGciOi.abc.def was rejected", [],
         "header Authorization: Bearer [redacted] was rejected"),
        ("GET https://h/v1?api-key=0123abcd&api-version=1", [],
         "GET https://h/v1?api-key=[redacted]&api-version=1"),
        ('{"api_key": "zzz-123"}', [], '{"api_key": "[redacted]"}'),
        ("key sk-proj-ABCDEFGHIJKLMNOP leaked", [], "key sk-[redacted] leaked"),
        ("nothing secret here: 4 tokens", ["abc"], "nothing secret here: 4 tokens"),
    ],
)  # fmt: skip
def test_redact_secrets(text: str, secrets: list[str], expected: str) -> None:
    assert redact_secrets(text, secrets) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://u:p@h:8000/v1/", "http://h:8000/v1"),
        ("https://h/openai/v1?api-key=s3cr3t", "https://h/openai/v1?api-key=[redacted]"),
        ("https://h/v1?a=1&b=", "https://h/v1?a=[redacted]&b=[redacted]"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


@pytest.mark.parametrize("status", [400, 500])
def test_a_key_echoed_in_an_error_body_is_redacted(
    status: int, server: FakeChatServer, make_client: MakeClient
) -> None:
    echo = f"Incorrect API key provided: {SENTINEL_KEY} (Authorization: Bearer {SENTINEL_KEY})"
    server.add(*[FakeReply(echo, status=status)] * 3)
    with pytest.raises(LLMRequestError) as failure:
        make_client(max_retries=0).chat(MSG, prompt_version="v")
    assert SENTINEL_KEY not in str(failure.value)
    if status == 400:  # a 4xx quotes the server's message; a 5xx only its status
        assert "Incorrect API key provided: [redacted]" in str(failure.value)


def test_an_echoed_key_is_not_stored_in_the_saved_run(
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    echo = FakeReply(f"bad request; you sent key {SENTINEL_KEY}", status=400)
    model.faults[("generator", "q3")] = [echo]
    model.faults[("relevance", "q1")] = [echo]
    result = invoke(run_args(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    rows = by_id(load(tmp_path / "out" / "llm.json"))
    assert "[redacted]" in rows["q3"]["error"]
    assert "[redacted]" in rows["q1"]["judges"]["judge_errors"]["relevance"]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SENTINEL_KEY.encode() not in path.read_bytes(), path
    assert SENTINEL_KEY not in result.output


def test_a_key_in_the_base_url_query_is_not_stored(
    server: FakeChatServer,
    model: FaultyModel,  # noqa: F811
    env: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "query-secret-0123456789"
    monkeypatch.setenv("RAGAUDIT_LLM_BASE_URL", f"{server.base_url}?api-key={secret}")
    result = invoke(run_args(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert server.requests and all("api-key=" + secret in r.path for r in server.requests)
    data = load(tmp_path / "out" / "llm.json")
    assert data["config"]["llm_generator"]["endpoint"].endswith("?api-key=[redacted]")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "llm.sqlite" for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in result.output


def test_the_cache_file_is_created_user_only(tmp_path: Path) -> None:
    with LLMCache(tmp_path / "c" / "llm.sqlite") as cache:
        cache.put(
            "k", endpoint="e", model="m", prompt_version="v", reply=CachedReply("x", 1, 1, None)
        )
    for path in (tmp_path / "c").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@pytest.mark.parametrize("seed", [0, None])
def test_judge_repeats_are_distinct_requests_then_all_cached(
    seed: int | None, server: FakeChatServer, make_client: MakeClient
) -> None:
    repeats = 4
    server._responder = lambda request: FakeReply('{"score": 4}')
    item = JudgeItem("q1", "How long?", "30 days [1].", ["Refunds take 30 days."],
                     reference_answer="30 days.")  # fmt: skip
    client = make_client(seed=seed)
    LLMJudges(client, judges=["relevance"], repeats=repeats).judge([item])
    assert len(server.requests) == repeats
    assert client.cache is not None and len(client.cache) == repeats  # one entry per repeat
    seeds = [r.body.get("seed") for r in server.requests]
    assert sorted(seeds, key=str) == ([0, 1, 2, 3] if seed == 0 else [None] * repeats)
    rerun = make_client(seed=seed)
    LLMJudges(rerun, judges=["relevance"], repeats=repeats).judge([item])
    assert len(server.requests) == repeats  # zero new requests
    assert rerun.usage_summary()["cache_hits"] == repeats


def test_config_secrets_lists_key_and_url_parts() -> None:
    cfg = LLMConfig(base_url="http://bob:pw-9876@h/v1?api-key=qk-1234", model="m", api_key="k-55")
    assert cfg.secrets == ("k-55", "pw-9876", "qk-1234")
