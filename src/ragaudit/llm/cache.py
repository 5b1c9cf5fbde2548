"""A persistent sqlite cache of chat completions, so that a rerun costs nothing.

The key is a SHA-256 over the canonical JSON of everything that determines a reply: endpoint,
model, prompt version, the full message list and the sampling parameters including the repeat
index (so ``judge_repeats=3`` makes three distinct entries).  The API key is never part of the
key or the stored row.  Each completed call is committed at once, so an interrupted run keeps
everything it paid for.  The database runs in WAL mode; one connection is shared by all threads
behind a lock (sqlite work is microseconds next to an HTTP round trip).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.exceptions import InputError

__all__ = ["CacheStats", "CachedReply", "LLMCache", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT
)
"""


def cache_key(
    *,
    endpoint: str,
    model: str,
    prompt_version: str,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
) -> str:
    """SHA-256 hex digest identifying one request.

    ``key = sha256(json.dumps([endpoint, model, prompt_version, messages, params],
    sort_keys=True, separators=(",", ":")))``.

    Examples
    --------
    >>> k1 = cache_key(endpoint="e", model="m", prompt_version="v1",
    ...                messages=[{"role": "user", "content": "hi"}], params={"repeat": 0})
    >>> k2 = cache_key(endpoint="e", model="m", prompt_version="v1",
    ...                messages=[{"role": "user", "content": "hi"}], params={"repeat": 1})
    >>> len(k1), k1 == k2
    (64, False)
    """
    payload = json.dumps(
        [endpoint, model, prompt_version, list(messages), dict(params)],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    """One stored completion."""

    text: str
    input_tokens: int
    output_tokens: int
    finish_reason: str | None


@dataclass(frozen=True)
class CacheStats:
    """What :meth:`LLMCache.stats` reports."""

    path: str
    entries: int
    size_bytes: int
    input_tokens: int
    output_tokens: int
    by_model: dict[str, int]
    by_prompt_version: dict[str, int]


class LLMCache:
    """Thread-safe persistent cache of chat completions.

    Parameters
    ----------
    path : str or path-like
        The sqlite file; parent directories are created, and a new file is created user-only
        (mode 0600, as are sqlite's ``-wal`` and ``-shm`` files, which copy its mode): it
        holds replies, never keys, but replies can quote private documents.

    Examples
    --------
    >>> import tempfile, os
    >>> cache = LLMCache(os.path.join(tempfile.mkdtemp(), "llm.sqlite"))
    >>> cache.put("k", endpoint="e", model="m", prompt_version="v1",
    ...           reply=CachedReply("{}", 10, 2, "stop"))
    >>> cache.get("k").output_tokens, cache.get("missing")
    (2, None)
    >>> cache.stats().entries
    1
    >>> cache.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._conn = sqlite3.connect(
                str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"{self.path}: cannot open the LLM cache: {exc}") from exc
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason "
                "FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        return None if row is None else CachedReply(row[0], row[1], row[2], row[3])

    def put(
        self, key: str, *, endpoint: str, model: str, prompt_version: str, reply: CachedReply
    ) -> None:
        """Store (and immediately commit) one reply."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    endpoint,
                    model,
                    prompt_version,
                    reply.text,
                    reply.input_tokens,
                    reply.output_tokens,
                    reply.finish_reason,
                ),
            )

    def __contains__(self, key: object) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()
        return int(count)

    def stats(self) -> CacheStats:
        """Entry counts and the tokens the cached replies originally cost."""
        with self._lock:
            entries, input_tokens, output_tokens = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), "
                "COALESCE(SUM(output_tokens), 0) FROM completions"
            ).fetchone()
            by_model = dict(
                self._conn.execute(
                    "SELECT model, COUNT(*) FROM completions GROUP BY model ORDER BY model"
                ).fetchall()
            )
            by_version = dict(
                self._conn.execute(
                    "SELECT prompt_version, COUNT(*) FROM completions "
                    "GROUP BY prompt_version ORDER BY prompt_version"
                ).fetchall()
            )
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
            if p.exists()
        )
        return CacheStats(
            path=str(self.path),
            entries=int(entries),
            size_bytes=int(size),
            input_tokens=int(input_tokens),
            output_tokens=int(output_tokens),
            by_model=by_model,
            by_prompt_version=by_version,
        )

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()
            self._conn.execute("DELETE FROM completions")
            self._conn.execute("VACUUM")
        return int(count)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
