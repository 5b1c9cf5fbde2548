"""The sqlite response cache: keys, persistence, WAL, thread safety, stats and clear."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ragaudit.exceptions import InputError
from ragaudit.llm.cache import CachedReply, LLMCache, cache_key

BASE = {
    "endpoint": "http://h/v1",
    "model": "m",
    "prompt_version": "judge-v1",
    "messages": [{"role": "user", "content": "hi"}],
    "params": {"temperature": 0.0, "seed": 0, "repeat": 0},
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("endpoint", "http://other/v1"),
        ("model", "m2"),
        ("prompt_version", "judge-v2"),
        ("messages", [{"role": "user", "content": "hi!"}]),
        ("messages", [{"role": "system", "content": "hi"}]),
        ("params", {"temperature": 0.5, "seed": 0, "repeat": 0}),
        ("params", {"temperature": 0.0, "seed": 1, "repeat": 0}),
        ("params", {"temperature": 0.0, "seed": 0, "repeat": 1}),
    ],
)
def test_every_component_changes_the_key(field: str, value: object) -> None:
    assert cache_key(**BASE) != cache_key(**{**BASE, field: value})  # type: ignore[arg-type]


def test_key_ignores_dict_order() -> None:
    reordered = {**BASE, "params": {"repeat": 0, "seed": 0, "temperature": 0.0}}
    assert cache_key(**BASE) == cache_key(**reordered)  # type: ignore[arg-type]


def test_persists_across_connections_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "llm.sqlite"
    with LLMCache(path) as cache:
        cache.put(
            "k1", endpoint="e", model="m", prompt_version="v", reply=CachedReply("a", 3, 4, "stop")
        )
    with LLMCache(path) as cache:
        assert cache.get("k1") == CachedReply("a", 3, 4, "stop")
        assert "k1" in cache and "k2" not in cache
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "llm.sqlite")
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(50):
                key = f"{t}-{i}"
                cache.put(
                    key,
                    endpoint="e",
                    model="m",
                    prompt_version="v",
                    reply=CachedReply(key, i, 1, None),
                )
                got = cache.get(key)
                assert got is not None and got.text == key
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 400
    cache.close()


def test_stats_and_clear(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "llm.sqlite")
    cache.put(
        "a", endpoint="e", model="m1", prompt_version="v1", reply=CachedReply("x", 10, 2, None)
    )
    cache.put(
        "b", endpoint="e", model="m1", prompt_version="v2", reply=CachedReply("y", 5, 1, None)
    )
    cache.put(
        "c", endpoint="e", model="m2", prompt_version="v1", reply=CachedReply("z", 1, 1, None)
    )
    stats = cache.stats()
    assert (stats.entries, stats.input_tokens, stats.output_tokens) == (3, 16, 4)
    assert stats.by_model == {"m1": 2, "m2": 1}
    assert stats.by_prompt_version == {"v1": 2, "v2": 1}
    assert stats.size_bytes > 0
    assert cache.clear() == 3
    assert len(cache) == 0 and cache.get("a") is None
    cache.close()


def test_unopenable_cache_is_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InputError, match=r"cannot open the LLM cache"):
        LLMCache(blocker / "llm.sqlite")
