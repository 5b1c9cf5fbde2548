"""A persistent sqlite cache of chat completions, so that a rerun costs nothing.

The key is a SHA-256 over the canonical JSON of everything that determines a reply: endpoint,
model, prompt version, the full message list and the sampling parameters including the repeat
index (so ``judge_repeats=3`` makes three distinct entries).  The API key is never part of the
key or the stored row.  Each completed call is committed at once, so an interrupted run keeps
everything it paid for.  The database runs in WAL mode; one connection is shared by all threads
behind a lock (sqlite work is microseconds next to an HTTP round trip).

The file is checked on open: a ``completions`` table with other columns (another program's
database) or a schema version newer than :data:`SCHEMA_VERSION` is refused with a one-line
:class:`~ragaudit.exceptions.InputError` naming the file; the file is left as it is.  Another
process holding the database locked is waited for at most :data:`LOCK_TIMEOUT` seconds.  A
reply that cannot be stored within that wait is never lost: it is kept in memory (and
served from there), written when the lock frees, and at :meth:`LLMCache.close` either stored
or written to ``<cache>.pending.jsonl`` (mode 0600), which the next open loads into the
cache.  Each case is announced once as a :class:`~ragaudit.exceptions.RagauditWarning`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.exceptions import InputError, RagauditWarning

__all__ = ["LOCK_TIMEOUT", "SCHEMA_VERSION", "CacheStats", "CachedReply", "LLMCache", "cache_key"]

#: Seconds a lock held by another process is waited for (opening, and storing one reply).
LOCK_TIMEOUT = 10.0
#: ``PRAGMA user_version`` of the cache files this version writes.
SCHEMA_VERSION = 1
_COLUMNS = (
    "key", "endpoint", "model", "prompt_version", "text", "input_tokens", "output_tokens",
    "finish_reason",
)  # fmt: skip
_RETRY_TIMEOUT = 0.05  # while replies wait in memory, each later store tries this long only

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

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = float(lock_timeout)
        self._pending: dict[str, tuple[str, str, str, CachedReply]] = {}
        self._warned = False  # the lock conflict is announced once
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            self._conn = sqlite3.connect(
                str(self.path),
                timeout=self.lock_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            self._check_schema()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
            if self._conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                raise InputError(
                    f"{self.path}: expected the LLM cache to be free within "
                    f"{self.lock_timeout:g} s, found it locked by another process all along; "
                    "wait for it to finish, or pass --cache-dir elsewhere or --no-cache"
                ) from None
            raise InputError(f"{self.path}: cannot open the LLM cache: {exc}") from None
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"{self.path}: cannot open the LLM cache: {exc}") from None
        self._load_spilled()

    def _check_schema(self) -> None:
        """Refuse another program's database (or a newer ragaudit's) before touching it."""
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise InputError(
                f"{self.path}: expected an LLM cache of schema version <= {SCHEMA_VERSION}, "
                f"found version {version} (written by a newer ragaudit); upgrade ragaudit, or "
                "pass --cache-dir elsewhere"
            )
        columns = tuple(
            row[1] for row in self._conn.execute("PRAGMA table_info(completions)").fetchall()
        )
        if columns and columns != _COLUMNS:
            raise InputError(
                f"{self.path}: expected a ragaudit LLM cache (table completions with columns "
                f"{', '.join(_COLUMNS)}), found a table completions with columns "
                f"{', '.join(columns)}; it was left as it is: pass --cache-dir elsewhere, or "
                "move the file aside"
            )

    @property
    def spill_path(self) -> Path:
        """Where replies that could not be stored at :meth:`close` are written."""
        return self.path.with_name(self.path.name + ".pending.jsonl")

    def _load_spilled(self) -> None:
        """Store the replies an earlier run left in :attr:`spill_path`, then remove it."""
        spill = self.spill_path
        if not spill.exists():
            return
        try:
            lines = spill.read_bytes().split(b"\n")[:-1]  # a torn last line: cut short
        except OSError:
            return
        with contextlib.suppress(sqlite3.OperationalError):  # still locked: next time
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                reply = CachedReply(row["text"], row["input_tokens"], row["output_tokens"],
                                    row.get("finish_reason"))  # fmt: skip
                self._store(row["key"], row["endpoint"], row["model"], row["prompt_version"],
                            reply)  # fmt: skip
            spill.unlink()

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or ``None``."""
        with self._lock:
            if key in self._pending:
                return self._pending[key][3]
            row = self._conn.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason "
                "FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        return None if row is None else CachedReply(row[0], row[1], row[2], row[3])

    def put(
        self, key: str, *, endpoint: str, model: str, prompt_version: str, reply: CachedReply
    ) -> None:
        """Store (and immediately commit) one reply.

        If another process holds the database locked beyond :attr:`lock_timeout`, the reply
        is kept in memory instead (never lost, never a traceback): it is stored with the next
        reply that gets through, or at :meth:`close`.
        """
        with self._lock:
            self._pending[key] = (endpoint, model, prompt_version, reply)
            self._flush_pending()

    def _store(
        self, key: str, endpoint: str, model: str, prompt_version: str, reply: CachedReply
    ) -> None:
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

    def _flush_pending(self, *, wait: bool = False) -> bool:
        """Store the replies kept in memory (caller holds ``self._lock``); True when none is
        left.  The first lock conflict waits :attr:`lock_timeout`; while replies are waiting,
        each later try waits only briefly, so a long-held lock costs one wait, not one per
        call."""
        if not self._pending:
            return True
        waited = len(self._pending) > 1 and not wait
        timeout = _RETRY_TIMEOUT if waited else self.lock_timeout
        self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        try:
            for key, (endpoint, model, version, reply) in list(self._pending.items()):
                self._store(key, endpoint, model, version, reply)
                del self._pending[key]
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc):
                raise
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"{self.path}: the LLM cache is locked by another process (waited "
                    f"{timeout:g} s); replies are kept in memory and stored when it frees, or "
                    f"at the end in {self.spill_path.name}, so nothing paid for is lost",
                    RagauditWarning,
                    stacklevel=4,
                )
            return False
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute(f"PRAGMA busy_timeout={int(self.lock_timeout * 1000)}")
        return True

    def _spill(self) -> None:
        """Append the replies still in memory to :attr:`spill_path` (0600, fsync'ed)."""
        from ragaudit._io import append_text

        lines = "".join(
            json.dumps(
                {"key": key, "endpoint": endpoint, "model": model, "prompt_version": version,
                 "text": reply.text, "input_tokens": reply.input_tokens,
                 "output_tokens": reply.output_tokens, "finish_reason": reply.finish_reason},
                ensure_ascii=False,
            ) + "\n"
            for key, (endpoint, model, version, reply) in self._pending.items()
        )  # fmt: skip
        if not self.spill_path.exists():
            os.close(os.open(self.spill_path, os.O_CREAT | os.O_WRONLY, 0o600))
        append_text(self.spill_path, lines)
        warnings.warn(
            f"{self.path}: still locked by another process at the end: {len(self._pending)} "
            f"paid-for replies written to {self.spill_path}; the next run loads them into "
            "the cache",
            RagauditWarning,
            stacklevel=3,
        )
        self._pending.clear()

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
        """Store the replies kept in memory (waiting :attr:`lock_timeout` once more, then
        writing them to :attr:`spill_path`) and close the connection (idempotent)."""
        with self._lock:
            if self._pending:
                with contextlib.suppress(sqlite3.ProgrammingError):  # already closed
                    if not self._flush_pending(wait=True):
                        self._spill()
            self._conn.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    """Whether sqlite gave up waiting for another connection's lock."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text
