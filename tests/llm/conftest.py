"""Fixtures for the LLM layer: a scripted local chat server and clients pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragaudit.llm import LLMClient, LLMConfig
from ragaudit.llm.testing import FakeChatServer

SENTINEL_KEY = "sk-SENTINEL-never-write-me-0123456789"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may see the developer's real endpoint, key or cache."""
    for name in (
        "RAGAUDIT_LLM_BASE_URL",
        "OPENAI_BASE_URL",
        "RAGAUDIT_LLM_MODEL",
        "RAGAUDIT_LLM_API_KEY",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "default-cache"))


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer() as fake:
        yield fake


class SleepRecorder:
    """Stands in for time.sleep: records the backoff waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def make_client(
    server: FakeChatServer, tmp_path: Path, sleeps: SleepRecorder
) -> Iterator[Callable[..., LLMClient]]:
    """Build clients against the fake server with tiny timeouts and a per-test cache."""
    clients: list[LLMClient] = []

    def build(**overrides: Any) -> LLMClient:
        settings: dict[str, Any] = {
            "base_url": server.base_url,
            "model": "gpt-4o-mini",
            "api_key": SENTINEL_KEY,
            "timeout": 2.0,
            "max_retries": 2,
            "backoff_base": 0.001,
            "backoff_max": 0.01,
            "cache_path": str(tmp_path / "cache" / "llm.sqlite"),
        }
        settings.update(overrides)
        client = LLMClient(LLMConfig(**settings), sleep=sleeps)
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()
