"""Throughput of the LLM client against a loopback chat-completions server with fixed latency.

The scripted server (:class:`ragaudit.llm.testing.FakeChatServer`) runs in its own process and
answers every request after a fixed delay (200 ms by default), so the client's CPU time is
measured alone.  For each concurrency ``c`` the client sends ``n`` distinct requests through
:meth:`LLMClient.map` (with the sqlite cache on, as a real run has it) and the script reports:

* throughput (requests per second) against the ideal ``c / latency``: the efficiency target is
  at least 80% up to ``c = 32``;
* the client's CPU time per request (user + system of this process), which says whether two
  cores could ever be the bottleneck;
* then the time of 10,000 cache hits through :meth:`LLMClient.chat` (target: under 1 s).

Each concurrency level is run ``--repeats`` times; the table gives the median and the range
(the machine may be shared).

Usage::

    uv run python benchmarks/bench_llm.py                 # 200 ms, c = 1, 8, 32, 64
    uv run python benchmarks/bench_llm.py --latency 0.05 --repeats 5
    uv run python benchmarks/bench_llm.py --repeats 5 --readme   # also splice README.md

This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
from typing import Any

from _readme import measured, splice, start

from ragaudit.llm import LLMClient, LLMConfig
from ragaudit.llm.cache import CachedReply

LEVELS = (1, 8, 32, 64)


def _serve(latency: float, ready: Any, stop: Any) -> None:
    """The server process: answer every request after ``latency`` seconds."""
    from ragaudit.llm.testing import FakeChatServer, FakeReply

    reply = FakeReply("The handbook says 30 days [1].", delay=latency, usage=(120, 9))
    with FakeChatServer(responder=lambda request: reply) as server:
        ready.put(server.base_url)
        stop.wait()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _client(base_url: str, cache_dir: str, concurrency: int) -> LLMClient:
    config = LLMConfig(
        base_url=base_url,
        model="bench-model",
        api_key="bench",
        max_concurrency=concurrency,
        timeout=30.0,
        max_retries=0,
        cache_path=os.path.join(cache_dir, "llm.sqlite"),
    )
    return LLMClient(config)


def one_level(base_url: str, concurrency: int, n: int, tag: str) -> tuple[float, float]:
    """Wall seconds and client CPU seconds for ``n`` fresh requests at ``concurrency``."""
    with tempfile.TemporaryDirectory() as cache_dir:
        client = _client(base_url, cache_dir, concurrency)
        messages = [[{"role": "user", "content": f"{tag} question {i}"}] for i in range(n)]
        client.chat(  # warm the connection pool and the lazy imports outside the timing
            [{"role": "user", "content": f"{tag} warm-up"}], prompt_version="bench"
        )
        cpu0, wall0 = _cpu(), time.perf_counter()
        replies = client.map(lambda m: client.chat(m, prompt_version="bench"), messages)
        wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
        client.close()
    assert all(r.text and not r.cached for r in replies)
    return wall, cpu


def cache_hits(n: int) -> tuple[float, float]:
    """Seconds and CPU seconds for ``n`` sequential cache hits through ``LLMClient.chat``."""
    with tempfile.TemporaryDirectory() as cache_dir:
        client = _client("http://127.0.0.1:9/v1", cache_dir, 8)
        assert client.cache is not None
        messages = [[{"role": "user", "content": f"cached question {i}"}] for i in range(n)]
        for m in messages:
            client.cache.put(
                client.key_for(m, "bench"),
                endpoint=client.endpoint,
                model=client.model,
                prompt_version="bench",
                reply=CachedReply("The handbook says 30 days [1].", 120, 9, "stop"),
            )
        cpu0, wall0 = _cpu(), time.perf_counter()
        hits = [client.chat(m, prompt_version="bench") for m in messages]
        wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
        client.close()
    assert all(h.cached for h in hits)
    return wall, cpu


def _span(values: list[float], fmt: str) -> str:
    med = statistics.median(values)
    return f"{med:{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server delay, seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hits", type=int, default=10_000)
    parser.add_argument("--readme", action="store_true", help="also write the table into README.md")
    args = parser.parse_args(argv)

    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(args.latency, ready, stop), daemon=True)
    server.start()
    base_url = ready.get(timeout=30)
    started, load = start(f"bench_llm  latency {args.latency * 1000:.0f} ms")
    table = [
        "| concurrency | requests | ideal req/s | measured req/s | efficiency | "
        "client CPU ms/request |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(table))
    try:
        for c in LEVELS:
            n = 16 if c == 1 else 8 * c
            ideal = c / args.latency
            rates, effs, cpus = [], [], []
            for r in range(args.repeats):
                wall, cpu = one_level(base_url, c, n, f"c{c}r{r}")
                rates.append(n / wall)
                effs.append(100 * n / wall / ideal)
                cpus.append(1000 * cpu / n)
            table.append(
                f"| {c} | {n} | {ideal:.1f} | {_span(rates, '.1f')} | "
                f"{_span(effs, '.0f')} % | {_span(cpus, '.2f')} |"
            )
            print(table[-1], flush=True)
        walls, hit_cpus = [], []
        for _ in range(args.repeats):
            wall, cpu = cache_hits(args.hits)
            walls.append(wall)
            hit_cpus.append(cpu)
        hits_line = (
            f"{args.hits:,} cache hits through `LLMClient.chat`: {_span(walls, '.2f')} s wall, "
            f"{_span(hit_cpus, '.2f')} s CPU (target < 1 s)."
        )
        print(hits_line)
    finally:
        stop.set()
        server.join(timeout=10)
    summary = "\n".join([
        f"{measured(started, load)}  `{' '.join(['bench_llm.py', *(argv or sys.argv[1:])])}`: "
        f"server latency {args.latency * 1000:.0f} ms (separate process), {args.repeats} "
        "repeats per level, median (min-max).",
        "",
        *table,
        "",
        hits_line,
    ])  # fmt: skip
    print("\n## summary\n\n" + summary + "\n")
    if args.readme:
        splice("bench_llm", summary)
        print("README.md updated (between the <!-- bench_llm --> markers)")


if __name__ == "__main__":
    main()
