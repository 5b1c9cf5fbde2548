"""The LLM SDKs stay optional: nothing imports them eagerly, and their absence is explained."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragaudit.exceptions import MissingExtraError
from ragaudit.llm import LLMClient, LLMConfig


def test_importing_ragaudit_does_not_import_openai_or_pydantic() -> None:
    code = (
        "import sys, importlib\n"
        "for name in ['ragaudit.llm', 'ragaudit.judges.llm', 'ragaudit.judges.schemas',\n"
        "             'ragaudit.pipeline.llm_generator', 'ragaudit.labels.llm',\n"
        "             'ragaudit.cli.cache', 'ragaudit.cli.judge', 'ragaudit.llm.testing']:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in ('openai', 'pydantic') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_openai_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", use_cache=False)
    with LLMClient(cfg) as client, pytest.raises(MissingExtraError, match=r"ragaudit\[llm\]"):
        client.chat([{"role": "user", "content": "x"}], prompt_version="v")


def test_missing_pydantic_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragaudit.judges import schemas

    schemas.models.cache_clear()
    monkeypatch.setitem(sys.modules, "pydantic", None)
    try:
        with pytest.raises(MissingExtraError, match=r"the LLM judge stage needs .*'pydantic'"):
            schemas.parse_relevance({"score": 3})
    finally:
        schemas.models.cache_clear()
