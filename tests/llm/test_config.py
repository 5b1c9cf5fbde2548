"""Configuration from flags and environment; clear messages when an endpoint is missing."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ragaudit.cli._llm_options import add_llm_options, llm_config_from_cli
from ragaudit.exceptions import InputError
from ragaudit.llm.config import LLMConfig, default_cache_path, redact_url


def test_flags_win_over_environment() -> None:
    env = {
        "RAGAUDIT_LLM_BASE_URL": "http://env/v1",
        "OPENAI_BASE_URL": "http://openai-env/v1",
        "RAGAUDIT_LLM_MODEL": "env-model",
    }
    cfg = LLMConfig.from_env_and_flags(env, base_url="http://flag/v1", model=None)
    assert (cfg.base_url, cfg.model) == ("http://flag/v1", "env-model")


def test_environment_order_and_key_sources() -> None:
    cfg = LLMConfig.from_env_and_flags(
        {"OPENAI_BASE_URL": "http://openai-env/v1", "OPENAI_API_KEY": "k-openai"}
    )
    assert cfg.base_url == "http://openai-env/v1"
    assert cfg.api_key == "k-openai"
    cfg = LLMConfig.from_env_and_flags(
        {"RAGAUDIT_LLM_API_KEY": "k-ragaudit", "OPENAI_API_KEY": "k-openai"}
    )
    assert cfg.api_key == "k-ragaudit"


def test_api_key_flag_is_refused() -> None:
    with pytest.raises(InputError, match="read from the environment only"):
        LLMConfig.from_env_and_flags({}, api_key="sk-x")


def test_unknown_option_is_named() -> None:
    with pytest.raises(InputError, match=r"unknown option.*temprature"):
        LLMConfig.from_env_and_flags({}, temprature=0.5)


def test_key_is_hidden_from_repr_and_public_dict() -> None:
    cfg = LLMConfig(base_url="http://user:pw@h:1/v1/", model="m", api_key="sk-hidden")
    assert "sk-hidden" not in repr(cfg)
    public = cfg.to_public_dict()
    assert "api_key" not in public
    assert "sk-hidden" not in str(public)
    assert public["base_url"] == "http://h:1/v1"
    assert "pw" not in str(public)


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (LLMConfig(model="m"), r"pass --llm-base-url or set RAGAUDIT_LLM_BASE_URL"),
        (LLMConfig(base_url="http://h/v1"), r"pass --llm-model or set RAGAUDIT_LLM_MODEL"),
        (LLMConfig(base_url="h:8000/v1", model="m"), r"expected an http:// or https:// URL"),
    ],
)
def test_incomplete_endpoint_names_flag_and_variable(config: LLMConfig, match: str) -> None:
    with pytest.raises(InputError, match=match):
        config.require_endpoint("the LLM judges")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("temperature", 3.0, r"temperature: expected a number in \[0, 2\], found 3.0"),
        ("timeout", 0.0, "timeout: expected seconds > 0"),
        ("max_concurrency", 0, "max_concurrency: expected an integer >= 1"),
        ("max_retries", -1, "max_retries: expected an integer >= 0"),
        ("schema_retries", -1, "schema_retries: expected an integer >= 0"),
        ("max_tokens", 0, "max_tokens: expected an integer >= 1"),
    ],
)
def test_invalid_values(field: str, value: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        LLMConfig(**{field: value})  # type: ignore[arg-type]


def test_default_cache_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "llm.sqlite"
    assert default_cache_path(tmp_path / "x") == tmp_path / "x" / "llm.sqlite"
    monkeypatch.delenv("RAGAUDIT_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "ragaudit" / "llm.sqlite"


def test_redact_url() -> None:
    assert redact_url("https://a:b@example.com/v1/") == "https://example.com/v1"
    assert redact_url("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1"


def test_cli_options_round_trip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGAUDIT_LLM_MODEL", "env-model")
    seen: dict[str, LLMConfig] = {}

    @click.command()
    @add_llm_options
    def cmd(**options: object) -> None:
        seen["config"] = llm_config_from_cli(**options)  # type: ignore[arg-type]
        seen["repeats"] = options["judge_repeats"]  # type: ignore[assignment]

    result = CliRunner().invoke(
        cmd,
        [
            "--llm-base-url", "http://h/v1", "--llm-timeout", "5", "--llm-concurrency", "3",
            "--no-cache", "--cache-dir", str(tmp_path), "--judge-repeats", "3",
            "--no-llm-json-mode",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    cfg = seen["config"]
    assert (cfg.base_url, cfg.model, cfg.timeout, cfg.max_concurrency) == (
        "http://h/v1", "env-model", 5.0, 3,
    )  # fmt: skip
    assert (cfg.use_cache, cfg.json_mode, cfg.temperature) == (False, False, 0.0)
    assert cfg.cache_path == str(tmp_path / "llm.sqlite")
    assert seen["repeats"] == 3
